// Attributes: getattr, setattr (chmod, chown, truncate, utimes), access, statfs.
#include <fcntl.h>

#include <algorithm>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {

bool SameTime(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}
}  // namespace

FsResult<Attr> FileSystemImpl::GetAttrLocking(Ino ino) {
  // A directory has no write-back state: its committed record is all of it,
  // read without the lock as Lookup reads a parent, so its getattr never
  // waits behind a change in progress in it, or behind another inode that
  // shares its lock slot across a bucket read. A file's buffered writes
  // need the lock.
  FsResult<InodeRecord> stored = LoadStoredInode(ino);
  if (stored.ok() && stored->is_dir()) return ToAttr(ino, *stored);
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  return ToAttr(ino, *r);
}

FsResult<Attr> FileSystemImpl::GetAttr(const Credentials& cred, Ino ino) {
  return GetAttrLocking(ino);
}

FsResult<Attr> FileSystemImpl::ResolveHandle(Ino ino, uint64_t generation) {
  FsResult<Attr> attr = GetAttrLocking(ino);
  if (attr.ok() && attr->generation != generation) return FsError{ESTALE};
  return attr;
}

FsStatus FileSystemImpl::Access(const Credentials& cred, Ino ino, int mask) {
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  if (mask == F_OK) return {};
  if (!MayAccess(cred, *r, mask)) return FsError{EACCES};
  return {};
}

FsStatus FileSystemImpl::TruncateLocked(const Credentials& cred, Ino ino, InodeRecord& r,
                                        uint64_t size, Txn& txn) {
  locks_.AssertHeld(ino);
  // Work on the engine's state only: unflushed data goes in first.
  FsStatus flushed = FlushFile(ino);
  if (!flushed.ok()) return flushed;
  FsResult<InodeRecord> stored = LoadStoredInode(ino);
  if (!stored.ok()) return stored.status();
  r = *stored;
  int64_t freed = 0;
  if (size < r.size) {
    const uint64_t old_count = ChunkCount(r.size);
    // The chunk holding the new end keeps its head; its tail must read as
    // zeros if the file grows again.
    const uint64_t in_chunk = size % kChunkSize;
    if (in_chunk != 0) {
      FsResult<int64_t> f =
          ZeroStoredChunk(ino, r.reserved, size / kChunkSize, in_chunk, kChunkSize, txn);
      if (!f.ok()) return f.status();
      freed += *f;
    }
    FsResult<int64_t> f = DeleteStoredChunks(ino, ChunkCount(size), old_count, r.reserved, txn);
    if (!f.ok()) return f.status();
    freed += *f;
  }
  // As on ext4, even at the same size: chunks reserved past the new end
  // (kept-size ones past the old end too) go with the data.
  if (size <= r.size) {
    freed += static_cast<int64_t>(r.reserved.Remove({ChunkCount(size), UINT64_MAX}) * kChunkSize);
  }
  r.used -= static_cast<uint64_t>(std::min<int64_t>(freed, static_cast<int64_t>(r.used)));
  txn.used_bytes_delta -= freed;
  r.size = size;
  return {};
}

