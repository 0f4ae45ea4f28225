// POSIX permission rules over inode records and credentials.
#pragma once

#include <string_view>

#include "fs/filesystem.h"
#include "fs/inode_record.h"

namespace pail::fs {

// Access bits as in access(2).
inline constexpr int kMayRead = 4;
inline constexpr int kMayWrite = 2;
inline constexpr int kMayExec = 1;

// Owner, group (primary or supplementary) or other bits, whichever class
// the caller falls in first. Root may read and write anything, and execute
// anything that has an execute bit or is a directory.
bool MayAccess(const Credentials& cred, const InodeRecord& r, int mask);

// Deleting or renaming `victim` out of `dir`: with the sticky bit only the
// owner of the file or of the directory (or root) may.
bool StickyAllows(const Credentials& cred, const InodeRecord& dir, const InodeRecord& victim);

bool IsOwnerOrRoot(const Credentials& cred, const InodeRecord& r);

// The setuid/setgid bits a change by `cred` must clear: S_ISUID, and S_ISGID
// when group execute is set (without it S_ISGID marks mandatory locking).
uint32_t PrivilegeBitsToClear(const InodeRecord& r);

// 0, or the errno for a name that cannot be created: EINVAL for empty names
// and names with '/' or NUL, ENAMETOOLONG beyond kNameMax bytes.
int CheckNewName(std::string_view name);

}  // namespace pail::fs
