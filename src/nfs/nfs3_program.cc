#include "nfs/nfs3_program.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string_view>

#include "metrics/protocol_metrics.h"
#include "nfs/nfs3_args.h"

namespace pail::nfs {

namespace {

enum Nfs3Proc : uint32_t {
  kNull = 0,
  kGetAttr = 1,
  kSetAttr = 2,
  kLookup = 3,
  kAccess = 4,
  kReadlink = 5,
  kRead = 6,
  kWrite = 7,
  kCreate = 8,
  kMkdir = 9,
  kSymlink = 10,
  kMknod = 11,
  kRemove = 12,
  kRmdir = 13,
  kRename = 14,
  kLink = 15,
  kReadDir = 16,
  kReadDirPlus = 17,
  kFsStat = 18,
  kFsInfo = 19,
  kPathConf = 20,
  kCommit = 21,
};

// FSINFO properties: hard links, symlinks, same pathconf everywhere, and
// SETATTR may set times.
constexpr uint32_t kFsfLink = 0x0001;
constexpr uint32_t kFsfSymlink = 0x0002;
constexpr uint32_t kFsfHomogeneous = 0x0008;
constexpr uint32_t kFsfCanSetTime = 0x0010;
// Preferred READDIR reply size.
constexpr uint32_t kPreferredReadDirBytes = 64 * 1024;

}  // namespace

// Metric label of each procedure, by number.
static constexpr std::array<std::string_view, 22> kProcedureNames = {
    "null",   "getattr", "setattr", "lookup",  "access",  "readlink",    "read",   "write",
    "create", "mkdir",   "symlink", "mknod",   "remove",  "rmdir",       "rename", "link",
    "readdir", "readdirplus", "fsstat", "fsinfo", "pathconf", "commit"};

// The nfsstat3 a reply begins with. NFSv3 error codes below 10000 are the
// errno values of the same name (RFC 1813, 2.6), so they count as errnos.
static int ReplyErrno(const XdrEncoder& out, size_t start) {
  const std::string& buffer = *const_cast<XdrEncoder&>(out).buffer();
  if (buffer.size() < start + 4) return 0;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer.data() + start);
  return static_cast<int>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]);
}

AcceptStat Nfs3Program::Call(const RpcCall& call, const CallContext&, XdrDecoder& args,
                             XdrEncoder& out) {
  static metrics::ProtocolMetrics& nfs = metrics::ProtocolMetrics::For("nfs");
  auto op = nfs.Start(call.procedure < kProcedureNames.size() ? kProcedureNames[call.procedure]
                                                               : std::string_view("unknown"));
  const size_t start = out.size();
  AcceptStat stat = Procedure(call, args, out);
  op.Done(stat != AcceptStat::kSuccess ? EINVAL : call.procedure == kNull ? 0 : ReplyErrno(out, start));
  return stat;
}

AcceptStat Nfs3Program::Procedure(const RpcCall& call, XdrDecoder& args, XdrEncoder& out) {
  fs::Credentials cred;
  cred.uid = call.credentials.uid;
  cred.gid = call.credentials.gid;
  cred.groups = call.credentials.groups;
  switch (call.procedure) {
    case kNull: return AcceptStat::kSuccess;
    case kGetAttr: return GetAttr(cred, args, out);
    case kSetAttr: return SetAttr(cred, args, out);
    case kLookup: return Lookup(cred, args, out);
    case kAccess: return Access(cred, args, out);
    case kReadlink: return Readlink(cred, args, out);
    case kRead: return Read(cred, args, out);
    case kWrite: return Write(cred, args, out);
    case kCreate: return Create(cred, args, out);
    case kMkdir: return Mkdir(cred, args, out);
    case kSymlink: return Symlink(cred, args, out);
    case kMknod: return Mknod(cred, args, out);
    case kRemove: return Remove(cred, args, out, /*directory=*/false);
    case kRmdir: return Remove(cred, args, out, /*directory=*/true);
    case kRename: return Rename(cred, args, out);
    case kLink: return Link(cred, args, out);
    case kReadDir: return ReadDir(cred, args, out, /*plus=*/false);
    case kReadDirPlus: return ReadDir(cred, args, out, /*plus=*/true);
    case kFsStat: return FsStat(cred, args, out);
    case kFsInfo: return FsInfo(cred, args, out);
    case kPathConf: return PathConf(cred, args, out);
    case kCommit: return Commit(cred, args, out);
    default: return AcceptStat::kProcUnavail;
  }
}

std::optional<fs::Attr> Nfs3Program::AttrOrNothing(const Cred& cred, fs::Ino ino) {
  fs::FsResult<fs::Attr> attr = fs_.GetAttr(cred, ino);
  if (!attr.ok()) return std::nullopt;
  return std::move(attr).value();
}

