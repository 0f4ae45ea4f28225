// Names: lookup, create, mkdir, mknod, symlink, readlink, link, unlink, rmdir.
#include <fcntl.h>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
bool IsDotOrDotDot(std::string_view name) { return name == "." || name == ".."; }
// Unlocked lookups race with renames; this many retries is far beyond what
// any real interleaving needs.
constexpr int kMaxRaceRetries = 64;
}  // namespace

FsResult<Attr> FileSystemImpl::Lookup(const Credentials& cred, Ino parent, std::string_view name) {
  if (name.size() > kNameMax) return FsError{ENAMETOOLONG};
  if (name.empty()) return FsError{ENOENT};
  // Directories never have write-back state: their records are read
  // without a lock, like any consistent engine read.
  FsResult<InodeRecord> p = LoadStoredInode(parent);
  if (!p.ok()) return p.status();
  if (!p->is_dir()) return FsError{ENOTDIR};
  if (!MayAccess(cred, *p, kMayExec)) return FsError{EACCES};
  if (name == ".") return ToAttr(parent, *p);
  if (name == "..") return GetAttrLocking(p->parent);
  FsResult<std::optional<DirEntryValue>> e = LookupEntry(parent, name);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return FsError{ENOENT};
  FsResult<Attr> child = GetAttrLocking((*e)->ino);
  if (!child.ok() && child.error() == ESTALE) return FsError{ENOENT};  // removed meanwhile
  return child;
}

FsResult<Attr> FileSystemImpl::CreateNode(const Credentials& cred, Ino parent,
                                          std::string_view name, InodeRecord proto,
                                          uint64_t* handle_out, int open_flags) {
  if (int e = CheckNewName(name)) return FsError{e};
  if (IsDotOrDotDot(name)) return FsError{EEXIST};
  InodeLocks lock(locks_, {parent});
  FsResult<InodeRecord> p = LoadWritableDir(cred, parent);
  if (!p.ok()) return p.status();
  FsResult<std::optional<DirEntryValue>> existing = LookupEntry(parent, name);
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) return FsError{EEXIST};
  InodeRecord r = std::move(proto);
  bool is_dir = r.is_dir();
  if (is_dir && p->nlink >= kMaxLinks) return FsError{EMLINK};
  // The new number needs no lock: nobody can name it before the commit.
  FsResult<Ino> ino = AllocateIno();
  if (!ino.ok()) return ino.status();
  r.generation = NewGeneration();
  r.uid = cred.uid;
  bool setgid_parent = (p->mode & S_ISGID) != 0;
  r.gid = setgid_parent ? p->gid : cred.gid;
  if (is_dir) {
    if (setgid_parent) r.mode |= S_ISGID;  // the group keeps passing down
    r.nlink = 2;
    r.parent = parent;
    r.entries = 0;
    r.next_cookie = kFirstEntryCookie;
  } else {
    r.nlink = 1;
    if (setgid_parent && (r.mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
        !cred.is_root() && !cred.InGroup(r.gid)) {
      r.mode &= ~S_ISGID;
    }
  }
  struct timespec now = NowTimespec();
  r.atime = r.mtime = r.ctime = now;
  Txn txn;
  // Not PutInode: the new number is this call's alone (unlocked) until the
  // commit publishes it.
  txn.batch.Put(meta_, InodeKey(*ino), EncodeInode(r));
  txn.inodes.emplace_back(*ino, r);
  InodeRecord dir = *p;
  AddEntry(txn, parent, dir, name, *ino, r.type(), now);
  if (is_dir) dir.nlink++;
  PutInode(txn, parent, dir);
  txn.inodes_delta = 1;
  // Nobody can name the new inode before the commit: it has no xattrs,
  // and a new directory no entries.
  xattr_free_.Add(*ino);
  if (is_dir) complete_dirs_.Add(*ino);
  FsStatus c = Commit(txn);
  if (!c.ok()) {
    xattr_free_.Remove(*ino);
    if (is_dir) complete_dirs_.Remove(*ino);
    return c;
  }
  if (handle_out != nullptr) {
    MutexLock g(&handles_mu_);
    *handle_out = next_handle_++;
    handles_[*handle_out] = OpenHandle{*ino, open_flags};
    open_counts_[*ino]++;
  }
  return ToAttr(*ino, r);
}

