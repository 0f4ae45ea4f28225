// The one place a 9P caller's identity is decided, under the access policy
// every network server shares (server/access_policy.h: squash, anonuid).
//
// 9P2000.L carries only a user: Tattach's n_uname (numeric uid, used by the
// Linux client with access=user) or, when that is absent (~0), the uname
// string. Groups are not on the wire, so they come from this host's user
// database (the uid's primary group and its supplementary groups); a uid
// unknown here gets the anonymous group and no supplementary groups. A
// Tlcreate/Tmkdir/Tsymlink/Tmknod names the gid the new object gets; that
// gid becomes the caller's primary group for that one call (the client
// computed it, setgid directories included). The policy's squash applies to
// the whole identity; an attach that names nobody acts as anonuid/anongid.
#pragma once

#include <cstdint>
#include <string_view>

#include "fs/filesystem.h"
#include "server/access_policy.h"

namespace pail::ninep {

fs::Credentials ResolveIdentity(const server::AccessPolicy& policy, uint32_t n_uname,
                                std::string_view uname);

// `cred` acting with primary group `gid` for one create-like call (squashed
// as the policy says).
fs::Credentials WithCreateGroup(const server::AccessPolicy& policy, const fs::Credentials& cred,
                                uint32_t gid);

}  // namespace pail::ninep
