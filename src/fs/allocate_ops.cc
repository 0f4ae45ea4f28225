// fallocate: allocating (reserving chunks against the quota, then the size),
// punching holes and zeroing ranges, with Linux's mode rules and errors.
//
// Zeros are never stored, so allocating a range writes no data: its chunks
// become reserved (fs/reserved_chunks.h), charged whole against the quota
// from then on, so a later write into them cannot meet a full one. Zeroing
// a range reserves it and punches it, as ext4 turns it into unwritten
// extents. Punching goes through PunchHole and gives the reservation of the
// chunks it frees whole back. Each of these is one batch; what the mode adds
// on top (a larger size, set-id bits cleared, timestamps) follows in a
// second, so a crash in between leaves the first done and the size as it
// was.
#include <fcntl.h>

#include <algorithm>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

FsResult<Attr> FileSystemImpl::ReserveRange(Ino ino, uint64_t offset, uint64_t end, bool zero) {
  InodeLocks lock(locks_, {ino});
  // The charge of a chunk depends on the bytes the engine stores for it:
  // unflushed data goes in first.
  FsStatus flushed = FlushFile(ino);
  if (!flushed.ok()) return flushed;
  FsResult<InodeRecord> stored = LoadStoredInode(ino);
  if (!stored.ok()) return stored.status();
  InodeRecord r = *stored;
  // A chunk newly reserved is charged its whole size instead of the bytes
  // it stores. Chunk indexes stay below 2^48, so no sum here passes 2^63.
  std::vector<ChunkRun> added = r.reserved.Add({offset / kChunkSize, ChunkCount(end)});
  uint64_t growth = 0;
  for (const ChunkRun& run : added) {
    FsResult<uint64_t> bytes = StoredChunkBytes(ino, run);
    if (!bytes.ok()) return bytes.status();
    growth += run.size() * kChunkSize - *bytes;
  }
  if (growth > INT64_MAX || !TryCharge(static_cast<int64_t>(growth))) return FsError{ENOSPC};
  // The charge holds the room until the commit counts it as stored (or
  // fails); the stored count goes up first, so the total never dips.
  struct Uncharge {
    std::atomic<int64_t>& dirty_used;
    int64_t bytes;
    ~Uncharge() { dirty_used -= bytes; }
  } uncharge{dirty_used_, static_cast<int64_t>(growth)};
  Txn txn;
  r.used += growth;
  txn.used_bytes_delta += static_cast<int64_t>(growth);
  if (zero) {
    // Reserved first, so the chunks zeroed keep their charge.
    FsStatus zeroed = ZeroStoredRange(ino, r, offset, end, /*release=*/false, txn);
    if (!zeroed.ok()) return zeroed;
    if (offset < r.size) r.mtime = r.ctime = NowTimespec();
  }
  if (added.empty() && !zero) return ToAttr(ino, r);
  PutInode(txn, ino, r);
  FsStatus c = Commit(txn);
  if (!c.ok()) return c;
  return ToAttr(ino, r);
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
  // Allocating and zeroing reserve the range; what they change on top (a
  // larger size, set-id bits cleared, the times) follows in a second batch.
  FsResult<Attr> reserved = ReserveRange(ino, offset, end, /*zero=*/kind == kFallocZeroRange);
  if (!reserved.ok()) return reserved;
  // Zeroing stamped the times when the range met the file; past the end
  // only the size changes, and the times with it.
  const bool touch_mtime = kind == kFallocZeroRange && offset >= reserved->size;
  return FinishRangeChange(cred, ino, !keep_size, end, touch_mtime);
}

}  // namespace pail::fs
