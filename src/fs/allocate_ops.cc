// fallocate: allocating (a room check against the quota, then the size),
// punching holes and zeroing ranges, with Linux's mode rules and errors.
//
// Holes cost nothing here and zeros are never stored, so "allocating" a
// range has nothing to write: mode 0 checks that the quota could hold the
// range's holes as data and extends the size, and zeroing a range is
// punching it. Punching goes through PunchHole (its own batch); what the
// mode adds on top (a larger size, set-id bits cleared, timestamps) follows
// in a second batch, so a crash in between leaves the state of a completed
// punch.
#include <fcntl.h>

#include <algorithm>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
// Runs asked of MapExtents per call when counting holes.
constexpr size_t kHoleScanExtents = 256;
}  // namespace

FsResult<uint64_t> FileSystemImpl::HoleBytes(Ino ino, uint64_t offset, uint64_t end,
                                             uint64_t enough) {
  uint64_t holes = 0;
  uint64_t pos = offset;
  while (pos < end) {
    FsResult<std::vector<Extent>> runs =
        MapExtents(Credentials::Root(), ino, pos, end - pos, kHoleScanExtents);
    if (!runs.ok()) return runs.status();
    if (runs->empty()) break;  // pos is at or past the end of the file
    for (const Extent& e : *runs) {
      if (!e.data) holes += e.length;
    }
    pos = runs->back().offset + runs->back().length;
    if (holes > enough) return holes;
  }
  // Past the end of the file the whole range is a hole.
  if (pos < end) holes += end - pos;
  return holes;
}

FsResult<Attr> FileSystemImpl::FinishRangeChange(const Credentials& cred, Ino ino, bool grow,
                                                 uint64_t size, bool touch_mtime) {
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> loaded = LoadInode(ino);
  if (!loaded.ok()) return loaded.status();
  InodeRecord r = *loaded;
  if (!r.is_reg()) return FsError{EINVAL};  // callers checked; a type never changes
  bool grows = grow && size > r.size;
  uint32_t drop = cred.is_root() ? 0 : (r.mode & PrivilegeBitsToClear(r));
  Txn txn;
  FsResult<bool> dropped_capabilities = DropCapabilities(ino, txn);
  if (!dropped_capabilities.ok()) return dropped_capabilities.status();
  if (!grows && drop == 0 && !touch_mtime && !*dropped_capabilities) return ToAttr(ino, r);
  if (grows) {
    FsStatus t = TruncateLocked(cred, ino, r, size, txn);
    if (!t.ok()) return t;
  }
  r.mode &= ~drop;
  struct timespec now = NowTimespec();
  if (grows || touch_mtime) r.mtime = now;
  r.ctime = now;
  PutInode(txn, ino, r);
  FsStatus c = Commit(txn);
  if (!c.ok()) return c;
  return ToAttr(ino, r);
}

FsResult<Attr> FileSystemImpl::Fallocate(const Credentials& cred, Ino ino, int mode,
                                         uint64_t offset, uint64_t length, uint64_t handle) {
  // The checks in the order Linux's vfs_fallocate makes them.
  const bool keep_size = (mode & kFallocKeepSize) != 0;
  const int kind = mode & ~kFallocKeepSize;
  if (kind != 0 && kind != kFallocPunchHole && kind != kFallocZeroRange) {
    return FsError{EOPNOTSUPP};
  }
  if (kind == kFallocPunchHole && !keep_size) return FsError{EOPNOTSUPP};
  if (length == 0) return FsError{EINVAL};
  if (handle != 0) {
    FsResult<int> flags = HandleFlags(handle, ino);
    if (!flags.ok()) return flags.status();
    if ((*flags & O_ACCMODE) == O_RDONLY) return FsError{EBADF};
  }
  if (engine_.fenced()) return FsError{EROFS};
  {
    InodeLocks lock(locks_, {ino});
    FsResult<InodeRecord> r = LoadInode(ino);
    if (!r.ok()) return r.status();
    if (S_ISFIFO(r->mode)) return FsError{ESPIPE};
    if (r->is_dir()) return FsError{EISDIR};
    if (!r->is_reg()) return FsError{ENODEV};
    if (handle == 0 && cred.uid != r->uid && !MayAccess(cred, *r, kMayWrite)) {
      return FsError{EACCES};
    }
  }
  if (offset > kMaxFileSize || length > kMaxFileSize - offset) return FsError{EFBIG};
  const uint64_t end = offset + length;
  // An open handle carries the right to write; PunchHole checks none then.
  const Credentials as = handle != 0 ? Credentials::Root() : cred;

  if (kind == kFallocPunchHole) {
    FsResult<Attr> punched = PunchHole(as, ino, offset, length);
    if (!punched.ok()) return punched;
    return FinishRangeChange(cred, ino, /*grow=*/false, 0, /*touch_mtime=*/false);
  }
  if (kind == kFallocZeroRange) {
    // PunchHole ignores the part past the end and stamps the times when it
    // covered anything; past the end there is nothing to zero.
    FsResult<Attr> punched = PunchHole(as, ino, offset, length);
    if (!punched.ok()) return punched;
    return FinishRangeChange(cred, ino, !keep_size, end,
                             /*touch_mtime=*/offset >= punched->size);
  }
  if (options_.max_size_bytes != 0) {
    const int64_t quota =
        static_cast<int64_t>(std::min<uint64_t>(options_.max_size_bytes, INT64_MAX));
    const int64_t room = std::max<int64_t>(0, quota - stored_used_.load() - dirty_used_.load());
    FsResult<uint64_t> needed = HoleBytes(ino, offset, end, static_cast<uint64_t>(room));
    if (!needed.ok()) return needed.status();
    if (*needed > static_cast<uint64_t>(room)) return FsError{ENOSPC};
  }
  return FinishRangeChange(cred, ino, !keep_size, end, /*touch_mtime=*/false);
}

}  // namespace pail::fs
