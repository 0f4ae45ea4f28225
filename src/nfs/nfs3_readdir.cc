// READDIR and READDIRPLUS: directory listings sized to the client's limit.
//
// The reply may not exceed the client's count (READDIR) or maxcount
// (READDIRPLUS); entries are fetched from the core in batches and encoded
// until the next one would not fit. Each entry's cookie is the core's
// next_cookie, which stays valid while the directory changes and across
// restarts. The cookie verifier is the directory's generation: a cookie
// presented with another nonzero verifier belongs to another directory (one
// that had this number before a crash) and is BAD_COOKIE, as is a cookie the
// directory never issued. A zero verifier is accepted, as clients that never
// looked at it send.
#include <algorithm>

#include "nfs/nfs3_args.h"
#include "nfs/nfs3_program.h"

namespace pail::nfs {

namespace {

// Entries asked of the core per call.
constexpr size_t kReadDirBatch = 256;
// status + post_op_attr(dir) + cookieverf + "no more entries" + eof.
constexpr size_t kReplyOverheadBytes = 4 + 4 + 84 + 8 + 4 + 4;

size_t EntryBytes(const fs::DirEntry& entry, bool plus) {
  size_t bytes = 4 + 8 + 4 + entry.name.size() + XdrPadding(entry.name.size()) + 8;
  // post_op_attr (flag + fattr3) and post_op_fh3 (flag + length + handle),
  // both present or both absent.
  if (plus) {
    bytes += 4 + 4;
    if (entry.attr) bytes += 84 + 4 + kFileHandleBytes + XdrPadding(kFileHandleBytes);
  }
  return bytes;
}

}  // namespace

AcceptStat Nfs3Program::ReadDir(const Cred& cred, XdrDecoder& args, XdrEncoder& out, bool plus) {
  HandleArg dir = DecodeHandleArg(args, fs_);
  uint64_t cookie = args.U64();
  uint64_t verifier = args.U64();
  uint32_t limit = args.U32();
  if (plus) limit = args.U32();  // dircount is advisory; maxcount bounds the reply
  if (!args.ok()) return AcceptStat::kGarbageArgs;
  if (RepliedHandleError(dir.status, out)) return AcceptStat::kSuccess;
  fs::FsResult<fs::Attr> dir_attr = fs_.GetAttr(cred, dir.ino);
  if (dir_attr.ok() && !dir_attr->is_dir()) dir_attr = fs::FsError{ENOTDIR};
  if (dir_attr.ok() && cookie != 0 && verifier != 0 && verifier != dir_attr->generation) {
    out.U32(NFS3ERR_BAD_COOKIE);
    EncodePostOpAttr(out, &*dir_attr);
    return AcceptStat::kSuccess;
  }
  if (!dir_attr.ok()) {
    out.U32(ErrnoToNfsstat(dir_attr.error()));
    EncodePostOpAttr(out, nullptr);
    return AcceptStat::kSuccess;
  }

  size_t budget = std::min(limit, kMaxReadDirReplyBytes);
  size_t used = kReplyOverheadBytes;
  size_t status_offset = out.size();
  out.U32(NFS3_OK);
  EncodePostOpAttr(out, &*dir_attr);
  out.U64(dir_attr->generation);  // cookieverf
  size_t encoded = 0;
  bool eof = false, full = false;
  while (!full && !eof) {
    fs::FsResult<fs::ReadDirResult> batch = fs_.ReadDir(cred, dir.ino, cookie, kReadDirBatch, plus);
    if (!batch.ok()) {
      if (encoded > 0) break;  // return what fits so far; the client asks again
      out.buffer()->resize(status_offset);
      out.U32(ErrnoToNfsstat(batch.error()));
      EncodePostOpAttr(out, &*dir_attr);
      return AcceptStat::kSuccess;
    }
    for (const fs::DirEntry& entry : batch->entries) {
      size_t bytes = EntryBytes(entry, plus);
      if (used + bytes > budget) {
        full = true;
        break;
      }
      used += bytes;
      out.Bool(true);
      out.U64(entry.ino);
      out.String(entry.name);
      out.U64(entry.next_cookie);
      if (plus) {
        // No attributes (a directory the caller may read but not search):
        // no handle either, exactly what READDIR would have told.
        EncodePostOpAttr(out, entry.attr ? &*entry.attr : nullptr);
        out.Bool(entry.attr.has_value());
        if (entry.attr) out.Opaque(EncodeFileHandle(entry.ino, entry.attr->generation));
      }
      cookie = entry.next_cookie;
      encoded++;
    }
    if (!full) eof = batch->eof || batch->entries.empty();
  }
  if (encoded == 0 && full) {
    // Not even one entry fits the client's limit.
    out.buffer()->resize(status_offset);
    out.U32(NFS3ERR_TOOSMALL);
    EncodePostOpAttr(out, &*dir_attr);
    return AcceptStat::kSuccess;
  }
  out.Bool(false);  // no more entries in this reply
  out.Bool(eof);
  return AcceptStat::kSuccess;
}

}  // namespace pail::nfs
