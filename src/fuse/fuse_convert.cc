#include "fuse/fuse_convert.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

namespace pail::fuse {

namespace {

// Supplementary groups beyond this many are not passed on; Linux allows
// 65536 but real callers have a handful, and the list is read per request.
constexpr int kMaxGroups = 256;

}  // namespace

struct stat ToStat(const fs::Attr& attr) {
  struct stat st {};
  st.st_dev = attr.fsid;
  st.st_ino = attr.ino;
  st.st_mode = attr.mode;
  st.st_nlink = attr.nlink;
  st.st_uid = attr.uid;
  st.st_gid = attr.gid;
  st.st_rdev = attr.rdev;
  st.st_size = static_cast<off_t>(attr.size);
  st.st_blksize = attr.blksize;
  st.st_blocks = static_cast<blkcnt_t>(attr.blocks());
  st.st_atim = attr.atime;
  st.st_mtim = attr.mtime;
  st.st_ctim = attr.ctime;
  return st;
}

fuse_entry_param ToEntry(const fs::Attr& attr) {
  fuse_entry_param e{};
  e.ino = attr.ino;
  e.generation = attr.generation;
  e.attr = ToStat(attr);
  e.attr_timeout = kAttrTimeoutSeconds;
  e.entry_timeout = kEntryTimeoutSeconds;
  return e;
}

fs::Credentials CredentialsOf(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  fs::Credentials cred;
  cred.uid = ctx->uid;
  cred.gid = ctx->gid;
  if (cred.is_root()) return cred;
  // Read only if a check needs them, while the request (and its caller,
  // blocked in the system call) is still there: the core keeps no
  // credentials past the request.
  cred.load_groups = [req] {
    gid_t groups[kMaxGroups];
    int n = fuse_req_getgroups(req, kMaxGroups, groups);
    // A caller that exited already has no groups to read; its request is
    // then judged by uid and gid alone, which can only deny more.
    return std::vector<uint32_t>(groups, groups + std::clamp(n, 0, kMaxGroups));
  };
  return cred;
}

}  // namespace pail::fuse
