// Extended attributes in the user, trusted and security namespaces.
#include <algorithm>
#include <functional>

#include <spdlog/spdlog.h>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
constexpr std::string_view kCapabilityXattr = "security.capability";

bool HasPrefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// What one attribute adds to its inode's totals.
XattrTotals Share(std::string_view name, size_t value_size) {
  return XattrTotals{name.size() + 1, value_size, 1};
}

XattrTotals Minus(const XattrTotals& a, const XattrTotals& b) {
  // Totals that a damaged record made too small must not wrap around.
  return XattrTotals{a.name_bytes - std::min(a.name_bytes, b.name_bytes),
                     a.value_bytes - std::min(a.value_bytes, b.value_bytes),
                     a.count - std::min(a.count, b.count)};
}

XattrTotals Plus(const XattrTotals& a, const XattrTotals& b) {
  return XattrTotals{a.name_bytes + b.name_bytes, a.value_bytes + b.value_bytes,
                     a.count + b.count};
}

uint64_t Space(const XattrTotals& t) {
  return t.name_bytes + t.value_bytes + t.count * kXattrEntryCost;
}

// A total over its bound refuses only growth: an inode already past a bound
// (set before the bounds existed) may still shrink or replace in place.
bool Exceeds(uint64_t before, uint64_t after, uint64_t bound) {
  return after > bound && after > before;
}

// Calls `visit` with the name of each of the inode's attributes, in order.
rocksdb::Status VisitXattrNames(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta, Ino ino,
                                const std::function<void(std::string_view)>& visit) {
  std::string prefix = XattrPrefix(ino);
  std::string upper = XattrPrefix(ino + 1);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;  // stops the seek at this inode's range
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, meta));
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    visit(std::string_view(it->key().data(), it->key().size()).substr(prefix.size()));
  }
  return it->status();
}
}  // namespace

FsResult<XattrTotals> FileSystemImpl::LoadXattrTotals(Ino ino) {
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, XattrTotalsKey(ino), &value);
  if (rs.IsNotFound()) return XattrTotals{};
  if (!rs.ok()) return EngineError(rs);
  XattrTotals totals;
  if (!DecodeXattrTotals(value, &totals)) {
    spdlog::error("fs: inode {} has damaged xattr totals", ino);
    return FsError{EIO};
  }
  if (totals.count == kXattrCountUnknown) {
    // Written before the count was kept: count once, and the caller's
    // batch stores the count with the new totals.
    totals.count = 0;
    rs = VisitXattrNames(db_, meta_, ino, [&](std::string_view) { totals.count++; });
    if (!rs.ok()) return EngineError(rs);
  }
  return totals;
}

void FileSystemImpl::PutXattrTotals(Txn& txn, Ino ino, const XattrTotals& totals) {
  if (totals == XattrTotals{}) {
    txn.batch.Delete(meta_, XattrTotalsKey(ino));
  } else {
    txn.batch.Put(meta_, XattrTotalsKey(ino), EncodeXattrTotals(totals));
  }
}

FsResult<bool> FileSystemImpl::DeleteXattr(Txn& txn, Ino ino, std::string_view name) {
  locks_.AssertHeld(ino);
  if (xattr_free_.Contains(ino)) return false;
  std::string key = XattrKey(ino, name);
  std::string old;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, key, &old);
  if (rs.IsNotFound()) return false;
  if (!rs.ok()) return EngineError(rs);
  FsResult<XattrTotals> totals = LoadXattrTotals(ino);
  if (!totals.ok()) return totals.status();
  txn.batch.Delete(meta_, key);
  PutXattrTotals(txn, ino, Minus(*totals, Share(name, old.size())));
  return true;
}

FsResult<bool> FileSystemImpl::DropCapabilities(Ino ino, Txn& txn) {
  return DeleteXattr(txn, ino, kCapabilityXattr);
}

