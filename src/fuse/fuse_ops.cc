#include "fuse/fuse_ops.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/fuse.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

#include "fs/reply_listing.h"
#include "fuse/fuse_convert.h"
#include "fuse/op_metrics.h"

namespace pail::fuse {

namespace {

// Largest WRITE the kernel may send, and the read-ahead it may do. libfuse's
// default receive buffer holds 1 MiB plus the request header.
constexpr unsigned kMaxWriteBytes = 1u << 20;
constexpr unsigned kMaxReadaheadBytes = 1u << 20;

// Room a directory entry takes in a READDIR / READDIRPLUS reply: its
// header, then its name padded to 8 bytes, as fuse_add_direntry(_plus)
// write them.
size_t DirentBytes(std::string_view name) {
  return FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + name.size());
}
size_t DirentPlusBytes(std::string_view name) {
  return FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET_DIRENTPLUS + name.size());
}

FuseContext& Context(fuse_req_t req) { return *static_cast<FuseContext*>(fuse_req_userdata(req)); }

fs::FileSystem& Fs(fuse_req_t req) { return *Context(req).fs; }

void ReplyEntry(fuse_req_t req, const fs::FsResult<fs::Attr>& r) {
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  fuse_entry_param e = ToEntry(*r);
  fuse_reply_entry(req, &e);
}

void ReplyStatus(fuse_req_t req, fs::FsStatus s) { ReplyErr(req, s.error()); }

void OnInit(void* userdata, fuse_conn_info* conn) {
  auto* ctx = static_cast<FuseContext*>(userdata);
  conn->max_write = kMaxWriteBytes;
  conn->max_readahead = std::min(conn->max_readahead, kMaxReadaheadBytes);
  conn->time_gran = 1;  // the core keeps nanoseconds
  // O_TRUNC arrives with OPEN instead of as a separate SETATTR.
  if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC) conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
  // The core clears setuid/setgid on write, truncate and chown itself. The
  // kernel still sends its own forced mode change first; see
  // SetAttrWithForcedPrivilegeDrop.
  if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV) conn->want |= FUSE_CAP_HANDLE_KILLPRIV;
  if (conn->capable & FUSE_CAP_READDIRPLUS) conn->want |= FUSE_CAP_READDIRPLUS;
  // Cached pages are dropped when the size or mtime the kernel sees changes.
  if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  // The page cache stays write-through: writes reach the core (and its
  // quota, permission and setuid checks) when the caller makes them.
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  ctx->decline_opendir = (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT) != 0;
  if (ctx->on_init) ctx->on_init();
}

void OnLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fs::FsResult<fs::Attr> r = Fs(req).Lookup(CredentialsOf(req), parent, name);
  if (r.ok() || r.error() == ENOENT) Context(req).listing_hints.NoteLookup(parent, r.ok());
  if (!r.ok() && r.error() == ENOENT) {
    // ino 0 with a timeout: the kernel remembers the name is absent.
    fuse_entry_param e{};
    e.entry_timeout = kNegativeTimeoutSeconds;
    fuse_reply_entry(req, &e);
    return;
  }
  ReplyEntry(req, r);
}

// The core keeps no per-kernel reference counts: inode numbers are never
// reused and open files are pinned by their handles, so FORGET needs no work.
void OnForget(fuse_req_t req, fuse_ino_t, uint64_t) { fuse_reply_none(req); }
void OnForgetMulti(fuse_req_t req, size_t, fuse_forget_data*) { fuse_reply_none(req); }

void OnGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  fs::FsResult<fs::Attr> r = Fs(req).GetAttr(CredentialsOf(req), ino);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  struct stat st = ToStat(*r);
  fuse_reply_attr(req, &st, kAttrTimeoutSeconds);
}

fs::TimeChange TimeChangeOf(int to_set, int value_flag, int now_flag, const timespec& value) {
  if (to_set & now_flag) return fs::TimeChange::Now();
  if (to_set & value_flag) return fs::TimeChange::At(value);
  return fs::TimeChange::Omit();
}

constexpr uint32_t kSetIdBits = S_ISUID | S_ISGID;

// Whether `change` only takes setuid/setgid bits away from `current`.
bool OnlyDropsSetIdBits(const fs::Attr& current, uint32_t new_mode) {
  uint32_t old_mode = current.mode & 07777;
  return (new_mode & ~old_mode) == 0 && ((old_mode & ~new_mode) & ~kSetIdBits) == 0;
}

