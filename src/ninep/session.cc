#include "ninep/session.h"

#include <algorithm>

#include "metrics/protocol_metrics.h"

namespace pail::ninep {

using fs::FsError;
using fs::FsResult;
using fs::FsStatus;

Qid QidOf(fs::Ino ino, uint32_t type) {
  Qid q;
  q.type = S_ISDIR(type) ? kQidDir : S_ISLNK(type) ? kQidSymlink : kQidFile;
  q.path = ino;
  return q;
}

Qid QidOf(const fs::Attr& attr) { return QidOf(attr.ino, attr.type()); }

FsStatus CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return FsError{EINVAL};
  }
  if (name.size() > fs::kNameMax) return FsError{ENAMETOOLONG};
  return FsStatus::OK();
}

Session::Session(fs::FileSystem& fs, fs::ByteRangeLocks& locks, SessionOptions options,
                 uint64_t id)
    : fs_(fs),
      locks_(locks),
      options_(options),
      id_(id),
      msize_(std::max(options.max_msize, kMinMsize)),
      fids_(options.max_fids) {}

Session::~Session() {
  fids_.Clear();
  locks_.ReleaseSession(id_);
}

std::string Session::ErrorReply(uint16_t tag, int errno_value) {
  WireWriter w(kRlerror, tag);
  w.U32(static_cast<uint32_t>(errno_value == fs::kErrNotSync ? EINVAL : errno_value));
  return w.Finish();
}

FsResult<std::shared_ptr<Fid>> Session::Lookup(uint32_t fid) const {
  std::shared_ptr<Fid> f = fids_.Get(fid);
  if (!f) return FsError{EBADF};
  return f;
}

FsResult<std::shared_ptr<Fid>> Session::FileFid(uint32_t fid) const {
  std::shared_ptr<Fid> f = fids_.Get(fid);
  if (!f || f->Snapshot().kind != FidKind::kFile) return FsError{EBADF};
  return f;
}

namespace {

// The metrics' op label: a fixed set, whatever a client sends.
std::string_view MessageName(uint8_t type) {
  switch (type) {
    case kTversion: return "version";
    case kTauth: return "auth";
    case kTattach: return "attach";
    case kTwalk: return "walk";
    case kTclunk: return "clunk";
    case kTremove: return "remove";
    case kTlopen: return "lopen";
    case kTlcreate: return "lcreate";
    case kTread: return "read";
    case kTwrite: return "write";
    case kTfsync: return "fsync";
    case kTreaddir: return "readdir";
    case kTstatfs: return "statfs";
    case kTgetattr: return "getattr";
    case kTsetattr: return "setattr";
    case kTmkdir: return "mkdir";
    case kTsymlink: return "symlink";
    case kTmknod: return "mknod";
    case kTlink: return "link";
    case kTreadlink: return "readlink";
    case kTrename: return "rename";
    case kTrenameat: return "renameat";
    case kTunlinkat: return "unlinkat";
    case kTxattrwalk: return "xattrwalk";
    case kTxattrcreate: return "xattrcreate";
    case kTlock: return "lock";
    case kTgetlock: return "getlock";
    case kTflush: return "flush";
    default: return "other";
  }
}

}  // namespace

std::string Session::Handle(std::string_view request) {
  return *Run(request, /*may_wait=*/true);
}

std::optional<std::string> Session::TryHandle(std::string_view request) {
  return Run(request, /*may_wait=*/false);
}

std::optional<std::string> Session::Run(std::string_view request, bool may_wait) {
  WireReader r(request);
  r.U32();  // size: the transport framed the message by it
  uint8_t type = r.U8();
  uint16_t tag = r.U16();
  if (!r.ok()) return ErrorReply(kNoTag, EINVAL);
  auto op = metrics::ProtocolMetrics::For("9p").Start(MessageName(type));
  Reply reply = Dispatch(type, tag, r, may_wait);
  // Refused: nothing happened, so nothing is counted (the retry is).
  if (!may_wait && !reply.ok() && reply.error() == EWOULDBLOCK) return std::nullopt;
  op.Done(reply.ok() ? 0 : reply.error());
  if (!reply.ok()) return ErrorReply(tag, reply.error());
  return std::move(reply).value();
}