FsResult<CreateResult> FileSystemImpl::Create(const Credentials& cred, Ino parent,
                                              std::string_view name, uint32_t mode,
                                              const CreateOptions& options) {
  InodeRecord proto;
  proto.mode = S_IFREG | (mode & 07777);
  if (options.open_flags && (*options.open_flags & O_ACCMODE) == O_ACCMODE) {
    return FsError{EINVAL};
  }
  for (int attempt = 0; attempt < kMaxRaceRetries; ++attempt) {
    CreateResult result;
    FsResult<Attr> created =
        CreateNode(cred, parent, name, proto, options.open_flags ? &result.handle : nullptr,
                   options.open_flags.value_or(0));
    if (created.ok()) {
      result.attr = *created;
      result.created = true;
      return result;
    }
    if (created.error() != EEXIST || options.exclusive) return created.status();
    // The name exists: open(O_CREAT) without O_EXCL opens it.
    FsResult<Attr> found = Lookup(cred, parent, name);
    if (!found.ok()) {
      if (found.error() == ENOENT) continue;  // removed meanwhile: create again
      return found.status();
    }
    if (found->is_dir()) return FsError{EISDIR};
    // ESTALE below: the file was removed after the lookup; start over.
    if (options.open_flags) {
      int flags = *options.open_flags | (options.truncate ? O_TRUNC : 0);
      FsResult<uint64_t> h = Open(cred, found->ino, flags);
      if (!h.ok() && h.error() == ESTALE) continue;
      if (!h.ok()) return h.status();
      result.handle = *h;
    } else if (options.truncate && found->is_reg()) {
      SetAttrRequest req;
      req.size = 0;
      FsResult<Attr> t = SetAttr(cred, found->ino, req);
      if (!t.ok() && t.error() == ESTALE) continue;
      if (!t.ok()) return t.status();
    }
    FsResult<Attr> attr = GetAttrLocking(found->ino);
    if (!attr.ok() && attr.error() == ESTALE && result.handle == 0) continue;
    if (!attr.ok()) {
      // Opened, then unlinked by someone else: the handle keeps it alive,
      // so this only fails on a real error.
      if (result.handle != 0) (void)Release(result.handle);
      return attr.status();
    }
    result.attr = *attr;
    return result;
  }
  return FsError{EIO};
}

FsResult<Attr> FileSystemImpl::Mkdir(const Credentials& cred, Ino parent, std::string_view name,
                                     uint32_t mode) {
  InodeRecord proto;
  proto.mode = S_IFDIR | (mode & 07777);
  return CreateNode(cred, parent, name, std::move(proto), nullptr, 0);
}

FsResult<Attr> FileSystemImpl::Mknod(const Credentials& cred, Ino parent, std::string_view name,
                                     uint32_t mode, uint64_t rdev) {
  InodeRecord proto;
  uint32_t type = mode & S_IFMT;
  switch (type) {
    case S_IFREG:
    case S_IFIFO:
    case S_IFSOCK:
      break;
    case S_IFCHR:
    case S_IFBLK:
      if (!cred.is_root()) return FsError{EPERM};
      proto.rdev = rdev;
      break;
    case 0:
      type = S_IFREG;  // mknod(2): a zero type means a regular file
      break;
    default:
      return FsError{EINVAL};
  }
  proto.mode = type | (mode & 07777);
  return CreateNode(cred, parent, name, std::move(proto), nullptr, 0);
}

FsResult<Attr> FileSystemImpl::Symlink(const Credentials& cred, Ino parent,
                                       std::string_view name, std::string_view target) {
  if (target.empty()) return FsError{ENOENT};
  if (target.size() > kSymlinkMax) return FsError{ENAMETOOLONG};
  if (target.find('\0') != std::string_view::npos) return FsError{EINVAL};
  InodeRecord proto;
  proto.mode = S_IFLNK | 0777;
  proto.symlink_target.assign(target);
  proto.size = target.size();
  return CreateNode(cred, parent, name, std::move(proto), nullptr, 0);
}

FsResult<std::string> FileSystemImpl::Readlink(const Credentials& cred, Ino ino) {
  FsResult<InodeRecord> r = LoadStoredInode(ino);
  if (!r.ok()) return r.status();
  if (!S_ISLNK(r->mode)) return FsError{EINVAL};
  return std::move(r->symlink_target);
}

