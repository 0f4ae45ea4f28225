// NFS file handles: what a client holds for every file it has seen.
//
// A handle is 17 bytes: one format byte (kFileHandleFormat), the inode number
// (8 bytes, big-endian) and its generation (8 bytes, big-endian). Nothing in
// it depends on the server process, so handles stay valid across restarts; a
// handle whose inode is gone, or whose generation differs from the inode's,
// gives NFS3ERR_STALE. Anything that does not parse (wrong length or format)
// gives NFS3ERR_BADHANDLE.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fs/filesystem.h"

namespace pail::nfs {

constexpr uint8_t kFileHandleFormat = 1;
constexpr size_t kFileHandleBytes = 17;
// NFSv3 handles are opaque<64>.
constexpr uint32_t kMaxNfsHandleBytes = 64;

struct FileHandle {
  fs::Ino ino = 0;
  uint64_t generation = 0;
};

std::string EncodeFileHandle(fs::Ino ino, uint64_t generation);
std::optional<FileHandle> DecodeFileHandle(std::string_view bytes);

}  // namespace pail::nfs
