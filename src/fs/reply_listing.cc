#include "fs/reply_listing.h"

namespace pail::fs {

FsResult<ReplyListing> ListForReply(FileSystem& fs, const Credentials& cred, Ino dir,
                                    uint64_t cookie, size_t bytes,
                                    size_t (*price)(std::string_view name), bool with_attrs,
                                    const std::function<void(const DirEntry&)>& add) {
  ReadDirLimit room(bytes, price);
  room.entries = kReadDirBatch;
  ReplyListing listed;
  while (true) {
    FsResult<ReadDirResult> batch = fs.ReadDir(cred, dir, cookie, room, with_attrs);
    if (!batch.ok()) {
      if (listed.entries == 0) return batch.status();
      return listed;
    }
    for (const DirEntry& entry : batch->entries) {
      room.bytes -= price(entry.name);
      cookie = entry.next_cookie;
      add(entry);
    }
    listed.entries += batch->entries.size();
    listed.eof = batch->eof;
    // Fewer than asked and not the end: the reply is full. A room of 0
    // bytes would mean no limit at all.
    if (batch->eof || batch->entries.size() < kReadDirBatch || room.bytes == 0) return listed;
  }
}

}  // namespace pail::fs
