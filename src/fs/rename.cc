// Rename: plain (replacing the target), no-replace and exchange.
//
// Entries are looked up without locks, then every inode involved is locked
// in slot order and the entries are checked again; a change in between
// means another try. Moving a directory to another parent also holds the
// rename mutex, so the walk up the parent pointers that refuses moving a
// directory into itself sees a tree no one else is rearranging.
#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
constexpr int kMaxRaceRetries = 64;
bool IsDotOrDotDot(std::string_view name) { return name == "." || name == ".."; }
bool SameEntry(const std::optional<DirEntryValue>& a, const std::optional<DirEntryValue>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || (a->ino == b->ino && a->cookie == b->cookie);
}
}  // namespace

FsStatus FileSystemImpl::Rename(const Credentials& cred, Ino parent, std::string_view name,
                                Ino new_parent, std::string_view new_name, RenameFlags flags) {
  if (name.size() > kNameMax || new_name.size() > kNameMax) return FsError{ENAMETOOLONG};
  if (name.empty()) return FsError{ENOENT};
  if (IsDotOrDotDot(name) || IsDotOrDotDot(new_name)) return FsError{EINVAL};
  if (int e = CheckNewName(new_name)) return FsError{e};
  const bool exchange = flags == RenameFlags::kExchange;

  for (int attempt = 0; attempt < kMaxRaceRetries; ++attempt) {
    FsResult<std::optional<DirEntryValue>> src_guess = LookupEntry(parent, name);
    if (!src_guess.ok()) return src_guess.status();
    FsResult<std::optional<DirEntryValue>> dst_guess = LookupEntry(new_parent, new_name);
    if (!dst_guess.ok()) return dst_guess.status();
    Ino src_ino = src_guess->has_value() ? (*src_guess)->ino : 0;
    Ino dst_ino = dst_guess->has_value() ? (*dst_guess)->ino : 0;
    bool moves_dir = parent != new_parent &&
                     ((src_guess->has_value() && S_ISDIR((*src_guess)->type)) ||
                      (exchange && dst_guess->has_value() && S_ISDIR((*dst_guess)->type)));
    ConditionalMutexLock tree_lock(&rename_mu_, moves_dir);
    InodeLocks lock(locks_, {parent, new_parent, src_ino, dst_ino});

    FsResult<InodeRecord> sp = LoadInode(parent);
    if (!sp.ok()) return sp.status();
    FsResult<InodeRecord> dp = parent == new_parent ? sp : LoadInode(new_parent);
    if (!dp.ok()) return dp.status();
    if (!sp->is_dir() || !dp->is_dir()) return FsError{ENOTDIR};
    if (!MayAccess(cred, *sp, kMayExec) || !MayAccess(cred, *dp, kMayExec)) return FsError{EACCES};
    FsResult<std::optional<DirEntryValue>> se = LookupEntry(parent, name);
    if (!se.ok()) return se.status();
    FsResult<std::optional<DirEntryValue>> de = LookupEntry(new_parent, new_name);
    if (!de.ok()) return de.status();
    if (!SameEntry(*se, *src_guess) || !SameEntry(*de, *dst_guess)) continue;
    if (!se->has_value()) return FsError{ENOENT};
    if (dp->nlink == 0) return FsError{ENOENT};
    if (de->has_value() && (*de)->ino == src_ino) return {};  // both names, one inode: no-op
    if (flags == RenameFlags::kNoReplace && de->has_value()) return FsError{EEXIST};
    if (exchange && !de->has_value()) return FsError{ENOENT};
    if (!MayAccess(cred, *sp, kMayWrite) || !MayAccess(cred, *dp, kMayWrite)) return FsError{EACCES};

    FsResult<InodeRecord> src = LoadInode(src_ino);
    if (!src.ok()) return src.error() == ESTALE ? FsStatus(FsError{EIO}) : src.status();
    std::optional<InodeRecord> dst;
    if (de->has_value()) {
      FsResult<InodeRecord> d = LoadInode(dst_ino);
      if (!d.ok()) return d.error() == ESTALE ? FsStatus(FsError{EIO}) : d.status();
      dst = *d;
    }
    if (!StickyAllows(cred, *sp, *src)) return FsError{EPERM};
    if (dst && !StickyAllows(cred, *dp, *dst)) return FsError{EPERM};
    const bool src_dir = src->is_dir();
    const bool dst_dir = dst && dst->is_dir();
    if (!exchange && dst) {
      if (src_dir && !dst_dir) return FsError{ENOTDIR};
      if (!src_dir && dst_dir) return FsError{EISDIR};
      if (dst_dir && dst->entries > 0) return FsError{ENOTEMPTY};
    }
    if (parent != new_parent) {
      // A directory changing parent rewrites its "..": it must be writable.
      if (src_dir && !MayAccess(cred, *src, kMayWrite)) return FsError{EACCES};
      if (exchange && dst_dir && !MayAccess(cred, *dst, kMayWrite)) return FsError{EACCES};
      // Refuse to move a directory below itself: walk up from the other side.
      auto is_ancestor = [&](Ino ancestor, Ino from) -> FsResult<bool> {
        Ino cur = from;
        for (int depth = 0; depth < 1 << 20; ++depth) {
          if (cur == ancestor) return true;
          if (cur == kRootIno) return false;
          FsResult<InodeRecord> r = LoadStoredInode(cur);
          if (!r.ok()) return r.status();
          cur = r->parent;
        }
        return FsError{ELOOP};
      };
      if (src_dir) {
        FsResult<bool> loop = is_ancestor(src_ino, new_parent);
        if (!loop.ok()) return loop.status();
        if (*loop) return FsError{EINVAL};
      }
      if (exchange && dst_dir) {
        FsResult<bool> loop = is_ancestor(dst_ino, parent);
        if (!loop.ok()) return loop.status();
        if (*loop) return FsError{EINVAL};
      }
      if (!moves_dir && (src_dir || (exchange && dst_dir))) continue;  // type changed: relock
    }

    struct timespec now = NowTimespec();
    Txn txn;
    // One record per directory even when both names live in the same one.
    InodeRecord src_parent = *sp;
    InodeRecord dst_parent_storage = *dp;
    InodeRecord& dst_parent = parent == new_parent ? src_parent : dst_parent_storage;
    InodeRecord moved = *src;
    moved.ctime = now;
    const DirEntryValue src_entry = **se;

    if (exchange) {
      const DirEntryValue dst_entry = **de;
      InodeRecord other = *dst;
      other.ctime = now;
      // Both names keep their cookies; only what they point at swaps.
      PutEntry(txn, parent, name, {dst_ino, src_entry.cookie, other.type()});
      txn.batch.Put(meta_, DirScanKey(parent, src_entry.cookie),
                    EncodeDirScan(dst_ino, other.type(), name));
      PutEntry(txn, new_parent, new_name, {src_ino, dst_entry.cookie, moved.type()});
      txn.batch.Put(meta_, DirScanKey(new_parent, dst_entry.cookie),
                    EncodeDirScan(src_ino, moved.type(), new_name));
      if (parent != new_parent) {
        if (src_dir) {
          moved.parent = new_parent;
          src_parent.nlink--;
          dst_parent.nlink++;
        }
        if (dst_dir) {
          other.parent = parent;
          dst_parent.nlink--;
          src_parent.nlink++;
        }
      }
      src_parent.mtime = src_parent.ctime = now;
      dst_parent.mtime = dst_parent.ctime = now;
      PutInode(txn, parent, src_parent);
      if (parent != new_parent) PutInode(txn, new_parent, dst_parent);
      PutInode(txn, src_ino, moved);
      PutInode(txn, dst_ino, other);
      return Commit(txn);
    }

    if (src_dir && parent != new_parent && !dst && dst_parent.nlink >= kMaxLinks) {
      return FsError{EMLINK};
    }
    RemoveEntry(txn, parent, src_parent, name, src_entry, now);
    if (dst) {
      RemoveEntry(txn, new_parent, dst_parent, new_name, **de, now);
      InodeRecord victim = *dst;
      victim.ctime = now;
      if (dst_dir) {
        dst_parent.nlink--;  // the replaced directory's ".." is gone
        DropInode(txn, dst_ino, victim);
      } else if (victim.nlink <= 1) {
        DropInode(txn, dst_ino, victim);
      } else {
        victim.nlink--;
        PutInode(txn, dst_ino, victim);
      }
    }
    AddEntry(txn, new_parent, dst_parent, new_name, src_ino, moved.type(), now);
    if (src_dir && parent != new_parent) {
      moved.parent = new_parent;
      src_parent.nlink--;
      dst_parent.nlink++;
    }
    PutInode(txn, parent, src_parent);
    if (parent != new_parent) PutInode(txn, new_parent, dst_parent);
    PutInode(txn, src_ino, moved);
    return Commit(txn);
  }
  return FsError{EIO};
}

}  // namespace pail::fs
