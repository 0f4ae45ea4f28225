// Nfs3Program: the 22 NFSv3 procedures (RFC 1813) on the filesystem core.
//
// Each procedure decodes all of its arguments first (anything malformed is
// GARBAGE_ARGS), then calls the core with the caller's AUTH_SYS identity, and
// answers with the status the core's errno maps to, plus the attributes the
// RFC asks for: post-op attributes on every reply, and for directory changes
// the directory's size/mtime/ctime before and its attributes after, so the
// Linux client can keep its caches instead of revalidating.
//
// Durability (RFC 1813 §3.3.7, §3.3.21): with durable_commit, WRITE answers
// UNSTABLE unless the client asked for stable data, in which case it syncs
// first and answers FILE_SYNC; COMMIT returns only after the file's data is
// in the bucket. Without it, WRITE answers FILE_SYNC straight from memory and
// COMMIT returns at once: the core's flush interval bounds what a crash
// loses. In durable mode the directory and attribute changes (CREATE, MKDIR,
// SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK, SETATTR) also reach the bucket
// before their reply, as RFC 1813 expects of a server that answers FILE_SYNC;
// concurrent ones share one engine sync (Engine::Sync groups callers). The
// write verifier is fixed per server process, so a client that
// sees it change after a restart resends its uncommitted writes.
#pragma once

#include <cstdint>
#include <string>

#include "fs/filesystem.h"
#include "nfs/nfs3_types.h"
#include "nfs/program_numbers.h"
#include "nfs/rpc_dispatcher.h"

namespace pail::nfs {

// FSINFO's rtmax/wtmax: the largest READ and WRITE this server accepts. A
// longer WRITE is answered as a short write of this many bytes (the client
// sends the rest), and the transport refuses records much larger.
constexpr uint32_t kMaxIoBytes = 1u << 20;
// Largest READDIR / READDIRPLUS reply this server builds, whatever the
// client asks.
constexpr uint32_t kMaxReadDirReplyBytes = 1u << 20;

class Nfs3Program : public RpcProgram {
 public:
  Nfs3Program(fs::FileSystem& fs, bool durable_commit, uint64_t write_verifier)
      : fs_(fs), durable_commit_(durable_commit), write_verifier_(write_verifier) {}

  uint32_t program() const override { return kNfsProgram; }
  uint32_t min_version() const override { return kNfsVersion3; }
  uint32_t max_version() const override { return kNfsVersion3; }
  AcceptStat Call(const RpcCall& call, const CallContext& context, XdrDecoder& args,
                  XdrEncoder& results) override;
  size_t ReplyBytesBound(const RpcCall& call, XdrDecoder& args) const override;
  bool Quick(const RpcCall& call, XdrDecoder& args) const override;

 private:
  // The procedure itself; Call() wraps it with metrics.
  AcceptStat Procedure(const RpcCall& call, XdrDecoder& args, XdrEncoder& out);
  using Cred = fs::Credentials;
  AcceptStat GetAttr(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat SetAttr(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Lookup(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Access(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Readlink(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Read(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Write(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Create(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Mkdir(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Symlink(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Mknod(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Remove(const Cred& cred, XdrDecoder& args, XdrEncoder& out, bool directory);
  AcceptStat Rename(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Link(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat ReadDir(const Cred& cred, XdrDecoder& args, XdrEncoder& out, bool plus);
  AcceptStat FsStat(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat FsInfo(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat PathConf(const Cred& cred, XdrDecoder& args, XdrEncoder& out);
  AcceptStat Commit(const Cred& cred, XdrDecoder& args, XdrEncoder& out);

  // The tail shared by CREATE, MKDIR, SYMLINK and MKNOD: applies the
  // attributes the create call itself could not set, then encodes
  // post_op_fh3, post_op_attr and the directory's wcc_data.
  void FinishCreate(const Cred& cred, fs::Ino dir, const std::optional<fs::Attr>& dir_before,
                    fs::FsResult<fs::Attr> created, const Sattr3* extra, XdrEncoder& out);
  std::optional<fs::Attr> AttrOrNothing(const Cred& cred, fs::Ino ino);
  // In durable mode, waits until every change made so far is in the bucket;
  // NFS3_OK at once otherwise.
  Nfsstat3 MakeDurable(const Cred& cred, fs::Ino ino);
  void EncodeVerifier(XdrEncoder& out) const;

  fs::FileSystem& fs_;
  bool durable_commit_;
  uint64_t write_verifier_;
};

}  // namespace pail::nfs
