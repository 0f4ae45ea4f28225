// CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME and LINK: the
// procedures that change directories.
#include <sys/sysmacros.h>

#include "nfs/nfs3_args.h"
#include "nfs/nfs3_program.h"

namespace pail::nfs {

namespace {

enum CreateMode : uint32_t {
  kUnchecked = 0,
  kGuarded = 1,
  kExclusive = 2,
};

constexpr uint32_t kDefaultFileMode = 0644;
constexpr uint32_t kDefaultDirMode = 0755;
// An EXCLUSIVE create gets no attributes; the client sends them in a SETATTR
// right after. Until then only the owner may use the file.
constexpr uint32_t kExclusiveCreateMode = 0600;

// RFC 1813 §3.3.8: the server keeps the EXCLUSIVE verifier with the file so
// a retransmitted CREATE succeeds. Like knfsd, it lives in the file's atime
// and mtime seconds (high and low halves) until the client's SETATTR
// replaces them.
struct timespec VerifierHalf(uint64_t verifier, bool high) {
  struct timespec t {};
  t.tv_sec = static_cast<uint32_t>(high ? verifier >> 32 : verifier);
  return t;
}

bool CarriesVerifier(const fs::Attr& attr, uint64_t verifier) {
  struct timespec hi = VerifierHalf(verifier, true), lo = VerifierHalf(verifier, false);
  return attr.is_reg() && attr.atime.tv_sec == hi.tv_sec && attr.atime.tv_nsec == 0 &&
         attr.mtime.tv_sec == lo.tv_sec && attr.mtime.tv_nsec == 0;
}

}  // namespace

void Nfs3Program::FinishCreate(const Cred& cred, fs::Ino dir,
                               const std::optional<fs::Attr>& dir_before,
                               fs::FsResult<fs::Attr> created, const Sattr3* extra,
                               XdrEncoder& out) {
  if (created.ok() && extra && extra->has_owner_or_times()) {
    fs::SetAttrRequest request;
    request.uid = extra->uid;
    request.gid = extra->gid;
    request.atime = extra->atime;
    request.mtime = extra->mtime;
    fs::FsResult<fs::Attr> updated = fs_.SetAttr(cred, created->ino, request);
    // The object exists either way; a refused chown is reported like knfsd does.
    created = updated;
  }
  std::optional<fs::Attr> dir_after = AttrOrNothing(cred, dir);
  Nfsstat3 status = ErrnoToNfsstat(created.error());
  if (status == NFS3_OK) status = MakeDurable(cred, dir);
  out.U32(status);
  if (status == NFS3_OK) {
    EncodePostOpHandle(out, *created);
    EncodePostOpAttr(out, &*created);
  }
  EncodeWcc(out, dir_before, dir_after);
}

AcceptStat Nfs3Program::Create(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  DirOpArg where = DecodeDirOpArg(args, fs_);
  uint32_t mode = args.U32();
  Sattr3 sattr;
  uint64_t verifier = 0;
  if (mode == kUnchecked || mode == kGuarded) {
    DecodeSattr3(args, &sattr);
  } else if (mode == kExclusive) {
    verifier = args.U64();
  } else {
    args.Fail();
  }
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (where.status() != NFS3_OK) {
    out.U32(where.status());
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> dir_before = AttrOrNothing(cred, where.dir.ino);

  fs::CreateOptions options;
  if (mode == kExclusive) {
    options.exclusive = true;
    fs::FsResult<fs::CreateResult> made =
        fs_.Create(cred, where.dir.ino, where.name, kExclusiveCreateMode, options);
    fs::FsResult<fs::Attr> result = made.status();
    if (made.ok()) {
      fs::SetAttrRequest stamp;
      stamp.atime = fs::TimeChange::At(VerifierHalf(verifier, true));
      stamp.mtime = fs::TimeChange::At(VerifierHalf(verifier, false));
      result = fs_.SetAttr(cred, made->attr.ino, stamp);
    } else if (made.error() == EEXIST) {
      // A retransmission of a CREATE that already succeeded is not an error.
      fs::FsResult<fs::Attr> existing = fs_.Lookup(cred, where.dir.ino, where.name);
      if (existing.ok() && CarriesVerifier(*existing, verifier)) result = existing;
    }
    FinishCreate(cred, where.dir.ino, dir_before, std::move(result), nullptr, out);
    return AcceptStat::kSuccess;
  }

  options.exclusive = mode == kGuarded;
  options.truncate = sattr.size.has_value() && *sattr.size == 0;
  fs::FsResult<fs::CreateResult> made =
      fs_.Create(cred, where.dir.ino, where.name, sattr.mode.value_or(kDefaultFileMode), options);
  fs::FsResult<fs::Attr> result = made.status();
  if (made.ok()) {
    result = made->attr;
    if (sattr.size && *sattr.size != 0) {
      fs::SetAttrRequest resize;
      resize.size = sattr.size;
      result = fs_.SetAttr(cred, made->attr.ino, resize);
    }
  }
  // Owner and times apply only to a file this call created.
  bool created = made.ok() && made->created;
  FinishCreate(cred, where.dir.ino, dir_before, std::move(result), created ? &sattr : nullptr, out);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Mkdir(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  DirOpArg where = DecodeDirOpArg(args, fs_);
  Sattr3 sattr;
  DecodeSattr3(args, &sattr);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (where.status() != NFS3_OK) {
    out.U32(where.status());
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> dir_before = AttrOrNothing(cred, where.dir.ino);
  fs::FsResult<fs::Attr> made =
      fs_.Mkdir(cred, where.dir.ino, where.name, sattr.mode.value_or(kDefaultDirMode));
  FinishCreate(cred, where.dir.ino, dir_before, std::move(made), &sattr, out);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Symlink(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  DirOpArg where = DecodeDirOpArg(args, fs_);
  Sattr3 sattr;
  DecodeSattr3(args, &sattr);
  std::string_view target = args.String(kMaxDecodedPath);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  Nfsstat3 status = where.status();
  if (status == NFS3_OK && target.size() > fs::kSymlinkMax) status = NFS3ERR_NAMETOOLONG;
  if (status != NFS3_OK) {
    out.U32(status);
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> dir_before = AttrOrNothing(cred, where.dir.ino);
  fs::FsResult<fs::Attr> made = fs_.Symlink(cred, where.dir.ino, where.name, target);
  // A symlink's mode is always 0777; only owner and times are meaningful.
  FinishCreate(cred, where.dir.ino, dir_before, std::move(made), &sattr, out);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Mknod(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  DirOpArg where = DecodeDirOpArg(args, fs_);
  uint32_t type = args.U32();
  Sattr3 sattr;
  uint32_t major_number = 0, minor_number = 0;
  uint32_t mode_type = 0;
  switch (type) {
    case NF3CHR:
    case NF3BLK:
      DecodeSattr3(args, &sattr);
      major_number = args.U32();
      minor_number = args.U32();
      mode_type = type == NF3CHR ? S_IFCHR : S_IFBLK;
      break;
    case NF3SOCK:
    case NF3FIFO:
      DecodeSattr3(args, &sattr);
      mode_type = type == NF3SOCK ? S_IFSOCK : S_IFIFO;
      break;
    case NF3REG:
    case NF3DIR:
    case NF3LNK:
      break;  // valid ftype3 values that MKNOD does not make
    default:
      args.Fail();
  }
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  Nfsstat3 status = where.status();
  if (status == NFS3_OK && mode_type == 0) status = NFS3ERR_BADTYPE;
  if (status != NFS3_OK) {
    out.U32(status);
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> dir_before = AttrOrNothing(cred, where.dir.ino);
  uint32_t mode = mode_type | sattr.mode.value_or(kDefaultFileMode);
  fs::FsResult<fs::Attr> made = fs_.Mknod(cred, where.dir.ino, where.name, mode,
                                          makedev(major_number, minor_number));
  FinishCreate(cred, where.dir.ino, dir_before, std::move(made), &sattr, out);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Remove(const Cred& cred, XdrDecoder& args, XdrEncoder& out,
                               bool directory) {
  DirOpArg where = DecodeDirOpArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (where.status() != NFS3_OK) {
    out.U32(where.status());
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> before = AttrOrNothing(cred, where.dir.ino);
  fs::FsStatus removed = directory ? fs_.Rmdir(cred, where.dir.ino, where.name)
                                   : fs_.Unlink(cred, where.dir.ino, where.name);
  Nfsstat3 status = ErrnoToNfsstat(removed.error());
  if (status == NFS3_OK) status = MakeDurable(cred, where.dir.ino);
  out.U32(status);
  EncodeWcc(out, before, AttrOrNothing(cred, where.dir.ino));
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Rename(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  DirOpArg from = DecodeDirOpArg(args, fs_);
  DirOpArg to = DecodeDirOpArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  Nfsstat3 status = from.status() != NFS3_OK ? from.status() : to.status();
  if (status != NFS3_OK) {
    out.U32(status);
    EncodeWcc(out, std::nullopt, std::nullopt);
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> from_before = AttrOrNothing(cred, from.dir.ino);
  std::optional<fs::Attr> to_before =
      to.dir.ino == from.dir.ino ? from_before : AttrOrNothing(cred, to.dir.ino);
  fs::FsStatus renamed = fs_.Rename(cred, from.dir.ino, from.name, to.dir.ino, to.name);
  Nfsstat3 renamed_status = ErrnoToNfsstat(renamed.error());
  if (renamed_status == NFS3_OK) renamed_status = MakeDurable(cred, to.dir.ino);
  std::optional<fs::Attr> from_after = AttrOrNothing(cred, from.dir.ino);
  std::optional<fs::Attr> to_after =
      to.dir.ino == from.dir.ino ? from_after : AttrOrNothing(cred, to.dir.ino);
  out.U32(renamed_status);
  EncodeWcc(out, from_before, from_after);
  EncodeWcc(out, to_before, to_after);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Link(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  DirOpArg link = DecodeDirOpArg(args, fs_);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  Nfsstat3 status = file.status != NFS3_OK ? file.status : link.status();
  if (status != NFS3_OK) {
    out.U32(status);
    EncodePostOpAttr(out, nullptr);
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  std::optional<fs::Attr> dir_before = AttrOrNothing(cred, link.dir.ino);
  fs::FsResult<fs::Attr> linked = fs_.Link(cred, file.ino, link.dir.ino, link.name);
  Nfsstat3 linked_status = ErrnoToNfsstat(linked.error());
  if (linked_status == NFS3_OK) linked_status = MakeDurable(cred, link.dir.ino);
  out.U32(linked_status);
  if (linked.ok()) {
    EncodePostOpAttr(out, &*linked);
  } else {
    std::optional<fs::Attr> attr = AttrOrNothing(cred, file.ino);
    EncodePostOpAttr(out, attr ? &*attr : nullptr);
  }
  EncodeWcc(out, dir_before, AttrOrNothing(cred, link.dir.ino));
  return AcceptStat::kSuccess;
}

}  // namespace pail::nfs