void Nfs3Program::EncodeVerifier(XdrEncoder& out) const { out.U64(write_verifier_); }

Nfsstat3 Nfs3Program::MakeDurable(const Cred& cred, fs::Ino ino) {
  if (!durable_commit_) return NFS3_OK;
  return ErrnoToNfsstat(fs_.Fsync(cred, ino).error());
}

size_t Nfs3Program::ReplyBytesBound(const RpcCall& call, XdrDecoder& args) const {
  if (call.version != kNfsVersion3) return 0;
  args.Opaque(kMaxNfsHandleBytes);
  switch (call.procedure) {
    case kRead: {
      args.U64();  // offset
      uint32_t count = args.U32();
      return args.ok() ? std::min(count, kMaxIoBytes) : 0;
    }
    case kReadDir:
    case kReadDirPlus: {
      args.U64();  // cookie
      args.U64();  // verifier
      uint32_t limit = args.U32();
      if (call.procedure == kReadDirPlus) limit = args.U32();  // maxcount
      return args.ok() ? std::min(limit, kMaxReadDirReplyBytes) : 0;
    }
    default:
      return 0;
  }
}

// Lookups and attribute reads touch only the metadata store (memory, or an
// SST block from the local cache). Directory changes do too, unless durable
// mode syncs each one to the bucket. READ, WRITE and COMMIT may wait for
// data or the bucket, and so may a SETATTR that changes the size (a
// truncation takes the file's lock, which a write holds while it reads a
// chunk it changes in part from the bucket); those go to the workers.
bool Nfs3Program::Quick(const RpcCall& call, XdrDecoder& args) const {
  if (call.version != kNfsVersion3) return false;
  switch (call.procedure) {
    case kGetAttr: case kLookup: case kAccess: case kReadlink: case kReadDir: case kReadDirPlus:
    case kFsStat: case kFsInfo: case kPathConf:
      return true;
    case kCreate: case kMkdir: case kSymlink: case kMknod: case kRemove: case kRmdir:
    case kRename: case kLink:
      return !durable_commit_;
    case kSetAttr: {
      if (durable_commit_) return false;
      // sattr3 after the handle: mode, uid and gid (each a discriminant and
      // a word when set), then set_size.
      args.Opaque(kMaxNfsHandleBytes);
      for (int field = 0; field < 3; field++) {
        if (args.U32()) args.U32();
      }
      uint32_t sets_size = args.U32();
      return args.ok() && !sets_size;
    }
    default:
      return false;
  }
}

