// Session: one 9P2000.L connection's protocol state (negotiated msize, fid
// table) and the handlers that turn requests into filesystem-core calls.
//
// Handle() takes one whole request (size[4] type[1] tag[2] ...) and returns
// its whole reply; it is thread-safe, so a transport runs many requests of
// one connection at once. Tflush is the transport's business (it knows
// which tags are pending); everything else is answered here, errors as
// Rlerror with the core's errno. See docs/ninep.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fs/byte_range_locks.h"
#include "fs/filesystem.h"
#include "ninep/fid_table.h"
#include "ninep/identity.h"
#include "ninep/wire.h"

// Early returns for FsStatus/FsResult in handlers returning FsResult.
#define NINEP_RETURN_IF_ERROR(expr)               \
  do {                                            \
    ::pail::fs::FsStatus ninep_s_ = (expr);       \
    if (!ninep_s_.ok()) return ninep_s_;          \
  } while (0)
#define NINEP_ASSIGN_OR_RETURN(lhs, expr) \
  NINEP_ASSIGN_OR_RETURN_IMPL(PAIL_CONCAT(ninep_r_, __LINE__), lhs, expr)
#define NINEP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

namespace pail::ninep {

struct SessionOptions {
  uint32_t max_msize = 1u << 20;
  size_t max_fids = 16384;
  server::AccessPolicy identity;  // squash and anonuid/anongid
};

class Session {
 public:
  // `id` names the session's lock owners in `locks`; its locks are dropped
  // when the session is destroyed.
  Session(fs::FileSystem& fs, fs::ByteRangeLocks& locks, SessionOptions options, uint64_t id);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  std::string Handle(std::string_view request);
  // Handle() for a caller that must not wait (a transport's I/O thread):
  // nullopt, having done nothing, when the request would have to wait on
  // the bucket, for write-back memory or for a file's lock (Tread and
  // Twrite, see FileSystem::TryRead); then Handle() it where waiting is
  // fine. Other requests are simply handled: the transport picks which.
  std::optional<std::string> TryHandle(std::string_view request);
  // The negotiated message size (max_msize until Tversion).
  uint32_t msize() const { return msize_.load(); }
  // A Tattach has succeeded: the client got past setting up.
  bool attached() const { return attached_.load(); }

  // An Rlerror for `tag`.
  static std::string ErrorReply(uint16_t tag, int errno_value);

 private:
  using Reply = fs::FsResult<std::string>;
  // Handle() and TryHandle().
  std::optional<std::string> Run(std::string_view request, bool may_wait);
  // Runs one message of type `type`; r is past size, type and tag. Without
  // `may_wait`, Tread and Twrite fail with EWOULDBLOCK rather than wait.
  Reply Dispatch(uint8_t type, uint16_t tag, WireReader& r, bool may_wait);

  Reply Version(WireReader& r, uint16_t tag);
  Reply Attach(WireReader& r, uint16_t tag);
  Reply Walk(WireReader& r, uint16_t tag);
  Reply Clunk(WireReader& r, uint16_t tag);
  Reply Remove(WireReader& r, uint16_t tag);
  // session_io.cc
  Reply Lopen(WireReader& r, uint16_t tag);
  Reply Lcreate(WireReader& r, uint16_t tag);
  Reply Read(WireReader& r, uint16_t tag, bool may_wait);
  Reply Write(WireReader& r, uint16_t tag, bool may_wait);
  Reply Fsync(WireReader& r, uint16_t tag);
  Reply Readdir(WireReader& r, uint16_t tag);
  Reply Statfs(WireReader& r, uint16_t tag);
  Reply Getattr(WireReader& r, uint16_t tag);
  Reply Setattr(WireReader& r, uint16_t tag);
  // session_namespace.cc
  Reply Mkdir(WireReader& r, uint16_t tag);
  Reply Symlink(WireReader& r, uint16_t tag);
  Reply Mknod(WireReader& r, uint16_t tag);
  Reply Link(WireReader& r, uint16_t tag);
  Reply Readlink(WireReader& r, uint16_t tag);
  Reply Rename(WireReader& r, uint16_t tag);
  Reply Renameat(WireReader& r, uint16_t tag);
  Reply Unlinkat(WireReader& r, uint16_t tag);
  // session_xattr_lock.cc
  Reply Xattrwalk(WireReader& r, uint16_t tag);
  Reply Xattrcreate(WireReader& r, uint16_t tag);
  Reply Lock(WireReader& r, uint16_t tag);
  Reply Getlock(WireReader& r, uint16_t tag);

  // The fid, or EBADF.
  fs::FsResult<std::shared_ptr<Fid>> Lookup(uint32_t fid) const;
  // A regular-file fid (not an xattr transfer), or EBADF.
  fs::FsResult<std::shared_ptr<Fid>> FileFid(uint32_t fid) const;
  // The bytes of one read reply at most.
  uint32_t MaxIo() const { return msize() - kReadReplyOverhead; }

  fs::FileSystem& fs_;
  fs::ByteRangeLocks& locks_;
  const SessionOptions options_;
  const uint64_t id_;
  std::atomic<uint32_t> msize_;
  std::atomic<bool> attached_{false};
  FidTable fids_;
};

// Helpers shared by the handler files.
Qid QidOf(const fs::Attr& attr);
Qid QidOf(fs::Ino ino, uint32_t type);
// A single path component: no '/', not empty, not "." or "..", at most
// kNameMax bytes. EINVAL/ENAMETOOLONG otherwise.
fs::FsStatus CheckName(std::string_view name);

}  // namespace pail::ninep
