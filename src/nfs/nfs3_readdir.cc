// READDIR and READDIRPLUS: directory listings sized to the client's limit.
//
// The reply may not exceed the client's count (READDIR) or maxcount
// (READDIRPLUS); the core lists the entries that fit, priced as they are
// encoded here. Each entry's cookie is the core's
// next_cookie, which stays valid while the directory changes and across
// restarts. The cookie verifier is the directory's generation: a cookie
// presented with another nonzero verifier belongs to another directory (one
// that had this number before a crash) and is BAD_COOKIE, as is a cookie the
// directory never issued. A zero verifier is accepted, as clients that never
// looked at it send.
#include <algorithm>
#include <string_view>

#include "fs/reply_listing.h"
#include "nfs/nfs3_args.h"
#include "nfs/nfs3_program.h"

namespace pail::nfs {

namespace {

// status + post_op_attr(dir) + cookieverf + "no more entries" + eof.
constexpr size_t kReplyOverheadBytes = 4 + 4 + 84 + 8 + 4 + 4;

// An entry of READDIR: "an entry follows", fileid, name, cookie.
size_t EntryBytes(std::string_view name) { return 4 + 8 + 4 + name.size() + XdrPadding(name.size()) + 8; }

// An entry of READDIRPLUS with its attributes and handle: post_op_attr
// (flag + fattr3) and post_op_fh3 (flag + length + handle) after the rest.
size_t EntryPlusBytes(std::string_view name) {
  return EntryBytes(name) + 4 + 84 + 4 + 4 + kFileHandleBytes + XdrPadding(kFileHandleBytes);
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

  auto fail = [&](uint32_t status) {
    out.U32(status);
    EncodePostOpAttr(out, &*dir_attr);
    return AcceptStat::kSuccess;
  };
  const size_t budget = std::min(limit, kMaxReadDirReplyBytes);
  if (budget <= kReplyOverheadBytes) return fail(NFS3ERR_TOOSMALL);
  // The core lists what the reply has room for, priced with attributes
  // (when the caller may not search the directory and gets none, the reply
  // holds fewer entries than it could, and the client asks again). The
  // success header goes first and is taken back if the listing fails.
  const size_t reply_at = out.size();
  out.U32(NFS3_OK);
  EncodePostOpAttr(out, &*dir_attr);
  out.U64(dir_attr->generation);  // cookieverf
  auto encode = [&out, plus](const fs::DirEntry& entry) {
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
  };
  fs::FsResult<fs::ReplyListing> listed =
      fs::ListForReply(fs_, cred, dir.ino, cookie, budget - kReplyOverheadBytes,
                       plus ? EntryPlusBytes : EntryBytes, plus, encode);
  if (!listed.ok() || (listed->entries == 0 && !listed->eof)) {
    out.buffer()->resize(reply_at);
    // Not even the next entry fits the client's limit.
    return fail(listed.ok() ? NFS3ERR_TOOSMALL : ErrnoToNfsstat(listed.error()));
  }
  out.Bool(false);  // no more entries in this reply
  out.Bool(listed->eof);
  return AcceptStat::kSuccess;
}

}  // namespace pail::nfs
