// Directory listing in cookie order (creation order), resumable from any
// cookie even after entries were added or removed.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
// A listing's attributes are loaded this many entries at a time: one hold
// of their inodes' locks and one MultiGet for the records the inode cache
// lacks, where a lock and a Get per entry cost most of a READDIRPLUS (a
// 32 KiB reply carries about 200 entries).
constexpr size_t kAttrBatch = 64;
// At most this many entries are reserved ahead for one page.
constexpr uint64_t kMaxReserve = 4096;

// The part of a ReadDirLimit not yet taken by the entries listed.
class ReplyRoom {
 public:
  explicit ReplyRoom(const ReadDirLimit& limit) : limit_(limit) {}

  // Takes room for an entry of this name; false (taking nothing) when the
  // limit has none left for it.
  bool Take(std::string_view name) {
    if (limit_.entries != 0 && entries_ >= limit_.entries) return false;
    const size_t price = Price(name);
    if (limit_.bytes != 0 && bytes_ + price > limit_.bytes) return false;
    ++entries_;
    bytes_ += price;
    return true;
  }
  // An entry taken earlier is left out after all.
  void GiveBack(std::string_view name) {
    --entries_;
    bytes_ -= Price(name);
  }

 private:
  size_t Price(std::string_view name) const {
    return limit_.bytes != 0 ? limit_.entry_bytes(name) : 0;
  }

  const ReadDirLimit& limit_;
  size_t entries_ = 0;
  size_t bytes_ = 0;
};

}  // namespace

FsResult<ReadDirResult> FileSystemImpl::ReadDir(const Credentials& cred, Ino dir, uint64_t cookie,
                                                const ReadDirLimit& limit, bool with_attrs) {
  if (limit.bytes != 0 && limit.entry_bytes == nullptr) return FsError{EINVAL};
  FsResult<InodeRecord> d = LoadStoredInode(dir);
  if (!d.ok()) return d.status();
  if (!d->is_dir()) return FsError{ENOTDIR};
  if (!MayAccess(cred, *d, kMayRead)) return FsError{EACCES};
  // Issued cookies are 1 (.), 2 (..) and those below next_cookie. Anything
  // else is refused rather than read as "start over" (cookie + 1 wraps at
  // 2^64 - 1) or "the end".
  if (cookie > 2 && cookie >= d->next_cookie) return FsError{kErrBadCookie};
  // Attributes of the entries are what stat(dir/name) shows, which needs
  // search permission: a readable but not searchable directory lists names
  // and inode numbers only.
  if (with_attrs && !MayAccess(cred, *d, kMayExec)) with_attrs = false;
  ReadDirResult result;
  // Room for the whole page up front (a READDIRPLUS page is about 200
  // entries): growing the vector entry by entry moved every entry again.
  result.entries.reserve(std::min<uint64_t>(limit.entries != 0 ? limit.entries : d->entries + 2,
                                            kMaxReserve));
  ReplyRoom room(limit);
  bool full = false;
  if (cookie < 1) {
    full = !room.Take(".");
    if (!full) result.entries.push_back({".", dir, S_IFDIR, 1, std::nullopt});
  }
  if (cookie < 2 && !full) {
    full = !room.Take("..");
    if (!full) result.entries.push_back({"..", d->parent, S_IFDIR, 2, std::nullopt});
  }
  std::string prefix = DirScanPrefix(dir);
  std::string upper = DirScanPrefix(dir + 1);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
  const uint64_t start = std::max({cookie + 1, kFirstEntryCookie, d->first_cookie});
  it->Seek(DirScanKey(dir, start));
  size_t unloaded = 0;  // the first entry whose attributes are not loaded yet
  while (true) {
    // The iterator stays on the entry that did not fit: room given back
    // below lets the scan resume with it. (When the dots did not fit, no
    // entry may follow them.)
    for (; !full && it->Valid(); it->Next()) {
      rocksdb::Slice key = it->key();
      if (key.size() != prefix.size() + 8) return FsError{EIO};
      DirScanValue v;
      if (!DecodeDirScan(std::string_view(it->value().data(), it->value().size()), &v)) {
        return FsError{EIO};
      }
      if (!room.Take(v.name)) {
        full = true;
        break;
      }
      uint64_t entry_cookie = GetBigEndian64(key.data() + prefix.size());
      result.entries.push_back({std::move(v.name), v.ino, v.type, entry_cookie, std::nullopt});
    }
    if (!it->status().ok()) return EngineError(it->status());
    if (!with_attrs) break;
    FsStatus loaded = LoadEntryAttrs(result.entries, unloaded);
    if (!loaded.ok()) return loaded;
    // Entries whose inode went away while listing are left out.
    auto gone = std::remove_if(result.entries.begin() + unloaded, result.entries.end(),
                               [&](const DirEntry& e) {
                                 if (e.attr.has_value()) return false;
                                 room.GiveBack(e.name);
                                 return true;
                               });
    const bool gave_back = gone != result.entries.end();
    result.entries.erase(gone, result.entries.end());
    unloaded = result.entries.size();
    if (!full || !gave_back) break;
    full = false;
  }
  result.eof = !full;
  return result;
}

