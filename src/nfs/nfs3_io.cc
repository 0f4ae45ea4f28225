// READ, WRITE and COMMIT: file data and its durability.
#include <algorithm>

#include "nfs/nfs3_args.h"
#include "nfs/nfs3_program.h"

namespace pail::nfs {

AcceptStat Nfs3Program::Read(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  uint64_t offset = args.U64();
  uint32_t count = std::min(args.U32(), kMaxIoBytes);
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(file.status, out)) return AcceptStat::kSuccess;
  fs::FsResult<fs::ReadResult> read = fs_.Read(cred, file.ino, offset, count);
  std::optional<fs::Attr> attr = AttrOrNothing(cred, file.ino);
  out.U32(ErrnoToNfsstat(read.error()));
  EncodePostOpAttr(out, attr ? &*attr : nullptr);
  if (!read.ok()) return AcceptStat::kSuccess;
  out.U32(static_cast<uint32_t>(read->data.size()));
  out.Bool(read->eof);
  out.Opaque(read->data);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Write(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  uint64_t offset = args.U64();
  uint32_t count = args.U32();
  uint32_t stable = args.U32();
  std::string_view data = args.Opaque(args.remaining());
  if (!args.ok() || stable > FILE_SYNC) return AcceptStat::kGarbageArgs;
  // RFC 1813: count and the data length must agree; use what was sent.
  if (count < data.size()) data = data.substr(0, count);
  // FSINFO's wtmax: more is a short write; the client sends the rest.
  if (data.size() > kMaxIoBytes) data = data.substr(0, kMaxIoBytes);
  if (file.status != NFS3_OK) {
    out.U32(file.status);
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  fs::FsResult<fs::WriteResult> written = fs_.Write(cred, file.ino, offset, data);
  Nfsstat3 status = ErrnoToNfsstat(written.error());
  StableHow committed = FILE_SYNC;
  if (written.ok() && durable_commit_) {
    if (stable == UNSTABLE) {
      committed = UNSTABLE;
    } else {
      status = ErrnoToNfsstat(fs_.Fsync(cred, file.ino).error());
    }
  }
  out.U32(status);
  // No pre-op attributes: concurrent WRITEs of one client complete in any
  // order, and the Linux client then keeps its cache for a change it made.
  if (written.ok()) {
    EncodeWcc(out, std::nullopt, written->attr);
  } else {
    EncodeWcc(out, std::nullopt, AttrOrNothing(cred, file.ino));
  }
  if (status != NFS3_OK) return AcceptStat::kSuccess;
  out.U32(written->written);
  out.U32(committed);
  EncodeVerifier(out);
  return AcceptStat::kSuccess;
}

AcceptStat Nfs3Program::Commit(const Cred& cred, XdrDecoder& args, XdrEncoder& out) {
  HandleArg file = DecodeHandleArg(args, fs_);
  args.U64();  // offset and count: the whole file is made durable either way
  args.U32();
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (file.status != NFS3_OK) {
    out.U32(file.status);
    EncodeWcc(out, std::nullopt, std::nullopt);
    return AcceptStat::kSuccess;
  }
  Nfsstat3 status = NFS3_OK;
  if (durable_commit_) {
    status = ErrnoToNfsstat(fs_.Fsync(cred, file.ino).error());
  }
  fs::FsResult<fs::Attr> attr = fs_.GetAttr(cred, file.ino);
  if (status == NFS3_OK && !attr.ok()) status = ErrnoToNfsstat(attr.error());
  out.U32(status);
  EncodeWcc(out, std::nullopt, attr.ok() ? std::optional<fs::Attr>(*attr) : std::nullopt);
  if (status == NFS3_OK) EncodeVerifier(out);
  return AcceptStat::kSuccess;
}

}  // namespace pail::nfs
