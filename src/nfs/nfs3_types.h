// NFSv3 data types (RFC 1813 §2.5-2.6) and their XDR form: status codes,
// file attributes (fattr3), weak cache consistency data (wcc_data), settable
// attributes (sattr3), and the translation of the core's errno values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "fs/filesystem.h"
#include "nfs/xdr.h"

namespace pail::nfs {

enum Nfsstat3 : uint32_t {
  NFS3_OK = 0,
  NFS3ERR_PERM = 1,
  NFS3ERR_NOENT = 2,
  NFS3ERR_IO = 5,
  NFS3ERR_NXIO = 6,
  NFS3ERR_ACCES = 13,
  NFS3ERR_EXIST = 17,
  NFS3ERR_XDEV = 18,
  NFS3ERR_NODEV = 19,
  NFS3ERR_NOTDIR = 20,
  NFS3ERR_ISDIR = 21,
  NFS3ERR_INVAL = 22,
  NFS3ERR_FBIG = 27,
  NFS3ERR_NOSPC = 28,
  NFS3ERR_ROFS = 30,
  NFS3ERR_MLINK = 31,
  NFS3ERR_NAMETOOLONG = 63,
  NFS3ERR_NOTEMPTY = 66,
  NFS3ERR_DQUOT = 69,
  NFS3ERR_STALE = 70,
  NFS3ERR_BADHANDLE = 10001,
  NFS3ERR_NOT_SYNC = 10002,
  NFS3ERR_BAD_COOKIE = 10003,
  NFS3ERR_NOTSUPP = 10004,
  NFS3ERR_TOOSMALL = 10005,
  NFS3ERR_SERVERFAULT = 10006,
  NFS3ERR_BADTYPE = 10007,
  NFS3ERR_JUKEBOX = 10008,
};

enum Ftype3 : uint32_t {
  NF3REG = 1,
  NF3DIR = 2,
  NF3BLK = 3,
  NF3CHR = 4,
  NF3LNK = 5,
  NF3SOCK = 6,
  NF3FIFO = 7,
};

enum StableHow : uint32_t {
  UNSTABLE = 0,
  DATA_SYNC = 1,
  FILE_SYNC = 2,
};

// ACCESS3 bits.
constexpr uint32_t kAccessRead = 0x01;
constexpr uint32_t kAccessLookup = 0x02;
constexpr uint32_t kAccessModify = 0x04;
constexpr uint32_t kAccessExtend = 0x08;
constexpr uint32_t kAccessDelete = 0x10;
constexpr uint32_t kAccessExecute = 0x20;

// The errno the core returned, as the NFS status a client expects.
Nfsstat3 ErrnoToNfsstat(int error);

// sattr3, decoded. Times: nullopt = leave alone.
struct Sattr3 {
  std::optional<uint32_t> mode;
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  fs::TimeChange atime;
  fs::TimeChange mtime;

  bool has_owner_or_times() const {
    return uid || gid || atime.kind != fs::TimeChange::Kind::kOmit ||
           mtime.kind != fs::TimeChange::Kind::kOmit;
  }
};

void DecodeSattr3(XdrDecoder& d, Sattr3* out);
struct timespec DecodeNfsTime(XdrDecoder& d);

void EncodeNfsTime(XdrEncoder& e, const struct timespec& t);
void EncodeFattr3(XdrEncoder& e, const fs::Attr& attr);
// post_op_attr: present only when `attr` is.
void EncodePostOpAttr(XdrEncoder& e, const fs::Attr* attr);
void EncodePostOpAttr(XdrEncoder& e, const fs::FsResult<fs::Attr>& attr);

// For replies that start with a status and a post-op attribute: when the
// request's handle was bad (`status` is not NFS3_OK), encodes that status
// with no attributes and returns true; the procedure is then done.
inline bool RepliedHandleError(Nfsstat3 status, XdrEncoder& out) {
  if (status == NFS3_OK) return false;
  out.U32(status);
  EncodePostOpAttr(out, nullptr);
  return true;
}
// wcc_data: the size/mtime/ctime before (when known) and the attributes after.
void EncodeWcc(XdrEncoder& e, const std::optional<fs::Attr>& before,
               const std::optional<fs::Attr>& after);
// post_op_fh3 for `attr`'s inode.
void EncodePostOpHandle(XdrEncoder& e, const fs::Attr& attr);

}  // namespace pail::nfs
