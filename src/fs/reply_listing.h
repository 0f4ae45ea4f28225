// A directory listing sized to one protocol reply.
//
// NFS READDIR(PLUS), 9P Treaddir and FUSE READDIR(PLUS) each fill a reply
// of a size the client chose with the entries that fit, priced as the
// protocol encodes them. ListForReply asks the core for at most
// kReadDirBatch entries at a time, because a DirEntry takes several times
// its wire size and a 1 MiB reply of short names would otherwise be held
// first as tens of thousands of them, and hands each entry to the
// protocol, which only encodes.
#pragma once

#include <functional>
#include <string_view>

#include "fs/filesystem.h"

namespace pail::fs {

struct ReplyListing {
  size_t entries = 0;  // handed to the encoder
  bool eof = false;    // the last of them was the directory's last
};

// Lists `dir` from `cookie` into a reply with room for `bytes` (> 0), each
// entry priced by `price`, calling `add` for every entry in order.
//  - An error of the first batch is returned; nothing was added.
//  - An error of a later batch ends the reply early (not eof): the client
//    asks again from the last cookie it got and meets the error then.
//  - No entries and not eof: the next entry alone does not fit `bytes`,
//    which each protocol answers with its own "too small" error.
FsResult<ReplyListing> ListForReply(FileSystem& fs, const Credentials& cred, Ino dir,
                                    uint64_t cookie, size_t bytes,
                                    size_t (*price)(std::string_view name), bool with_attrs,
                                    const std::function<void(const DirEntry&)>& add);

}  // namespace pail::fs