AcceptStat Nfs3Program::GetAttr(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (file.status != NFS3_OK) {
    out.U32(file.status);
    return AcceptStat::kSuccess;
  }
  fs::FsResult<fs::Attr> attr = fs_.GetAttr(cred, file.ino);
  out.U32(ErrnoToNfsstat(attr.error()));
  if (attr.ok()) EncodeFattr3(out, *attr);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::SetAttr(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  Sattr3 sattr;
  DecodeSattr3(args, &sattr);
  std::optional<struct timespec> guard;
  if (args.Bool()) guard = DecodeNfsTime(args);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (file.status != NFS3_OK) {
    out.U32(file.status);
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> before = AttrOrNothing(cred, file.ino);
  fs::SetAttrRequest request;
  request.mode = sattr.mode;
  request.uid = sattr.uid;
  request.gid = sattr.gid;
  request.size = sattr.size;
  request.atime = sattr.atime;
  request.mtime = sattr.mtime;
  request.guard_ctime = guard;
  fs::FsResult<fs::Attr> after = fs_.SetAttr(cred, file.ino, request);
  Nfsstat3 status = ErrnoToNfsstat(after.error());
  if (status == NFS3_OK) status = MakeDurable(cred, file.ino);
  out.U32(status);
  EncodeWcc(out, before, after.ok() ? std::optional<fs::Attr>(*after) : AttrOrNothing(cred, file.ino));
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Lookup(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  DirOpArg what = DecodeDirOpArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(what.status(), out)) return AcceptStat::kSuccess;
  fs::FsResult<fs::Attr> found = fs_.Lookup(cred, what.dir.ino, what.name);
  std::optional<fs::Attr> dir = AttrOrNothing(cred, what.dir.ino);
  out.U32(ErrnoToNfsstat(found.error()));
  if (found.ok()) {
    out.Opaque(EncodeFileHandle(found->ino, found->generation));
    EncodePostOpAttr(out, &*found);
  }
  EncodePostOpAttr(out, dir ? &*dir : nullptr);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Access(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  uint32_t wanted = args.U32();
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(file.status, out)) return AcceptStat::kSuccess;
  fs::FsResult<fs::Attr> attr = fs_.GetAttr(cred, file.ino);
  if (!attr.ok()) {
    out.U32(ErrnoToNfsstat(attr.error()));
    EncodePostOpAttr(out, nullptr);
    return AcceptStat::kSuccess;
  }
  // Each POSIX permission is asked of the core at most once.
  int checked = 0, granted = 0;
  Nfsstat3 failure = NFS3_OK;
  auto allowed = [&](int mask) {
    if (!(checked & mask)) {
      checked |= mask;
      fs::FsStatus s = fs_.Access(cred, file.ino, mask);
      if (s.ok()) {
        granted |= mask;
      } else if (s.error() != EACCES && s.error() != EPERM && s.error() != EROFS) {
        failure = ErrnoToNfsstat(s.error());
      }
    }
    return (granted & mask) != 0;
  };
  uint32_t result = 0;
  if ((wanted & kAccessRead) && allowed(R_OK)) result |= kAccessRead;
  if (attr->is_dir()) {
    if ((wanted & kAccessLookup) && allowed(X_OK)) result |= kAccessLookup;
    if ((wanted & kAccessDelete) && allowed(W_OK)) result |= kAccessDelete;
  } else if ((wanted & kAccessExecute) && allowed(X_OK)) {
    result |= kAccessExecute;
  }
  if ((wanted & kAccessModify) && allowed(W_OK)) result |= kAccessModify;
  if ((wanted & kAccessExtend) && allowed(W_OK)) result |= kAccessExtend;
  out.U32(failure);
  EncodePostOpAttr(out, &*attr);
  if (failure == NFS3_OK) out.U32(result);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Readlink(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg link = DecodeHandleArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(link.status, out)) return AcceptStat::kSuccess;
  fs::FsResult<std::string> target = fs_.Readlink(cred, link.ino);
  std::optional<fs::Attr> attr = AttrOrNothing(cred, link.ino);
  out.U32(ErrnoToNfsstat(target.error()));
  EncodePostOpAttr(out, attr ? &*attr : nullptr);
  if (target.ok()) out.String(*target);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::FsStat(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg root = DecodeHandleArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(root.status, out)) return AcceptStat::kSuccess;
  // The handle must name a live file even though the numbers are global.
  fs::FsResult<fs::Attr> attr = fs_.GetAttr(cred, root.ino);
  fs::FsResult<fs::StatFsResult> st =
      attr.ok() ? fs_.StatFs(cred, root.ino) : fs::FsResult<fs::StatFsResult>(attr.status());
  out.U32(ErrnoToNfsstat(st.error()));
  EncodePostOpAttr(out, attr);
  if (st.ok()) {
    out.U64(st->total_blocks * st->block_size);
    out.U64(st->free_blocks * st->block_size);
    out.U64(st->avail_blocks * st->block_size);
    out.U64(st->total_files);
    out.U64(st->free_files);
    out.U64(st->avail_files);
    out.U32(0);  // invarsec: the numbers may change at any time
  }
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::FsInfo(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg root = DecodeHandleArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(root.status, out)) return AcceptStat::kSuccess;
  fs::FsResult<fs::Attr> attr = fs_.GetAttr(cred, root.ino);
  out.U32(ErrnoToNfsstat(attr.error()));
  EncodePostOpAttr(out, attr);
  if (!attr.ok()) return AcceptStat::kSuccess;
  out.U32(kMaxIoBytes);  // rtmax
  out.U32(kMaxIoBytes);  // rtpref
  out.U32(fs::kBlockSize);  // rtmult
  out.U32(kMaxIoBytes);  // wtmax
  out.U32(kMaxIoBytes);  // wtpref
  out.U32(fs::kBlockSize);  // wtmult
  out.U32(kPreferredReadDirBytes);
  out.U64(fs::kMaxFileSize);
  out.U32(0);  // time_delta: nanosecond timestamps
  out.U32(1);
  out.U32(kFsfLink | kFsfSymlink | kFsfHomogeneous | kFsfCanSetTime);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::PathConf(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(file.status, out)) return AcceptStat::kSuccess;
  fs::FsResult<fs::Attr> attr = fs_.GetAttr(cred, file.ino);
  out.U32(ErrnoToNfsstat(attr.error()));
  EncodePostOpAttr(out, attr);
  if (!attr.ok()) return AcceptStat::kSuccess;
  out.U32(fs::kMaxLinks);
  out.U32(fs::kNameMax);
  out.Bool(true);   // no_trunc: long names are refused, not cut
  out.Bool(true);   // chown_restricted
  out.Bool(false);  // case_insensitive
  out.Bool(true);   // case_preserving
  return AcceptStat::kSuccess;
}

}  // namespace pail::nfs