// The kernel clears setuid/setgid itself before a write or truncate by
// someone who is not privileged, by sending a mode change in that writer's
// name, even though we asked to handle it (FUSE_CAP_HANDLE_KILLPRIV). The
// core refuses a mode change by a non-owner; but with default_permissions a
// non-owner's own chmod never gets past the kernel, so a refused mode change
// that only drops set-id bits is the kernel's forced one. Apply the rest of
// the request as the caller, then drop the bits with the kernel's authority.
fs::FsResult<fs::Attr> SetAttrWithForcedPrivilegeDrop(fs::FileSystem& fs,
                                                      const fs::Credentials& cred, fuse_ino_t ino,
                                                      fs::SetAttrRequest change) {
  fs::FsResult<fs::Attr> r = fs.SetAttr(cred, ino, change);
  if (r.ok() || r.error() != EPERM || !change.mode || cred.is_root()) return r;
  fs::FsResult<fs::Attr> current = fs.GetAttr(cred, ino);
  if (!current.ok() || current->uid == cred.uid || !OnlyDropsSetIdBits(*current, *change.mode)) {
    return r;
  }
  uint32_t new_mode = *change.mode;
  change.mode.reset();
  bool rest = change.uid || change.gid || change.size ||
              change.atime.kind != fs::TimeChange::Kind::kOmit ||
              change.mtime.kind != fs::TimeChange::Kind::kOmit;
  if (rest) {
    fs::FsResult<fs::Attr> applied = fs.SetAttr(cred, ino, change);
    if (!applied.ok()) return applied;
    current = std::move(applied);
  }
  if ((current->mode & 07777) == new_mode) return current;  // the core dropped them already
  fs::SetAttrRequest drop;
  drop.mode = (current->mode & 07777) & ~(kSetIdBits & ~new_mode);
  return fs.SetAttr(fs::Credentials::Root(), ino, drop);
}

void OnSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
  fs::SetAttrRequest change;
  if (to_set & FUSE_SET_ATTR_MODE) change.mode = attr->st_mode & 07777;
  if (to_set & FUSE_SET_ATTR_UID) change.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) change.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_SIZE) change.size = static_cast<uint64_t>(attr->st_size);
  change.atime = TimeChangeOf(to_set, FUSE_SET_ATTR_ATIME, FUSE_SET_ATTR_ATIME_NOW, attr->st_atim);
  change.mtime = TimeChangeOf(to_set, FUSE_SET_ATTR_MTIME, FUSE_SET_ATTR_MTIME_NOW, attr->st_mtim);
  if (fi != nullptr) change.handle = fi->fh;
  fs::FsResult<fs::Attr> r = SetAttrWithForcedPrivilegeDrop(Fs(req), CredentialsOf(req), ino, change);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  struct stat st = ToStat(*r);
  fuse_reply_attr(req, &st, kAttrTimeoutSeconds);
}

void OnReadlink(fuse_req_t req, fuse_ino_t ino) {
  fs::FsResult<std::string> r = Fs(req).Readlink(CredentialsOf(req), ino);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  fuse_reply_readlink(req, r->c_str());
}

void OnMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  ReplyEntry(req, Fs(req).Mknod(CredentialsOf(req), parent, name, mode, rdev));
}

void OnMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  ReplyEntry(req, Fs(req).Mkdir(CredentialsOf(req), parent, name, mode & 07777));
}

void OnUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  ReplyStatus(req, Fs(req).Unlink(CredentialsOf(req), parent, name));
}

void OnRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  ReplyStatus(req, Fs(req).Rmdir(CredentialsOf(req), parent, name));
}

void OnSymlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  ReplyEntry(req, Fs(req).Symlink(CredentialsOf(req), parent, name, target));
}

void OnRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent,
              const char* new_name, unsigned int flags) {
  fs::RenameFlags how = fs::RenameFlags::kNone;
  if (flags == RENAME_NOREPLACE) {
    how = fs::RenameFlags::kNoReplace;
  } else if (flags == RENAME_EXCHANGE) {
    how = fs::RenameFlags::kExchange;
  } else if (flags != 0) {
    ReplyErr(req, EINVAL);  // RENAME_WHITEOUT or a combination
    return;
  }
  ReplyStatus(req, Fs(req).Rename(CredentialsOf(req), parent, name, new_parent, new_name, how));
}

void OnLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  ReplyEntry(req, Fs(req).Link(CredentialsOf(req), ino, new_parent, new_name));
}

// Pages of a file stay cached across opens; the kernel drops them itself
// when it sees the size or mtime change (FUSE_CAP_AUTO_INVAL_DATA).
void FinishOpen(fuse_file_info* fi, uint64_t handle) {
  fi->fh = handle;
  fi->keep_cache = 1;
}

void OnOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  // Taken now: a reply frees `req`, whether or not it reached the kernel.
  fs::FileSystem& fs = Fs(req);
  fs::FsResult<uint64_t> r = fs.Open(CredentialsOf(req), ino, fi->flags);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  FinishOpen(fi, *r);
  // The caller gave up (interrupted): nobody will release this handle.
  if (fuse_reply_open(req, fi) != 0) (void)fs.Release(*r);
}

void OnCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  fs::CreateOptions options;
  options.exclusive = (fi->flags & O_EXCL) != 0;
  options.truncate = (fi->flags & O_TRUNC) != 0;
  options.open_flags = fi->flags;
  fs::FileSystem& fs = Fs(req);  // as in OnOpen
  fs::FsResult<fs::CreateResult> r =
      fs.Create(CredentialsOf(req), parent, name, mode & 07777, options);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  fuse_entry_param e = ToEntry(r->attr);
  FinishOpen(fi, r->handle);
  if (fuse_reply_create(req, &e, fi) != 0) (void)fs.Release(r->handle);
}

void OnRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  fs::FsResult<fs::ReadResult> r = Fs(req).Read(CredentialsOf(req), ino, static_cast<uint64_t>(off),
                                                static_cast<uint32_t>(size), fi->fh);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  fuse_reply_buf(req, r->data.data(), r->data.size());
}

void OnWrite(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
             fuse_file_info* fi) {
  fs::FsResult<fs::WriteResult> r = Fs(req).Write(
      CredentialsOf(req), ino, static_cast<uint64_t>(off), std::string_view(buf, size), fi->fh);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  fuse_reply_write(req, r->written);
}

void OnRelease(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  ReplyStatus(req, Fs(req).Release(fi->fh));
}

// An fsync waits for the bucket: a WAL part's upload, about a millisecond
// on a local disk and tens on S3. On the loop thread it held up every other
// caller's requests until the watchdog handed reading on; under stress-ng's
// ten stressors on two processors, the renames' directory syncs and the
// chmods' file syncs (a hundred a second) kept the processors idle for a
// tenth of the time. Answered from the sync pool, the loop reads on at
// once, and fsyncs that arrive together still share one upload (Engine::
// Sync's group commit). A full pool makes the loop answer inline, as before.
void AnswerFsync(fuse_req_t req, fuse_ino_t ino, uint32_t opcode) {
  const fs::Credentials cred = CredentialsOf(req);
  ThreadPool* pool = Context(req).sync_pool;
  if (pool != nullptr && pool->TrySubmit([req, ino, cred, opcode] {
        RequestMetrics metrics(opcode);
        ReplyStatus(req, Fs(req).Fsync(cred, ino));
      })) {
    ReplyElsewhere();
    return;
  }
  ReplyStatus(req, Fs(req).Fsync(cred, ino));
}

void OnFsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  AnswerFsync(req, ino, FUSE_FSYNC);
}

// The kernel has checked what vfs_fallocate checks (mode combinations,
// offsets, the handle's access mode, the file type) before sending this;
// the core checks again for the protocols that have no kernel in front.
void OnFallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                 fuse_file_info* fi) {
  if (offset < 0 || length <= 0) {
    ReplyErr(req, EINVAL);
    return;
  }
  fs::FsResult<fs::Attr> r =
      Fs(req).Fallocate(CredentialsOf(req), ino, mode, static_cast<uint64_t>(offset),
                        static_cast<uint64_t>(length), fi != nullptr ? fi->fh : 0);
  ReplyErr(req, r.error());
}

// Only SEEK_DATA and SEEK_HOLE reach us; the kernel answers the others.
void OnLseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence, fuse_file_info* fi) {
  if (whence != SEEK_DATA && whence != SEEK_HOLE) {
    ReplyErr(req, EINVAL);
    return;
  }
  if (off < 0) {  // past any end, as the kernel's own lseek treats it
    ReplyErr(req, ENXIO);
    return;
  }
  fs::FsResult<uint64_t> r =
      Fs(req).Seek(CredentialsOf(req), ino, static_cast<uint64_t>(off),
                   whence == SEEK_DATA ? fs::SeekFor::kData : fs::SeekFor::kHole,
                   fi != nullptr ? fi->fh : 0);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  fuse_reply_lseek(req, static_cast<off_t>(*r));
}

