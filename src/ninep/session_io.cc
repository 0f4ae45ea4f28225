// Opening, reading, writing, syncing and attributes.
#include <fcntl.h>

#include <algorithm>

#include "fs/reply_listing.h"
#include "ninep/session.h"

namespace pail::ninep {

using fs::FsError;
using fs::FsResult;
using fs::FsStatus;

namespace {

// P9_DOTL_* open flags to the open(2) flags the core understands.
int OpenFlags(uint32_t dotl) {
  int flags = 0;
  switch (dotl & kDotlAccMode) {
    case 0: flags = O_RDONLY; break;
    case 1: flags = O_WRONLY; break;
    default: flags = O_RDWR; break;
  }
  if (dotl & kDotlTrunc) flags |= O_TRUNC;
  if (dotl & kDotlAppend) flags |= O_APPEND;
  return flags;
}

// One readdir entry: qid[13] offset[8] type[1] name[s].
size_t DirEntryBytes(std::string_view name) { return kQidBytes + 8 + 1 + StringBytes(name.size()); }

void PutTime(WireWriter& w, const struct timespec& t) {
  w.U64(static_cast<uint64_t>(t.tv_sec));
  w.U64(static_cast<uint64_t>(t.tv_nsec));
}

// The Linux client turns the kernel's "kill setuid/setgid" (a write or
// truncate by someone other than the owner) into a mode change, which only
// the owner may make. The core already clears those bits on such writes
// and truncations, so a mode change that only clears them, from a caller
// who may not chmod, is left out rather than refused (knfsd does the same).
fs::FsStatus DropSuidKill(fs::FileSystem& fs, const fs::Credentials& cred, fs::Ino ino,
                          fs::SetAttrRequest* req) {
  if (!req->mode || cred.is_root()) return FsStatus::OK();
  FsResult<fs::Attr> attr = fs.GetAttr(cred, ino);
  if (!attr.ok()) return attr.status();
  if (attr->uid == cred.uid) return FsStatus::OK();
  uint32_t old_mode = attr->mode & 07777;
  uint32_t cleared = old_mode & ~*req->mode;
  bool only_clears_suid = (*req->mode & ~old_mode) == 0 && (cleared & ~(S_ISUID | S_ISGID)) == 0;
  if (only_clears_suid) req->mode.reset();
  return FsStatus::OK();
}

}  // namespace

// Tlopen fid[4] flags[4] -> Rlopen qid iounit[4]. iounit 0: the client
// sizes its I/O by msize.
Session::Reply Session::Lopen(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint32_t flags = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  FidState state = f->Snapshot();
  if (state.opened) return FsError{EBADF};
  if ((flags & kDotlDirectory) && !S_ISDIR(state.type)) return FsError{ENOTDIR};
  NINEP_ASSIGN_OR_RETURN(uint64_t handle, fs_.Open(f->cred(), state.ino, OpenFlags(flags)));
  bool raced = f->Update([&](FidState& s) {
    if (s.opened) return true;
    s.opened = true;
    s.handle = handle;
    return false;
  });
  if (raced) {
    (void)fs_.Release(handle);
    return FsError{EBADF};
  }
  WireWriter w(kRlopen, tag);
  w.QidField(QidOf(state.ino, state.type));
  w.U32(0);
  return w.Finish();
}

// Tlcreate fid[4] name[s] flags[4] mode[4] gid[4] -> Rlcreate qid iounit[4].
// The directory fid becomes the new, open file.
Session::Reply Session::Lcreate(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  std::string_view name = r.String();
  uint32_t flags = r.U32();
  uint32_t mode = r.U32();
  uint32_t gid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  FidState dir = f->Snapshot();
  if (dir.opened) return FsError{EBADF};
  if (!S_ISDIR(dir.type)) return FsError{ENOTDIR};
  fs::CreateOptions options;
  options.exclusive = (flags & kDotlExcl) != 0;
  options.truncate = (flags & kDotlTrunc) != 0;
  options.open_flags = OpenFlags(flags);
  NINEP_ASSIGN_OR_RETURN(fs::CreateResult created,
                         fs_.Create(WithCreateGroup(options_.identity, f->cred(), gid), dir.ino,
                                    name, mode & 07777, options));
  bool raced = f->Update([&](FidState& s) {
    if (s.opened || s.ino != dir.ino) return true;
    s.ino = created.attr.ino;
    s.type = created.attr.type();
    s.parent = dir.ino;
    s.name = std::string(name);
    s.opened = true;
    s.handle = created.handle;
    return false;
  });
  if (raced) {
    (void)fs_.Release(created.handle);
    return FsError{EBADF};
  }
  WireWriter w(kRlcreate, tag);
  w.QidField(QidOf(created.attr));
  w.U32(0);
  return w.Finish();
}

// Tread fid[4] offset[8] count[4] -> Rread count[4] data[count].
Session::Reply Session::Read(WireReader& r, uint16_t tag, bool may_wait) {
  uint32_t fid = r.U32();
  uint64_t offset = r.U64();
  uint32_t count = std::min(r.U32(), MaxIo());
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, Lookup(fid));
  FidState state = f->Snapshot();
  WireWriter w(kRread, tag);
  if (state.kind == FidKind::kXattrRead) {
    std::string_view data = state.xattr_data;
    std::string_view part = offset < data.size() ? data.substr(offset, count) : std::string_view();
    w.U32(static_cast<uint32_t>(part.size()));
    w.Bytes(part);
    return w.Finish();
  }
  if (state.kind != FidKind::kFile || !state.opened) return FsError{EBADF};
  NINEP_ASSIGN_OR_RETURN(fs::ReadResult data,
                         may_wait ? fs_.Read(f->cred(), state.ino, offset, count, state.handle)
                                  : fs_.TryRead(f->cred(), state.ino, offset, count, state.handle));
  w.U32(static_cast<uint32_t>(data.data.size()));
  w.Bytes(data.data);
  return w.Finish();
}

