#include "ninep/identity.h"

#include <grp.h>
#include <pwd.h>

#include <string>
#include <vector>

#include "ninep/protocol.h"

namespace pail::ninep {
namespace {

// getgrouplist fills at most this many groups (NGROUPS_MAX is 65536, but
// the permission check only needs the ones a user really has).
constexpr int kMaxGroups = 256;

bool LookupUser(uid_t uid, std::string_view name, fs::Credentials* cred) {
  struct passwd pw, *found = nullptr;
  std::vector<char> buf(16384);
  if (name.empty()) {
    getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
  } else {
    getpwnam_r(std::string(name).c_str(), &pw, buf.data(), buf.size(), &found);
  }
  if (!found) return false;
  cred->uid = found->pw_uid;
  cred->gid = found->pw_gid;
  gid_t groups[kMaxGroups];
  int count = kMaxGroups;
  if (getgrouplist(found->pw_name, found->pw_gid, groups, &count) < 0) count = 0;
  for (int i = 0; i < count; i++) {
    if (groups[i] != found->pw_gid) cred->groups.push_back(groups[i]);
  }
  return true;
}

}  // namespace

fs::Credentials ResolveIdentity(const server::AccessPolicy& policy, uint32_t n_uname,
                                std::string_view uname) {
  fs::Credentials cred;
  bool named = true;
  if (n_uname != kNoUid) {
    if (!LookupUser(n_uname, {}, &cred)) cred.gid = policy.anongid;
    cred.uid = n_uname;
  } else if (uname.empty() || !LookupUser(0, uname, &cred)) {
    named = false;
  }
  server::ClientIdentity claimed{cred.uid, cred.gid, cred.groups};
  server::ClientIdentity acting = policy.Squashed(claimed, /*authenticated=*/named);
  return fs::Credentials{acting.uid, acting.gid, acting.groups};
}

fs::Credentials WithCreateGroup(const server::AccessPolicy& policy, const fs::Credentials& cred,
                                uint32_t gid) {
  if (policy.squash == server::Squash::kAll) return cred;
  if (policy.squash == server::Squash::kRoot && gid == 0) gid = policy.anongid;
  fs::Credentials c = cred;
  if (gid == c.gid) return c;
  c.groups.push_back(c.gid);
  c.gid = gid;
  return c;
}

}  // namespace pail::ninep