// The reply carries the count in 32 bits, so one request copies less than
// 4 GiB; the core's own bound (kMaxCopyBytes) is below that, and callers
// loop over short copies.
void OnCopyFileRange(fuse_req_t req, fuse_ino_t ino_in, off_t off_in, fuse_file_info* fi_in,
                     fuse_ino_t ino_out, off_t off_out, fuse_file_info* fi_out, size_t len,
                     int flags) {
  if (flags != 0 || off_in < 0 || off_out < 0) {
    ReplyErr(req, EINVAL);
    return;
  }
  fs::CopyRangeRequest copy;
  copy.in = ino_in;
  copy.in_offset = static_cast<uint64_t>(off_in);
  copy.in_handle = fi_in != nullptr ? fi_in->fh : 0;
  copy.out = ino_out;
  copy.out_offset = static_cast<uint64_t>(off_out);
  copy.out_handle = fi_out != nullptr ? fi_out->fh : 0;
  copy.length = std::min<uint64_t>(len, fs::kMaxCopyBytes);
  fs::FsResult<uint64_t> r = Fs(req).CopyFileRange(CredentialsOf(req), copy);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  fuse_reply_write(req, static_cast<size_t>(*r));
}

// Directories need no handle: ReadDir is addressed by inode and cookie, and
// the kernel checked read permission at open (default_permissions). When
// the kernel supports it, declining OPENDIR makes it stop sending them.
void OnOpendir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  if (Context(req).decline_opendir) {
    ReplyErr(req, ENOSYS);
    return;
  }
  fi->fh = 0;
  fuse_reply_open(req, fi);
}

void ReadDirectory(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus) {
  if (size == 0) {  // a limit of 0 bytes would mean none to the core
    ReplyErr(req, EINVAL);
    return;
  }
  // The core lists what fits, so no attributes are loaded for entries the
  // reply would leave out. A page past the first that only creators'
  // lookups asked for goes without them (listing_hints.h); every page, as
  // in the kernel, starts the record of lookups for the next.
  const bool wanted = Context(req).listing_hints.AttributesWanted(ino);
  const bool attrs = plus && (off == 0 || wanted);
  // Not zeroed first: fuse_add_direntry(_plus) writes every byte of an
  // entry, padding included, and only the `used` bytes are sent.
  std::unique_ptr<char[]> buf(new char[size]);
  size_t used = 0;
  bool full = false;  // only if the core's prices ever disagreed with libfuse's
  auto encode = [&](const fs::DirEntry& entry) {
    if (full) return;
    size_t room = size - used;
    size_t need;
    if (plus) {
      fuse_entry_param e{};
      bool dots = entry.name == "." || entry.name == "..";
      if (!dots && entry.attr.has_value()) {
        e = ToEntry(*entry.attr);
      } else {
        // ino 0: listed, but the kernel makes no dentry (and takes no
        // lookup reference) for it.
        e.attr.st_ino = entry.ino;
        e.attr.st_mode = entry.type;
      }
      need = fuse_add_direntry_plus(req, buf.get() + used, room, entry.name.c_str(), &e,
                                    static_cast<off_t>(entry.next_cookie));
    } else {
      struct stat st {};
      st.st_ino = entry.ino;
      st.st_mode = entry.type;
      need = fuse_add_direntry(req, buf.get() + used, room, entry.name.c_str(), &st,
                               static_cast<off_t>(entry.next_cookie));
    }
    full = need > room;  // the next READDIR resumes at this entry
    if (!full) used += need;
  };
  fs::FsResult<fs::ReplyListing> r =
      fs::ListForReply(Fs(req), CredentialsOf(req), ino, static_cast<uint64_t>(off), size,
                       plus ? DirentPlusBytes : DirentBytes, attrs, encode);
  if (!r.ok()) {
    // An offset the directory never issued (a stray seekdir).
    ReplyErr(req, r.error() == fs::kErrBadCookie ? EINVAL : r.error());
    return;
  }
  // An empty reply ends the listing for the kernel: a buffer too small for
  // the next entry is an error instead.
  if (r->entries == 0 && !r->eof) {
    ReplyErr(req, EINVAL);
    return;
  }
  fuse_reply_buf(req, buf.get(), used);
}

void OnReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  ReadDirectory(req, ino, size, off, /*plus=*/false);
}

void OnReaddirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  ReadDirectory(req, ino, size, off, /*plus=*/true);
}

void OnReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info*) { ReplyErr(req, 0); }

void OnFsyncdir(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  AnswerFsync(req, ino, FUSE_FSYNCDIR);
}

void OnStatfs(fuse_req_t req, fuse_ino_t ino) {
  fs::FsResult<fs::StatFsResult> r = Fs(req).StatFs(CredentialsOf(req), ino);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  struct statvfs sv {};
  sv.f_bsize = r->block_size;
  sv.f_frsize = r->block_size;
  sv.f_blocks = r->total_blocks;
  sv.f_bfree = r->free_blocks;
  sv.f_bavail = r->avail_blocks;
  sv.f_files = r->total_files;
  sv.f_ffree = r->free_files;
  sv.f_favail = r->avail_files;
  sv.f_namemax = r->name_max;
  fuse_reply_statfs(req, &sv);
}

void OnSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                int flags) {
  ReplyStatus(req, Fs(req).SetXattr(CredentialsOf(req), ino, name, std::string_view(value, size),
                                    flags));
}

// getxattr/listxattr protocol: size 0 asks how big the answer is; a buffer
// that is too small gets ERANGE.
void ReplySized(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) {
    fuse_reply_xattr(req, value.size());
  } else if (value.size() > size) {
    ReplyErr(req, ERANGE);
  } else {
    fuse_reply_buf(req, value.data(), value.size());
  }
}

void OnGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  fs::FsResult<std::string> r = Fs(req).GetXattr(CredentialsOf(req), ino, name);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  ReplySized(req, *r, size);
}

void OnListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  fs::FsResult<std::vector<std::string>> r = Fs(req).ListXattr(CredentialsOf(req), ino);
  if (!r.ok()) {
    ReplyErr(req, r.error());
    return;
  }
  std::string names;  // each name followed by a NUL
  for (const std::string& n : *r) {
    names += n;
    names.push_back('\0');
  }
  ReplySized(req, names, size);
}

void OnRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  ReplyStatus(req, Fs(req).RemoveXattr(CredentialsOf(req), ino, name));
}

void OnAccess(fuse_req_t req, fuse_ino_t ino, int mask) {
  ReplyStatus(req, Fs(req).Access(CredentialsOf(req), ino, mask));
}

fuse_lowlevel_ops MakeOperations() {
  fuse_lowlevel_ops ops{};
  ops.init = OnInit;
  ops.lookup = OnLookup;
  ops.forget = OnForget;
  ops.forget_multi = OnForgetMulti;
  ops.getattr = OnGetattr;
  ops.setattr = OnSetattr;
  ops.readlink = OnReadlink;
  ops.mknod = OnMknod;
  ops.mkdir = OnMkdir;
  ops.unlink = OnUnlink;
  ops.rmdir = OnRmdir;
  ops.symlink = OnSymlink;
  ops.rename = OnRename;
  ops.link = OnLink;
  ops.open = OnOpen;
  ops.create = OnCreate;
  ops.read = OnRead;
  ops.write = OnWrite;
  // No flush handler: close() has nothing to wait for (writes reach the
  // core synchronously), and the kernel stops sending FLUSH after the
  // first ENOSYS, saving a round trip per close.
  ops.release = OnRelease;
  ops.fsync = OnFsync;
  ops.fallocate = OnFallocate;
  ops.lseek = OnLseek;
  ops.copy_file_range = OnCopyFileRange;
  ops.opendir = OnOpendir;
  ops.readdir = OnReaddir;
  ops.readdirplus = OnReaddirplus;
  ops.releasedir = OnReleasedir;
  ops.fsyncdir = OnFsyncdir;
  ops.statfs = OnStatfs;
  ops.setxattr = OnSetxattr;
  ops.getxattr = OnGetxattr;
  ops.listxattr = OnListxattr;
  ops.removexattr = OnRemovexattr;
  ops.access = OnAccess;
  return ops;
}

}  // namespace

const fuse_lowlevel_ops& FuseOperations() {
  static const fuse_lowlevel_ops ops = MakeOperations();
  return ops;
}

}  // namespace pail::fuse
