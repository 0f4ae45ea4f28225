// The one place a 9P caller's identity is decided.
//
// 9P2000.L carries only a user: Tattach's n_uname (numeric uid, used by the
// Linux client with access=user) or, when that is absent (~0), the uname
// string. Groups are not on the wire, so they come from this host's user
// database (the uid's primary group and its supplementary groups); a uid
// unknown here gets the anonymous group and no supplementary groups. A
// Tlcreate/Tmkdir/Tsymlink/Tmknod names the gid the new object gets; that
// gid becomes the caller's primary group for that one call (the client
// computed it, setgid directories included).
#pragma once

#include <cstdint>
#include <string_view>

#include "fs/filesystem.h"

namespace pail::ninep {

struct IdentityPolicy {
  // Callers that name no user act as these.
  uint32_t anon_uid = 65534;
  uint32_t anon_gid = 65534;
};

fs::Credentials ResolveIdentity(const IdentityPolicy& policy, uint32_t n_uname,
                                std::string_view uname);

// `cred` acting with primary group `gid` for one create-like call.
fs::Credentials WithCreateGroup(const fs::Credentials& cred, uint32_t gid);

}  // namespace pail::ninep
