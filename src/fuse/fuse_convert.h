// Translations between libfuse's low-level types and the filesystem core's.
#pragma once

#include "fuse/fuse_lowlevel_include.h"

#include <sys/stat.h>

#include "fs/filesystem.h"

namespace pail::fuse {

// How long the kernel may trust attributes and names without asking again.
// Every change made through this mount updates or invalidates the kernel's
// copy itself, and changes made through the other protocols of the same
// process (NFS, 9P, NBD) are invalidated by KernelInvalidator as they
// happen, so the timeouts only bound what nobody reports: atime moved by a
// read elsewhere, st_blocks settling after a background flush. They are
// long because each expiry costs a LOOKUP or GETATTR round trip on a path
// the kernel would otherwise walk alone: a file created a second ago and
// renamed now (the kernel holds its per-mount rename lock over the
// revalidating LOOKUP) or stat'ed again.
inline constexpr double kAttrTimeoutSeconds = 60.0;
inline constexpr double kEntryTimeoutSeconds = 60.0;
// Remembering that a name does not exist saves a lookup per failed path
// walk; creates through this mount or elsewhere replace the negative entry
// at once.
inline constexpr double kNegativeTimeoutSeconds = 60.0;

struct stat ToStat(const fs::Attr& attr);

// A lookup-style reply for `attr` (generation, timeouts, stat).
fuse_entry_param ToEntry(const fs::Attr& attr);

// The caller of a request: uid/gid from the request header, supplementary
// groups from /proc when a check first needs them (Credentials::load_groups),
// which is valid only until the request is answered. Root needs no groups
// (it passes every check the groups could matter for).
fs::Credentials CredentialsOf(fuse_req_t req);

}  // namespace pail::fuse