Session::Reply Session::Dispatch(uint8_t type, uint16_t tag, WireReader& r, bool may_wait) {
  Reply reply = FsError{EOPNOTSUPP};
  switch (type) {
    case kTversion: reply = Version(r, tag); break;
    case kTauth:
      // No authentication protocol: identities come from Tattach and the
      // server's policy. The Linux client attaches with afid = NOFID.
      reply = FsError{EOPNOTSUPP};
      break;
    case kTattach: reply = Attach(r, tag); break;
    case kTwalk: reply = Walk(r, tag); break;
    case kTclunk: reply = Clunk(r, tag); break;
    case kTremove: reply = Remove(r, tag); break;
    case kTlopen: reply = Lopen(r, tag); break;
    case kTlcreate: reply = Lcreate(r, tag); break;
    case kTread: reply = Read(r, tag, may_wait); break;
    case kTwrite: reply = Write(r, tag, may_wait); break;
    case kTfsync: reply = Fsync(r, tag); break;
    case kTreaddir: reply = Readdir(r, tag); break;
    case kTstatfs: reply = Statfs(r, tag); break;
    case kTgetattr: reply = Getattr(r, tag); break;
    case kTsetattr: reply = Setattr(r, tag); break;
    case kTmkdir: reply = Mkdir(r, tag); break;
    case kTsymlink: reply = Symlink(r, tag); break;
    case kTmknod: reply = Mknod(r, tag); break;
    case kTlink: reply = Link(r, tag); break;
    case kTreadlink: reply = Readlink(r, tag); break;
    case kTrename: reply = Rename(r, tag); break;
    case kTrenameat: reply = Renameat(r, tag); break;
    case kTunlinkat: reply = Unlinkat(r, tag); break;
    case kTxattrwalk: reply = Xattrwalk(r, tag); break;
    case kTxattrcreate: reply = Xattrcreate(r, tag); break;
    case kTlock: reply = Lock(r, tag); break;
    case kTgetlock: reply = Getlock(r, tag); break;
    case kTflush: {
      // Reached only when the transport found nothing pending to flush.
      WireWriter w(kRflush, tag);
      reply = w.Finish();
      break;
    }
    default: reply = FsError{EOPNOTSUPP}; break;  // also 9P2000/9P2000.u messages
  }
  return reply;
}

// Tversion msize[4] version[s] -> Rversion msize[4] version[s]. Starts a
// fresh session: every fid is clunked.
Session::Reply Session::Version(WireReader& r, uint16_t tag) {
  uint32_t client_msize = r.U32();
  std::string_view version = r.String();
  if (!r.done()) return FsError{EINVAL};
  fids_.Clear();
  WireWriter w(kRversion, tag);
  // "9P2000.L" and extensions of it ("9P2000.L.foo") speak 9P2000.L.
  if (version.substr(0, sizeof(kVersion9P2000L) - 1) != kVersion9P2000L ||
      client_msize < kMinMsize) {
    w.U32(std::max(options_.max_msize, kMinMsize));
    w.String("unknown");
    return w.Finish();
  }
  uint32_t msize = std::min(client_msize, std::max(options_.max_msize, kMinMsize));
  msize_ = msize;
  w.U32(msize);
  w.String(kVersion9P2000L);
  return w.Finish();
}

// Tattach fid[4] afid[4] uname[s] aname[s] n_uname[4] -> Rattach qid.
// aname selects a directory below the root ("" and "/" are the root).
Session::Reply Session::Attach(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint32_t afid = r.U32();
  std::string_view uname = r.String();
  std::string_view aname = r.String();
  uint32_t n_uname = r.U32();
  if (!r.done()) return FsError{EINVAL};
  if (afid != kNoFid) return FsError{EINVAL};  // no Tauth ever succeeds
  auto cred = std::make_shared<const fs::Credentials>(
      ResolveIdentity(options_.identity, n_uname, uname));
  FsResult<fs::Attr> attr = fs_.GetAttr(*cred, fs::kRootIno);
  size_t pos = 0;
  while (attr.ok() && pos < aname.size()) {
    size_t slash = aname.find('/', pos);
    if (slash == std::string_view::npos) slash = aname.size();
    std::string_view part = aname.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return FsError{EINVAL};
    attr = fs_.Lookup(*cred, attr->ino, part);
  }
  if (!attr.ok()) return attr.status();
  if (!attr->is_dir()) return FsError{ENOTDIR};
  FidState state;
  state.ino = attr->ino;
  state.type = attr->type();
  NINEP_RETURN_IF_ERROR(
      fids_.Insert(fid, std::make_shared<Fid>(fs_, cred, attr->ino, std::move(state))));
  attached_ = true;
  WireWriter w(kRattach, tag);
  w.QidField(QidOf(*attr));
  return w.Finish();
}