FsResult<Attr> FileSystemImpl::SetAttr(const Credentials& cred, Ino ino,
                                       const SetAttrRequest& req) {
  bool handle_writable = false;
  if (req.handle != 0) {
    MutexLock g(&handles_mu_);
    auto it = handles_.find(req.handle);
    if (it == handles_.end() || it->second.ino != ino) return FsError{EBADF};
    handle_writable = (it->second.flags & O_ACCMODE) != O_RDONLY;
  }
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> loaded = LoadInode(ino);
  if (!loaded.ok()) return loaded.status();
  InodeRecord r = *loaded;
  if (req.guard_ctime && !SameTime(*req.guard_ctime, r.ctime)) return FsError{kErrNotSync};
  bool owner = IsOwnerOrRoot(cred, r);

  // Every check before any change, so a refused request changes nothing.
  if (req.uid || req.gid) {
    if (!cred.is_root()) {
      if (cred.uid != r.uid) return FsError{EPERM};
      if (req.uid && *req.uid != r.uid) return FsError{EPERM};
      if (req.gid && *req.gid != r.gid && !cred.InGroup(*req.gid)) return FsError{EPERM};
    }
  }
  if (req.mode && !owner) return FsError{EPERM};
  if (req.size) {
    if (r.is_dir()) return FsError{EISDIR};
    if (!r.is_reg()) return FsError{EINVAL};
    if (*req.size > kMaxFileSize) return FsError{EFBIG};
    if (!handle_writable && !MayAccess(cred, r, kMayWrite)) return FsError{EACCES};
  }
  for (const TimeChange* t : {&req.atime, &req.mtime}) {
    if (t->kind == TimeChange::Kind::kValue && !owner) return FsError{EPERM};
    if (t->kind == TimeChange::Kind::kNow && !owner && !MayAccess(cred, r, kMayWrite)) {
      return FsError{EACCES};
    }
  }
  for (const TimeChange* t : {&req.atime, &req.mtime}) {
    if (t->kind == TimeChange::Kind::kValue &&
        (t->value.tv_nsec < 0 || t->value.tv_nsec >= 1000000000)) {
      return FsError{EINVAL};
    }
  }

  bool changed = false;
  struct timespec now = NowTimespec();
  Txn txn;
  if (req.size) {
    FsStatus s = TruncateLocked(cred, ino, r, *req.size, txn);
    if (!s.ok()) return s;
    r.mtime = now;
    if (!cred.is_root()) r.mode &= ~PrivilegeBitsToClear(r);
    changed = true;
  }
  if (req.mode) {
    uint32_t mode = (r.mode & S_IFMT) | (*req.mode & 07777);
    uint32_t new_gid = req.gid ? *req.gid : r.gid;
    // Only members of the file's group may hand out its group's privileges.
    if (!cred.is_root() && !cred.InGroup(new_gid)) mode &= ~S_ISGID;
    r.mode = mode;
    changed = true;
  }
  if (req.uid || req.gid) {
    if (req.uid) r.uid = *req.uid;
    if (req.gid) r.gid = *req.gid;
    // A new owner must not inherit set-id privileges (Linux clears them
    // even when root changes the owner).
    if (!r.is_dir()) r.mode &= ~PrivilegeBitsToClear(r);
    changed = true;
  }
  if (req.atime.kind != TimeChange::Kind::kOmit) {
    r.atime = req.atime.kind == TimeChange::Kind::kNow ? now : req.atime.value;
    changed = true;
  }
  if (req.mtime.kind != TimeChange::Kind::kOmit) {
    r.mtime = req.mtime.kind == TimeChange::Kind::kNow ? now : req.mtime.value;
    changed = true;
  }
  if (!changed) return ToAttr(ino, r);
  if (req.size || ((req.uid || req.gid) && !r.is_dir())) {
    FsResult<bool> dropped = DropCapabilities(ino, txn);
    if (!dropped.ok()) return dropped.status();
  }
  r.ctime = now;
  PutInode(txn, ino, r);
  FsStatus c = Commit(txn);
  if (!c.ok()) return c;
  return ToAttr(ino, r);
}

FsResult<StatFsResult> FileSystemImpl::StatFs(const Credentials& cred, Ino ino) {
  StatFsResult s;
  uint64_t used = static_cast<uint64_t>(std::max<int64_t>(0, stored_used_.load() + dirty_used_.load()));
  uint64_t capacity = options_.max_size_bytes != 0 ? options_.max_size_bytes : kMaxFileSize;
  s.total_blocks = capacity / kBlockSize;
  uint64_t used_blocks = (used + kBlockSize - 1) / kBlockSize;
  s.free_blocks = s.total_blocks > used_blocks ? s.total_blocks - used_blocks : 0;
  s.avail_blocks = s.free_blocks;
  // Inode numbers are 64-bit; report a large round number like ext4 does.
  s.total_files = 1ull << 48;
  uint64_t inodes = static_cast<uint64_t>(std::max<int64_t>(0, stored_inodes_.load()));
  s.free_files = s.total_files - std::min(inodes, s.total_files);
  s.avail_files = s.free_files;
  return s;
}

}  // namespace pail::fs
