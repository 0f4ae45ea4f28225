#include "nfs/mount_program.h"

#include "nfs/file_handle.h"
#include "nfs/rpc.h"

namespace pail::nfs {

namespace {

enum MountProc : uint32_t {
  kNull = 0,
  kMnt = 1,
  kDump = 2,
  kUmnt = 3,
  kUmntAll = 4,
  kExport = 5,
};

enum MountStat3 : uint32_t {
  MNT3_OK = 0,
  MNT3ERR_PERM = 1,
  MNT3ERR_NOENT = 2,
  MNT3ERR_IO = 5,
  MNT3ERR_ACCES = 13,
  MNT3ERR_NOTDIR = 20,
  MNT3ERR_INVAL = 22,
  MNT3ERR_NAMETOOLONG = 63,
};

MountStat3 ErrnoToMountStat(int error) {
  switch (error) {
    case 0: return MNT3_OK;
    case EPERM: return MNT3ERR_PERM;
    case ENOENT: return MNT3ERR_NOENT;
    case EACCES: return MNT3ERR_ACCES;
    case ENOTDIR: return MNT3ERR_NOTDIR;
    case EINVAL: return MNT3ERR_INVAL;
    case ENAMETOOLONG: return MNT3ERR_NAMETOOLONG;
    default: return MNT3ERR_IO;
  }
}

// Client name for DUMP: the AUTH_SYS machine name, else the peer address.
std::string HostOf(const RpcCall& call, const CallContext& context) {
  const std::string& name = call.credentials.machine_name;
  return name.empty() ? context.peer_address : name;
}

}  // namespace

void MountProgram::Mount(const RpcCall& call, const std::string& host, std::string_view path,
                         XdrEncoder& out) {
  fs::Credentials cred;
  cred.uid = call.credentials.uid;
  cred.gid = call.credentials.gid;
  cred.groups = call.credentials.groups;
  // Relative paths name nothing; "" is taken as the root, as libnfs sends
  // it for URLs without a directory.
  if (!path.empty() && path[0] != '/') {
    out.U32(MNT3ERR_NOENT);
    return;
  }
  fs::FsResult<fs::Attr> current = fs_.GetAttr(cred, fs::kRootIno);
  size_t pos = 0;
  while (current.ok() && pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view component = path.substr(pos, end - pos);
    pos = end + 1;
    if (component.empty() || component == ".") continue;
    if (!current->is_dir()) {
      current = fs::FsError{ENOTDIR};
      break;
    }
    current = fs_.Lookup(cred, current->ino, component);
  }
  if (current.ok() && !current->is_dir()) current = fs::FsError{ENOTDIR};
  if (!current.ok()) {
    out.U32(ErrnoToMountStat(current.error()));
    return;
  }
  {
    MutexLock lock(&mu_);
    if (mounts_.size() >= kMaxMountEntries) mounts_.pop_front();
    mounts_.push_back({host, std::string(path)});
  }
  out.U32(MNT3_OK);
  out.Opaque(EncodeFileHandle(current->ino, current->generation));
  out.U32(1);  // auth_flavors<>: AUTH_SYS only
  out.U32(kAuthSys);
}

bool MountProgram::AnswerRefusedClient(const RpcCall& call, XdrEncoder& out) {
  if (call.procedure != kMnt) return false;
  out.U32(MNT3ERR_ACCES);
  return true;
}

AcceptStat MountProgram::Call(const RpcCall& call, const CallContext& context, XdrDecoder& args,
                              XdrEncoder& out) {
  switch (call.procedure) {
    case kNull:
      return AcceptStat::kSuccess;
    case kMnt: {
      std::string_view path = args.String(kMaxMountPath);
      if (!args.ok()) return AcceptStat::kGarbageArgs;
      Mount(call, HostOf(call, context), path, out);
      return AcceptStat::kSuccess;
    }
    case kDump: {
      MutexLock lock(&mu_);
      for (const MountEntry& entry : mounts_) {
        out.Bool(true);
        out.String(entry.host.substr(0, kMaxMountHostName));
        out.String(entry.path);
      }
      out.Bool(false);
      return AcceptStat::kSuccess;
    }
    case kUmnt: {
      std::string_view path = args.String(kMaxMountPath);
      if (!args.ok()) return AcceptStat::kGarbageArgs;
      std::string host = HostOf(call, context);
      MutexLock lock(&mu_);
      std::erase_if(mounts_, [&](const MountEntry& e) { return e.host == host && e.path == path; });
      return AcceptStat::kSuccess;
    }
    case kUmntAll: {
      std::string host = HostOf(call, context);
      MutexLock lock(&mu_);
      std::erase_if(mounts_, [&](const MountEntry& e) { return e.host == host; });
      return AcceptStat::kSuccess;
    }
    case kExport:
      // exports: one entry, "/", for the allowed client blocks (an empty
      // group list would mean every host).
      out.Bool(true);
      out.String(kExportPath);
      for (const std::string& clients : export_clients_) {
        out.Bool(true);
        out.String(clients);
      }
      out.Bool(false);
      out.Bool(false);
      return AcceptStat::kSuccess;
    default:
      return AcceptStat::kProcUnavail;
  }
}

}  // namespace pail::nfs
