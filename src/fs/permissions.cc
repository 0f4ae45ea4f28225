#include "fs/permissions.h"

namespace pail::fs {

bool MayAccess(const Credentials& cred, const InodeRecord& r, int mask) {
  mask &= kMayRead | kMayWrite | kMayExec;
  if (cred.is_root()) {
    if (!(mask & kMayExec)) return true;
    return r.is_dir() || (r.mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0;
  }
  const uint32_t wanted = static_cast<uint32_t>(mask);
  uint32_t bits;
  if (cred.uid == r.uid) {
    bits = (r.mode >> 6) & 7;
  } else {
    // Whether the caller is in the group matters only where the group's and
    // others' bits differ for this mask; not asking spares FUSE reading the
    // caller's groups (Credentials::load_groups).
    const uint32_t group = (r.mode >> 3) & 7, other = r.mode & 7;
    bits = ((group ^ other) & wanted) != 0 && cred.InGroup(r.gid) ? group : other;
  }
  return (bits & wanted) == wanted;
}

bool StickyAllows(const Credentials& cred, const InodeRecord& dir, const InodeRecord& victim) {
  if (!(dir.mode & S_ISVTX)) return true;
  return cred.is_root() || cred.uid == victim.uid || cred.uid == dir.uid;
}

bool IsOwnerOrRoot(const Credentials& cred, const InodeRecord& r) {
  return cred.is_root() || cred.uid == r.uid;
}

uint32_t PrivilegeBitsToClear(const InodeRecord& r) {
  uint32_t bits = S_ISUID;
  if (r.mode & S_IXGRP) bits |= S_ISGID;
  return r.mode & bits;
}

int CheckNewName(std::string_view name) {
  if (name.empty()) return EINVAL;
  if (name.size() > kNameMax) return ENAMETOOLONG;
  for (char c : name) {
    if (c == '/' || c == '\0') return EINVAL;
  }
  return 0;
}

}  // namespace pail::fs
