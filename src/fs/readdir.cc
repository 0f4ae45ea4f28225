// Directory listing in cookie order (creation order), resumable from any
// cookie even after entries were added or removed.
#include <algorithm>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

FsResult<ReadDirResult> FileSystemImpl::ReadDir(const Credentials& cred, Ino dir, uint64_t cookie,
                                                size_t max_entries, bool with_attrs) {
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
  auto full = [&] { return max_entries != 0 && result.entries.size() >= max_entries; };
  if (cookie < 1) result.entries.push_back({".", dir, S_IFDIR, 1, std::nullopt});
  if (cookie < 2 && !full()) result.entries.push_back({"..", d->parent, S_IFDIR, 2, std::nullopt});
  bool exhausted = false;
  if (!full()) {
    std::string prefix = DirScanPrefix(dir);
    std::string upper = DirScanPrefix(dir + 1);
    rocksdb::Slice upper_slice(upper);
    rocksdb::ReadOptions ro;
    ro.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
    exhausted = true;
    for (it->Seek(DirScanKey(dir, std::max(cookie + 1, kFirstEntryCookie))); it->Valid();
         it->Next()) {
      if (full()) {
        exhausted = false;
        break;
      }
      rocksdb::Slice key = it->key();
      if (key.size() != prefix.size() + 8) return FsError{EIO};
      DirScanValue v;
      if (!DecodeDirScan(std::string_view(it->value().data(), it->value().size()), &v)) {
        return FsError{EIO};
      }
      uint64_t entry_cookie = GetBigEndian64(key.data() + prefix.size());
      result.entries.push_back({std::move(v.name), v.ino, v.type, entry_cookie, std::nullopt});
    }
    if (!it->status().ok()) return EngineError(it->status());
  }
  result.eof = exhausted;
  if (with_attrs) {
    std::vector<DirEntry> kept;
    kept.reserve(result.entries.size());
    for (DirEntry& e : result.entries) {
      FsResult<Attr> a = GetAttrLocking(e.ino);
      if (!a.ok()) {
        if (a.error() == ESTALE) continue;  // removed while we listed
        return a.status();
      }
      e.attr = *a;
      kept.push_back(std::move(e));
    }
    result.entries = std::move(kept);
  }
  return result;
}

}  // namespace pail::fs
