// Creating, linking, renaming and removing names.
#include <sys/sysmacros.h>

#include "ninep/session.h"

namespace pail::ninep {

using fs::FsError;
using fs::FsResult;
using fs::FsStatus;

namespace {

std::string QidReply(uint8_t type, uint16_t tag, const fs::Attr& attr) {
  WireWriter w(type, tag);
  w.QidField(QidOf(attr));
  return w.Finish();
}

std::string EmptyReply(uint8_t type, uint16_t tag) {
  WireWriter w(type, tag);
  return w.Finish();
}

}  // namespace

// Tmkdir dfid[4] name[s] mode[4] gid[4] -> Rmkdir qid.
Session::Reply Session::Mkdir(WireReader& r, uint16_t tag) {
  uint32_t dfid = r.U32();
  std::string_view name = r.String();
  uint32_t mode = r.U32();
  uint32_t gid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> dir, FileFid(dfid));
  NINEP_ASSIGN_OR_RETURN(fs::Attr attr,
                         fs_.Mkdir(WithCreateGroup(options_.identity, dir->cred(), gid),
                                   dir->Snapshot().ino, name, mode & 07777));
  return QidReply(kRmkdir, tag, attr);
}

// Tsymlink fid[4] name[s] symtgt[s] gid[4] -> Rsymlink qid.
Session::Reply Session::Symlink(WireReader& r, uint16_t tag) {
  uint32_t dfid = r.U32();
  std::string_view name = r.String();
  std::string_view target = r.String();
  uint32_t gid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> dir, FileFid(dfid));
  NINEP_ASSIGN_OR_RETURN(fs::Attr attr,
                         fs_.Symlink(WithCreateGroup(options_.identity, dir->cred(), gid),
                                     dir->Snapshot().ino, name, target));
  return QidReply(kRsymlink, tag, attr);
}

// Tmknod dfid[4] name[s] mode[4] major[4] minor[4] gid[4] -> Rmknod qid.
Session::Reply Session::Mknod(WireReader& r, uint16_t tag) {
  uint32_t dfid = r.U32();
  std::string_view name = r.String();
  uint32_t mode = r.U32();
  uint32_t major = r.U32();
  uint32_t minor = r.U32();
  uint32_t gid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> dir, FileFid(dfid));
  NINEP_ASSIGN_OR_RETURN(fs::Attr attr,
                         fs_.Mknod(WithCreateGroup(options_.identity, dir->cred(), gid),
                                   dir->Snapshot().ino, name, mode & (S_IFMT | 07777),
                                   makedev(major, minor)));
  return QidReply(kRmknod, tag, attr);
}

// Tlink dfid[4] fid[4] name[s] -> Rlink.
Session::Reply Session::Link(WireReader& r, uint16_t tag) {
  uint32_t dfid = r.U32();
  uint32_t fid = r.U32();
  std::string_view name = r.String();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> dir, FileFid(dfid));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> target, FileFid(fid));
  NINEP_ASSIGN_OR_RETURN(fs::Attr attr, fs_.Link(dir->cred(), target->Snapshot().ino,
                                                 dir->Snapshot().ino, name));
  (void)attr;
  return EmptyReply(kRlink, tag);
}

// Treadlink fid[4] -> Rreadlink target[s].
Session::Reply Session::Readlink(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  NINEP_ASSIGN_OR_RETURN(std::string target, fs_.Readlink(f->cred(), f->Snapshot().ino));
  WireWriter w(kRreadlink, tag);
  w.String(target);  // at most kSymlinkMax bytes
  return w.Finish();
}

// Trename fid[4] dfid[4] name[s] -> Rrename: moves what fid was walked to
// into directory dfid as name; the fid follows it.
Session::Reply Session::Rename(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint32_t dfid = r.U32();
  std::string_view name = r.String();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> dir, FileFid(dfid));
  FidState state = f->Snapshot();
  if (state.parent == 0 || state.name.empty()) return FsError{EBUSY};
  fs::Ino new_parent = dir->Snapshot().ino;
  NINEP_RETURN_IF_ERROR(fs_.Rename(f->cred(), state.parent, state.name, new_parent, name));
  f->Update([&](FidState& s) {
    s.parent = new_parent;
    s.name = std::string(name);
  });
  return EmptyReply(kRrename, tag);
}

// Trenameat olddirfid[4] oldname[s] newdirfid[4] newname[s] -> Rrenameat.
Session::Reply Session::Renameat(WireReader& r, uint16_t tag) {
  uint32_t old_dfid = r.U32();
  std::string_view old_name = r.String();
  uint32_t new_dfid = r.U32();
  std::string_view new_name = r.String();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(old_name));
  NINEP_RETURN_IF_ERROR(CheckName(new_name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> old_dir, FileFid(old_dfid));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> new_dir, FileFid(new_dfid));
  NINEP_RETURN_IF_ERROR(fs_.Rename(old_dir->cred(), old_dir->Snapshot().ino, old_name,
                                   new_dir->Snapshot().ino, new_name));
  return EmptyReply(kRrenameat, tag);
}

// Tunlinkat dirfid[4] name[s] flags[4] -> Runlinkat; AT_REMOVEDIR is rmdir.
Session::Reply Session::Unlinkat(WireReader& r, uint16_t tag) {
  uint32_t dfid = r.U32();
  std::string_view name = r.String();
  uint32_t flags = r.U32();
  if (!r.done()) return FsError{EINVAL};
  NINEP_RETURN_IF_ERROR(CheckName(name));
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> dir, FileFid(dfid));
  fs::Ino ino = dir->Snapshot().ino;
  NINEP_RETURN_IF_ERROR((flags & kAtRemoveDir) ? fs_.Rmdir(dir->cred(), ino, name)
                                               : fs_.Unlink(dir->cred(), ino, name));
  return EmptyReply(kRunlinkat, tag);
}

}  // namespace pail::ninep