// Twalk fid[4] newfid[4] nwname[2] nwname*wname[s] -> Rwalk nwqid[2] qid*.
// A walk that fails on its first name is an error; one that fails later
// returns the qids so far and leaves newfid unused. ".." stops at the
// attach root.
Session::Reply Session::Walk(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint32_t newfid = r.U32();
  uint16_t count = r.U16();
  if (!r.ok() || count > kMaxWalkNames) return FsError{EINVAL};
  std::string_view names[kMaxWalkNames];
  for (uint16_t i = 0; i < count; i++) names[i] = r.String();
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> from, FileFid(fid));
  FidState start = from->Snapshot();
  if (newfid != fid && fids_.Get(newfid)) return FsError{EBADF};

  FidState state;
  state.ino = start.ino;
  state.type = start.type;
  state.parent = start.parent;
  state.name = start.name;
  WireWriter w(kRwalk, tag);
  w.U16(0);
  uint16_t walked = 0;
  for (uint16_t i = 0; i < count; i++) {
    std::string_view name = names[i];
    if (name.empty() || name.find('/') != std::string_view::npos) {
      if (i == 0) return FsError{EINVAL};
      break;
    }
    bool at_root = state.ino == from->attach_root();
    if (name == ".." && at_root) name = ".";
    FsResult<fs::Attr> attr = fs_.Lookup(from->cred(), state.ino, name);
    if (!attr.ok()) {
      if (i == 0) return attr.status();
      break;
    }
    if (name == "." || name == "..") {
      // Keep no name for the parent link of these: Trename/Tremove on them
      // resolve through the real entry only when walked by name.
      state.parent = 0;
      state.name.clear();
    } else {
      state.parent = state.ino;
      state.name = std::string(name);
    }
    state.ino = attr->ino;
    state.type = attr->type();
    w.QidField(QidOf(*attr));
    walked++;
  }
  std::string reply = w.Finish();
  // nwqid sits right after the 7-byte header.
  reply[kHeaderBytes] = static_cast<char>(walked & 0xff);
  reply[kHeaderBytes + 1] = static_cast<char>(walked >> 8);
  if (walked == count) {
    NINEP_RETURN_IF_ERROR(fids_.Insert(
        newfid, std::make_shared<Fid>(fs_, from->shared_cred(), from->attach_root(), state),
        /*replace=*/newfid == fid));
  }
  return reply;
}

// Tclunk fid[4]. An xattr fid being written sets (or, written empty with
// XATTR_REPLACE, removes) the attribute now, and reports its error here.
Session::Reply Session::Clunk(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  std::shared_ptr<Fid> f = fids_.Remove(fid);
  if (!f) return FsError{EBADF};
  FidState state = f->Snapshot();
  if (state.kind == FidKind::kXattrWrite) {
    if (state.xattr_data.size() != state.xattr_size) return FsError{EINVAL};
    if (state.xattr_size == 0 && state.xattr_flags == fs::kXattrReplace) {
      NINEP_RETURN_IF_ERROR(fs_.RemoveXattr(f->cred(), state.ino, state.xattr_name));
    } else {
      NINEP_RETURN_IF_ERROR(fs_.SetXattr(f->cred(), state.ino, state.xattr_name,
                                           state.xattr_data, state.xattr_flags));
    }
  }
  WireWriter w(kRclunk, tag);
  return w.Finish();
}

// Tremove fid[4]: unlinks what the fid was walked to and clunks the fid,
// whether or not the unlink worked.
Session::Reply Session::Remove(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  std::shared_ptr<Fid> f = fids_.Remove(fid);
  if (!f) return FsError{EBADF};
  FidState state = f->Snapshot();
  if (state.parent == 0 || state.name.empty()) return FsError{EBUSY};
  FsStatus s = S_ISDIR(state.type) ? fs_.Rmdir(f->cred(), state.parent, state.name)
                                   : fs_.Unlink(f->cred(), state.parent, state.name);
  NINEP_RETURN_IF_ERROR(s);
  WireWriter w(kRremove, tag);
  return w.Finish();
}

}  // namespace pail::ninep