int FileSystemImpl::XattrAccess(const Credentials& cred, const InodeRecord& r,
                                std::string_view name, bool write) {
  if (name.empty() || name.size() > kXattrNameMax) return ERANGE;
  if (HasPrefix(name, "user.")) {
    if (name.size() == 5) return EINVAL;
    // Only files and directories: on devices and fifos user xattrs would
    // let anyone store data on a node they may only read.
    if (!r.is_reg() && !r.is_dir()) return write ? EPERM : ENODATA;
    if (write && r.is_dir() && (r.mode & S_ISVTX) && !IsOwnerOrRoot(cred, r)) return EPERM;
    if (!MayAccess(cred, r, write ? kMayWrite : kMayRead)) return EACCES;
    return 0;
  }
  if (HasPrefix(name, "trusted.")) {
    if (name.size() == 8) return EINVAL;
    if (!cred.is_root()) return write ? EPERM : ENODATA;
    return 0;
  }
  if (HasPrefix(name, "security.")) {
    if (name.size() == 9) return EINVAL;
    if (write && !cred.is_root()) return EPERM;
    return 0;
  }
  return EOPNOTSUPP;  // system.* (ACLs) and unknown namespaces
}

FsResult<std::string> FileSystemImpl::GetXattr(const Credentials& cred, Ino ino,
                                               std::string_view name) {
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  if (int e = XattrAccess(cred, *r, name, false)) return FsError{e};
  // The kernel asks for security.capability before a new file's first write.
  if (xattr_free_.Contains(ino)) return FsError{ENODATA};
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, XattrKey(ino, name), &value);
  if (rs.IsNotFound()) return FsError{ENODATA};
  if (!rs.ok()) return EngineError(rs);
  return value;
}

FsStatus FileSystemImpl::SetXattr(const Credentials& cred, Ino ino, std::string_view name,
                                  std::string_view value, int flags) {
  if (flags & ~(kXattrCreate | kXattrReplace)) return FsError{EINVAL};
  if (flags == (kXattrCreate | kXattrReplace)) return FsError{EINVAL};
  if (value.size() > kXattrValueMax) return FsError{E2BIG};
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  if (int e = XattrAccess(cred, *r, name, true)) return FsError{e};
  std::string key = XattrKey(ino, name);
  std::string old;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, key, &old);
  if (!rs.ok() && !rs.IsNotFound()) return EngineError(rs);
  bool existed = rs.ok();
  if ((flags & kXattrCreate) && existed) return FsError{EEXIST};
  if ((flags & kXattrReplace) && !existed) return FsError{ENODATA};
  FsResult<XattrTotals> before = LoadXattrTotals(ino);
  if (!before.ok()) return before.status();
  XattrTotals after = *before;
  if (existed) after = Minus(after, Share(name, old.size()));
  after = Plus(after, Share(name, value.size()));
  if (Exceeds(before->name_bytes, after.name_bytes, kXattrNamesMax) ||
      Exceeds(Space(*before), Space(after), kXattrSpaceMax)) {
    return FsError{ENOSPC};
  }
  xattr_free_.Remove(ino);
  Txn txn;
  txn.batch.Put(meta_, key, rocksdb::Slice(value.data(), value.size()));
  if (name == kCapabilityXattr) {
    if (DirtyFile* f = FindDirty(ino)) f->capabilities_absent = false;
  }
  PutXattrTotals(txn, ino, after);
  InodeRecord rec = *r;
  rec.ctime = NowTimespec();
  PutInode(txn, ino, rec);
  return Commit(txn);
}

FsResult<std::vector<std::string>> FileSystemImpl::ListXattr(const Credentials& cred, Ino ino) {
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  std::vector<std::string> names;
  if (xattr_free_.Contains(ino)) return names;
  rocksdb::Status rs = VisitXattrNames(db_, meta_, ino, [&](std::string_view name) {
    if (!cred.is_root() && HasPrefix(name, "trusted.")) return;
    names.emplace_back(name);
  });
  if (!rs.ok()) return EngineError(rs);
  return names;
}

FsStatus FileSystemImpl::RemoveXattr(const Credentials& cred, Ino ino, std::string_view name) {
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  int e = XattrAccess(cred, *r, name, true);
  // Whoever may write a file may drop its capabilities: their next write
  // would. The kernels of FUSE and 9P clients remove them in the writer's
  // name before a write or truncate when they see them.
  if (e == EPERM && name == kCapabilityXattr && MayAccess(cred, *r, kMayWrite)) e = 0;
  if (e != 0) return FsError{e};
  Txn txn;
  FsResult<bool> existed = DeleteXattr(txn, ino, name);
  if (!existed.ok()) return existed.status();
  if (!*existed) return FsError{ENODATA};
  InodeRecord rec = *r;
  rec.ctime = NowTimespec();
  PutInode(txn, ino, rec);
  return Commit(txn);
}

}  // namespace pail::fs