// Twrite fid[4] offset[8] count[4] data[count] -> Rwrite count[4].
Session::Reply Session::Write(WireReader& r, uint16_t tag, bool may_wait) {
  uint32_t fid = r.U32();
  uint64_t offset = r.U64();
  uint32_t count = r.U32();
  std::string_view data = r.Bytes(count);
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, Lookup(fid));
  FidState state = f->Snapshot();
  WireWriter w(kRwrite, tag);
  if (state.kind == FidKind::kXattrWrite) {
    // The value arrives in order; it may not outgrow what Txattrcreate said.
    NINEP_RETURN_IF_ERROR(f->Update([&](FidState& s) -> FsStatus {
      if (offset != s.xattr_data.size()) return FsError{EINVAL};
      if (data.size() > s.xattr_size - s.xattr_data.size()) return FsError{ENOSPC};
      s.xattr_data.append(data);
      return FsStatus::OK();
    }));
    w.U32(count);
    return w.Finish();
  }
  if (state.kind != FidKind::kFile || !state.opened) return FsError{EBADF};
  NINEP_ASSIGN_OR_RETURN(fs::WriteResult written,
                         may_wait ? fs_.Write(f->cred(), state.ino, offset, data, state.handle)
                                  : fs_.TryWrite(f->cred(), state.ino, offset, data, state.handle));
  w.U32(written.written);
  return w.Finish();
}

// Tfsync fid[4] datasync[4] -> Rfsync. Returns once the file's data and
// metadata are in the bucket.
Session::Reply Session::Fsync(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  r.U32();  // datasync: metadata goes along anyway
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  NINEP_RETURN_IF_ERROR(fs_.Fsync(f->cred(), f->Snapshot().ino));
  WireWriter w(kRfsync, tag);
  return w.Finish();
}

// Treaddir fid[4] offset[8] count[4] -> Rreaddir count[4] entries. An
// entry's offset is the core's cookie for the entry after it, so offsets
// stay valid while the directory changes.
Session::Reply Session::Readdir(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint64_t offset = r.U64();
  uint32_t count = std::min(r.U32(), MaxIo());
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  FidState state = f->Snapshot();
  if (!S_ISDIR(state.type)) return FsError{ENOTDIR};
  if (count == 0) return FsError{EINVAL};
  WireWriter w(kRreaddir, tag);
  size_t count_at = w.Reserve32();
  const size_t entries_at = w.size();
  auto encode = [&w](const fs::DirEntry& e) {
    w.QidField(QidOf(e.ino, e.type));
    w.U64(e.next_cookie);
    w.U8(static_cast<uint8_t>(e.type >> 12));  // S_IFMT >> 12 is the DT_* value
    w.String(e.name);
  };
  NINEP_ASSIGN_OR_RETURN(fs::ReplyListing listed,
                         fs::ListForReply(fs_, f->cred(), state.ino, offset, count, DirEntryBytes,
                                          /*with_attrs=*/false, encode));
  // An empty reply ends the listing: count too small for the next entry.
  if (listed.entries == 0 && !listed.eof) return FsError{EINVAL};
  w.Patch32(count_at, static_cast<uint32_t>(w.size() - entries_at));
  return w.Finish();
}

