#include "nfs/nfs3_types.h"

#include <sys/sysmacros.h>

#include "nfs/file_handle.h"

namespace pail::nfs {

namespace {

// set_atime/set_mtime discriminants (time_how).
constexpr uint32_t kDontChange = 0;
constexpr uint32_t kSetToServerTime = 1;
constexpr uint32_t kSetToClientTime = 2;

Ftype3 TypeOf(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return NF3DIR;
    case S_IFBLK: return NF3BLK;
    case S_IFCHR: return NF3CHR;
    case S_IFLNK: return NF3LNK;
    case S_IFSOCK: return NF3SOCK;
    case S_IFIFO: return NF3FIFO;
    default: return NF3REG;
  }
}

fs::TimeChange DecodeSetTime(XdrDecoder& d) {
  uint32_t how = d.U32();
  if (how == kSetToServerTime) return fs::TimeChange::Now();
  if (how == kSetToClientTime) return fs::TimeChange::At(DecodeNfsTime(d));
  if (how != kDontChange) d.Fail();
  return fs::TimeChange::Omit();
}

}  // namespace

Nfsstat3 ErrnoToNfsstat(int error) {
  switch (error) {
    case 0: return NFS3_OK;
    case EPERM: return NFS3ERR_PERM;
    case ENOENT: return NFS3ERR_NOENT;
    case ENXIO: return NFS3ERR_NXIO;
    case EACCES: return NFS3ERR_ACCES;
    case EEXIST: return NFS3ERR_EXIST;
    case EXDEV: return NFS3ERR_XDEV;
    case ENODEV: return NFS3ERR_NODEV;
    case ENOTDIR: return NFS3ERR_NOTDIR;
    case EISDIR: return NFS3ERR_ISDIR;
    case EINVAL: return NFS3ERR_INVAL;
    // NFSv3 has no ELOOP; knfsd and ganesha report a symlink loop this way too.
    case ELOOP: return NFS3ERR_INVAL;
    case EFBIG: return NFS3ERR_FBIG;
    case ENOSPC: return NFS3ERR_NOSPC;
    case EROFS: return NFS3ERR_ROFS;
    case EMLINK: return NFS3ERR_MLINK;
    case ENAMETOOLONG: return NFS3ERR_NAMETOOLONG;
    case ENOTEMPTY: return NFS3ERR_NOTEMPTY;
    case EDQUOT: return NFS3ERR_DQUOT;
    case ESTALE: return NFS3ERR_STALE;
    case EBADF: return NFS3ERR_BADHANDLE;
    case fs::kErrNotSync: return NFS3ERR_NOT_SYNC;
    case fs::kErrBadCookie: return NFS3ERR_BAD_COOKIE;
    case EOPNOTSUPP: return NFS3ERR_NOTSUPP;
    // Transient: the client retries after a while instead of failing.
    case EAGAIN: return NFS3ERR_JUKEBOX;
    case EBUSY: return NFS3ERR_JUKEBOX;
    default: return NFS3ERR_IO;
  }
}

struct timespec DecodeNfsTime(XdrDecoder& d) {
  struct timespec t {};
  t.tv_sec = d.U32();
  t.tv_nsec = d.U32();
  if (t.tv_nsec >= 1000000000) d.Fail();
  return t;
}

void DecodeSattr3(XdrDecoder& d, Sattr3* out) {
  if (d.Bool()) out->mode = d.U32() & 07777;
  if (d.Bool()) out->uid = d.U32();
  if (d.Bool()) out->gid = d.U32();
  if (d.Bool()) out->size = d.U64();
  out->atime = DecodeSetTime(d);
  out->mtime = DecodeSetTime(d);
}

void EncodeNfsTime(XdrEncoder& e, const struct timespec& t) {
  e.U32(static_cast<uint32_t>(t.tv_sec));
  e.U32(static_cast<uint32_t>(t.tv_nsec));
}

void EncodeFattr3(XdrEncoder& e, const fs::Attr& attr) {
  e.U32(TypeOf(attr.mode));
  e.U32(attr.mode & 07777);
  e.U32(attr.nlink);
  e.U32(attr.uid);
  e.U32(attr.gid);
  e.U64(attr.size);
  e.U64(attr.blocks() * 512);
  e.U32(major(attr.rdev));
  e.U32(minor(attr.rdev));
  e.U64(attr.fsid);
  e.U64(attr.ino);
  EncodeNfsTime(e, attr.atime);
  EncodeNfsTime(e, attr.mtime);
  EncodeNfsTime(e, attr.ctime);
}

void EncodePostOpAttr(XdrEncoder& e, const fs::Attr* attr) {
  e.Bool(attr != nullptr);
  if (attr) EncodeFattr3(e, *attr);
}

void EncodePostOpAttr(XdrEncoder& e, const fs::FsResult<fs::Attr>& attr) {
  EncodePostOpAttr(e, attr.ok() ? &*attr : nullptr);
}

void EncodeWcc(XdrEncoder& e, const std::optional<fs::Attr>& before,
               const std::optional<fs::Attr>& after) {
  e.Bool(before.has_value());
  if (before) {
    e.U64(before->size);
    EncodeNfsTime(e, before->mtime);
    EncodeNfsTime(e, before->ctime);
  }
  EncodePostOpAttr(e, after ? &*after : nullptr);
}

void EncodePostOpHandle(XdrEncoder& e, const fs::Attr& attr) {
  e.Bool(true);
  e.Opaque(EncodeFileHandle(attr.ino, attr.generation));
}

}  // namespace pail::nfs
