// Extended attributes (as fid transfers) and POSIX byte-range locks.
#include "ninep/session.h"

namespace pail::ninep {

using fs::FsError;
using fs::FsResult;
using fs::FsStatus;

namespace {

// Linux sends its node name (at most 64 bytes).
constexpr size_t kMaxClientName = 255;

fs::LockKind KindOf(uint8_t type) {
  return type == kLockTypeWrite ? fs::LockKind::kWrite : fs::LockKind::kRead;
}

}  // namespace

// Txattrwalk fid[4] newfid[4] name[s] -> Rxattrwalk size[8]. newfid then
// reads the value (or, for an empty name, the NUL-terminated list of names).
Session::Reply Session::Xattrwalk(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint32_t newfid = r.U32();
  std::string_view name = r.String();
  if (!r.done()) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  FidState from = f->Snapshot();
  FidState state;
  state.kind = FidKind::kXattrRead;
  state.ino = from.ino;
  state.type = from.type;
  if (name.empty()) {
    NINEP_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.ListXattr(f->cred(), from.ino));
    for (const std::string& n : names) {
      state.xattr_data += n;
      state.xattr_data.push_back('\0');
    }
  } else {
    NINEP_ASSIGN_OR_RETURN(state.xattr_data, fs_.GetXattr(f->cred(), from.ino, name));
  }
  uint64_t size = state.xattr_data.size();
  NINEP_RETURN_IF_ERROR(fids_.Insert(
      newfid, std::make_shared<Fid>(fs_, f->shared_cred(), f->attach_root(), std::move(state)),
      /*replace=*/newfid == fid));
  WireWriter w(kRxattrwalk, tag);
  w.U64(size);
  return w.Finish();
}

// Txattrcreate fid[4] name[s] attr_size[8] flags[4] -> Rxattrcreate. The
// fid turns into a write-only transfer of attr_size bytes, applied at clunk.
Session::Reply Session::Xattrcreate(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  std::string_view name = r.String();
  uint64_t size = r.U64();
  uint32_t flags = r.U32();
  if (!r.done()) return FsError{EINVAL};
  if (name.empty()) return FsError{EINVAL};
  if (name.size() > fs::kXattrNameMax) return FsError{ERANGE};
  if (size > fs::kXattrValueMax) return FsError{E2BIG};
  if (flags & ~static_cast<uint32_t>(fs::kXattrCreate | fs::kXattrReplace)) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  f->Update([&](FidState& s) {
    if (s.handle != 0) (void)fs_.Release(s.handle);
    s.handle = 0;
    s.opened = false;
    s.kind = FidKind::kXattrWrite;
    s.xattr_name = std::string(name);
    s.xattr_data.clear();
    s.xattr_size = size;
    s.xattr_flags = static_cast<int>(flags);
  });
  WireWriter w(kRxattrcreate, tag);
  return w.Finish();
}

// Tlock fid[4] type[1] flags[4] start[8] length[8] proc_id[4] client_id[s]
// -> Rlock status[1]. Never waits: a conflict is BLOCKED, and the Linux
// client retries a blocking request until it succeeds or is interrupted.
Session::Reply Session::Lock(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint8_t type = r.U8();
  r.U32();  // flags: blocking or not, the answer to a conflict is the same
  uint64_t start = r.U64();
  uint64_t length = r.U64();
  uint32_t proc_id = r.U32();
  std::string_view client = r.String();
  // The lock table keeps the client's name with every range: keep it short.
  if (!r.done() || client.size() > kMaxClientName) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  fs::Ino ino = f->Snapshot().ino;
  fs::LockOwner owner{id_, proc_id, std::string(client)};
  uint8_t status = kLockSuccess;
  if (type == kLockTypeUnlock) {
    locks_.Unlock(ino, owner, start, length);
  } else if (type == kLockTypeRead || type == kLockTypeWrite) {
    FsStatus s = locks_.Lock(ino, {KindOf(type), start, length, owner});
    if (!s.ok()) status = s.error() == EAGAIN ? kLockBlocked : kLockError;
  } else {
    status = kLockError;
  }
  WireWriter w(kRlock, tag);
  w.U8(status);
  return w.Finish();
}

// Tgetlock fid[4] type[1] start[8] length[8] proc_id[4] client_id[s] ->
// Rgetlock with the same fields: the first conflicting lock, or the request
// with type UNLCK when nothing conflicts.
Session::Reply Session::Getlock(WireReader& r, uint16_t tag) {
  uint32_t fid = r.U32();
  uint8_t type = r.U8();
  uint64_t start = r.U64();
  uint64_t length = r.U64();
  uint32_t proc_id = r.U32();
  std::string_view client = r.String();
  if (!r.done()) return FsError{EINVAL};
  if (type != kLockTypeRead && type != kLockTypeWrite) return FsError{EINVAL};
  NINEP_ASSIGN_OR_RETURN(std::shared_ptr<Fid> f, FileFid(fid));
  fs::LockOwner owner{id_, proc_id, std::string(client)};
  std::optional<fs::LockRange> conflict =
      locks_.Conflict(f->Snapshot().ino, {KindOf(type), start, length, owner});
  WireWriter w(kRgetlock, tag);
  if (conflict) {
    w.U8(conflict->kind == fs::LockKind::kWrite ? kLockTypeWrite : kLockTypeRead);
    w.U64(conflict->start);
    w.U64(conflict->length);
    w.U32(static_cast<uint32_t>(conflict->owner.process));
    w.String(conflict->owner.name);
  } else {
    w.U8(kLockTypeUnlock);
    w.U64(start);
    w.U64(length);
    w.U32(proc_id);
    w.String(client);
  }
  return w.Finish();
}

}  // namespace pail::ninep