FsStatus FileSystemImpl::LoadEntryAttrs(std::vector<DirEntry>& entries, size_t first) {
  std::vector<Ino> inos;
  std::vector<size_t> stored;  // entries whose record the engine has
  std::vector<uint64_t> tickets;  // their inode cache tickets
  std::vector<std::string> keys;
  std::vector<rocksdb::Slice> key_slices;
  std::vector<rocksdb::PinnableSlice> values(std::min(entries.size() - first, kAttrBatch));
  std::vector<rocksdb::Status> statuses(values.size());
  for (size_t start = first; start < entries.size(); start += kAttrBatch) {
    const size_t end = std::min(entries.size(), start + kAttrBatch);
    inos.clear();
    for (size_t i = start; i < end; ++i) inos.push_back(entries[i].ino);
    // What each entry shows is its inode at one instant under its lock, as
    // GetAttr would show it; the locks are released before the next batch.
    InodeLocks lock(locks_, inos);
    stored.clear();
    tickets.clear();
    keys.clear();
    for (size_t i = start; i < end; ++i) {
      DirEntry& e = entries[i];
      if (e.ino == 0) continue;  // no inode: left without attributes, as a removed one
      if (DirtyFile* f = FindDirty(e.ino)) {
        e.attr = ToAttr(e.ino, f->inode);
        continue;
      }
      if (std::optional<InodeRecord> cached = inode_cache_.Find(e.ino)) {
        e.attr = ToAttr(e.ino, *cached);
        continue;
      }
      stored.push_back(i);
      tickets.push_back(inode_cache_.Ticket(e.ino));
      keys.push_back(InodeKey(e.ino));
    }
    if (keys.empty()) continue;
    key_slices.assign(keys.begin(), keys.end());
    db_->MultiGet(rocksdb::ReadOptions(), meta_, keys.size(), key_slices.data(), values.data(),
                  statuses.data());
    for (size_t k = 0; k < stored.size(); ++k) {
      DirEntry& e = entries[stored[k]];
      if (statuses[k].IsNotFound()) continue;  // removed while we listed
      if (!statuses[k].ok()) return EngineError(statuses[k]);
      InodeRecord r;
      const bool decoded = DecodeInode(std::string_view(values[k].data(), values[k].size()), &r);
      values[k].Reset();
      if (!decoded) {
        spdlog::error("fs: inode {} has a damaged record", e.ino);
        return FsError{EIO};
      }
      inode_cache_.Fill(e.ino, r, tickets[k]);
      e.attr = ToAttr(e.ino, r);
    }
  }
  return {};
}

}  // namespace pail::fs