FsResult<Attr> FileSystemImpl::Link(const Credentials& cred, Ino ino, Ino new_parent,
                                    std::string_view new_name) {
  if (int e = CheckNewName(new_name)) return FsError{e};
  if (IsDotOrDotDot(new_name)) return FsError{EEXIST};
  InodeLocks lock(locks_, {ino, new_parent});
  FsResult<InodeRecord> c = LoadInode(ino);
  if (!c.ok()) return c.status();
  FsResult<InodeRecord> p = LoadWritableDir(cred, new_parent);
  if (!p.ok()) return p.status();
  FsResult<std::optional<DirEntryValue>> existing = LookupEntry(new_parent, new_name);
  if (!existing.ok()) return existing.status();
  if (existing->has_value()) return FsError{EEXIST};
  if (c->is_dir()) return FsError{EPERM};
  if (c->nlink == 0) return FsError{ENOENT};
  if (c->nlink >= kMaxLinks) return FsError{EMLINK};
  struct timespec now = NowTimespec();
  Txn txn;
  InodeRecord dir = *p;
  InodeRecord file = *c;
  AddEntry(txn, new_parent, dir, new_name, ino, file.type(), now);
  file.nlink++;
  file.ctime = now;
  PutInode(txn, new_parent, dir);
  PutInode(txn, ino, file);
  FsStatus s = Commit(txn);
  if (!s.ok()) return s;
  return ToAttr(ino, file);
}

FsStatus FileSystemImpl::RemoveName(const Credentials& cred, Ino parent, std::string_view name,
                                    const RemoveNamed& remove) {
  for (int attempt = 0; attempt < kMaxRaceRetries; ++attempt) {
    FsResult<std::optional<DirEntryValue>> guess = LookupEntry(parent, name);
    if (!guess.ok()) return guess.status();
    Ino child = guess->has_value() ? (*guess)->ino : 0;
    InodeLocks lock(locks_, {parent, child});
    FsResult<InodeRecord> p = LoadInode(parent);
    if (!p.ok()) return p.status();
    if (!p->is_dir()) return FsError{ENOTDIR};
    if (!MayAccess(cred, *p, kMayExec)) return FsError{EACCES};
    FsResult<std::optional<DirEntryValue>> e = LookupEntry(parent, name);
    if (!e.ok()) return e.status();
    if (!e->has_value()) return FsError{ENOENT};
    if ((*e)->ino != child) continue;  // replaced before we locked it
    if (!MayAccess(cred, *p, kMayWrite)) return FsError{EACCES};
    FsResult<InodeRecord> c = LoadInode(child);
    if (!c.ok()) return c.error() == ESTALE ? FsStatus(FsError{EIO}) : c.status();
    Txn txn;
    InodeRecord dir = *p;
    InodeRecord victim = *c;
    FsStatus s = remove(txn, dir, **e, victim);
    if (!s.ok()) return s;
    return Commit(txn);
  }
  return FsError{EIO};
}

FsStatus FileSystemImpl::Unlink(const Credentials& cred, Ino parent, std::string_view name) {
  if (name.size() > kNameMax) return FsError{ENAMETOOLONG};
  if (name.empty()) return FsError{ENOENT};
  if (IsDotOrDotDot(name)) return FsError{EISDIR};
  return RemoveName(cred, parent, name,
                    [&](Txn& txn, InodeRecord& dir, const DirEntryValue& entry,
                        InodeRecord& file) -> FsStatus {
                      if (file.is_dir()) return FsError{EISDIR};
                      if (!StickyAllows(cred, dir, file)) return FsError{EPERM};
                      struct timespec now = NowTimespec();
                      RemoveEntry(txn, parent, dir, name, entry, now);
                      PutInode(txn, parent, dir);
                      file.ctime = now;
                      if (file.nlink <= 1) {
                        DropInode(txn, entry.ino, file);
                      } else {
                        file.nlink--;
                        PutInode(txn, entry.ino, file);
                      }
                      return {};
                    });
}

FsStatus FileSystemImpl::Rmdir(const Credentials& cred, Ino parent, std::string_view name) {
  if (name.size() > kNameMax) return FsError{ENAMETOOLONG};
  if (name.empty()) return FsError{ENOENT};
  if (name == ".") return FsError{EINVAL};
  if (name == "..") return FsError{ENOTEMPTY};
  return RemoveName(cred, parent, name,
                    [&](Txn& txn, InodeRecord& dir, const DirEntryValue& entry,
                        InodeRecord& victim) -> FsStatus {
                      if (!victim.is_dir()) return FsError{ENOTDIR};
                      if (victim.entries > 0) return FsError{ENOTEMPTY};
                      if (!StickyAllows(cred, dir, victim)) return FsError{EPERM};
                      struct timespec now = NowTimespec();
                      RemoveEntry(txn, parent, dir, name, entry, now);
                      if (dir.nlink > 2) dir.nlink--;
                      PutInode(txn, parent, dir);
                      victim.ctime = now;
                      DropInode(txn, entry.ino, victim);
                      return {};
                    });
}

}  // namespace pail::fs