// Tstatfs fid[4] -> Rstatfs type[4] bsize[4] blocks[8] bfree[8] bavail[8]
// files[8] ffree[8] fsid[8] namelen[4].
Session::Reply Session::Statfs(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  NINEP_ASSIGN_OR_RETURN(fs::StatFsResult st, fs_.StatFs(f->cred(), f->Snapshot().ino));
  WireWriter w(kRstatfs, tag);
  w.U32(kV9fsMagic);
  w.U32(static_cast<uint32_t>(st.block_size));
  w.U64(st.total_blocks);
  w.U64(st.free_blocks);
  w.U64(st.avail_blocks);
  w.U64(st.total_files);
  w.U64(st.free_files);
  w.U64(fs::kFsid);
  w.U32(st.name_max);
  return w.Finish();
}

// Tgetattr fid[4] request_mask[8] -> Rgetattr valid[8] qid mode[4] uid[4]
// gid[4] nlink[8] rdev[8] size[8] blksize[8] blocks[8] atime mtime ctime
// btime (sec[8] nsec[8] each) gen[8] data_version[8]. Every basic field is
// always valid; btime, gen and data_version are not kept (zero).
Session::Reply Session::Getattr(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  r.U64();
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  NINEP_ASSIGN_OR_RETURN(fs::Attr a, fs_.GetAttr(f->cred(), f->Snapshot().ino));
  WireWriter w(kRgetattr, tag);
  w.U64(kGetattrBasic);
  w.QidField(QidOf(a));
  w.U32(a.mode);
  w.U32(a.uid);
  w.U32(a.gid);
  w.U64(a.nlink);
  w.U64(a.rdev);
  w.U64(a.size);
  w.U64(a.blksize);
  w.U64(a.blocks());
  PutTime(w, a.atime);
  PutTime(w, a.mtime);
  PutTime(w, a.ctime);
  PutTime(w, {});
  w.U64(0);
  w.U64(0);
  return w.Finish();
}

// Tsetattr fid[4] valid[4] mode[4] uid[4] gid[4] size[8] atime_sec[8]
// atime_nsec[8] mtime_sec[8] mtime_nsec[8] -> Rsetattr. A size change
// through a fid opened for writing is ftruncate (no write permission check).
Session::Reply Session::Setattr(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint32_t valid = r.U32();
  uint32_t mode = r.U32();
  uint32_t uid = r.U32();
  uint32_t gid = r.U32();
  uint64_t size = r.U64();
  struct timespec atime, mtime;
  atime.tv_sec = static_cast<time_t>(r.U64());
  atime.tv_nsec = static_cast<long>(r.U64());
  mtime.tv_sec = static_cast<time_t>(r.U64());
  mtime.tv_nsec = static_cast<long>(r.U64());
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  FidState state = f->Snapshot();
  fs::SetAttrRequest req;
  if (valid & kSetattrMode) req.mode = mode & 07777;
  if (valid & kSetattrUid) req.uid = uid;
  if (valid & kSetattrGid) req.gid = gid;
  if (valid & kSetattrSize) req.size = size;
  if (valid & kSetattrAtime) {
    req.atime = (valid & kSetattrAtimeSet) ? fs::TimeChange::At(atime) : fs::TimeChange::Now();
  }
  if (valid & kSetattrMtime) {
    req.mtime = (valid & kSetattrMtimeSet) ? fs::TimeChange::At(mtime) : fs::TimeChange::Now();
  }
  req.handle = state.handle;
  NINEP_RETURN_IF_ERROR(DropSuidKill(fs_, f->cred(), state.ino, &req));
  NINEP_ASSIGN_OR_RETURN(fs::Attr attr, fs_.SetAttr(f->cred(), state.ino, req));
  (void)attr;
  WireWriter w(kRsetattr, tag);
  return w.Finish();
}

}  // namespace pail::ninep
