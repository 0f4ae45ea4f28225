// Process plumbing of the suite: running a piece of a case in a forked
// child with a time limit, and switching credentials.
#pragma once

#include <functional>
#include <string>

#include "posix_case.h"

namespace pail::posix {

// A child gets this long before SIGALRM ends it; a hung file-system call
// then fails its case instead of hanging the suite.
inline constexpr unsigned kChildTimeLimitSeconds = 60;

struct ChildOutcome {
  bool ok = false;
  std::string message;  // why not ok
};

// Forks; the child runs fn and exits. A CaseFailure thrown by fn, an
// unexpected exception, a non-zero exit or a signal all become !ok.
ChildOutcome RunInChild(const std::function<void()>& fn);

// Sets supplementary groups, gid and uid to `who`. With keep_root_saved
// the saved uid and gid stay 0, so the process can later become someone
// else again; the effective ids, which are all that file-system
// permission checks look at, are `who`'s either way. Must be called by a
// process whose real, effective or saved uid is 0. Throws CaseFailure.
void SwitchIdentity(const Identity& who, bool keep_root_saved);

}  // namespace pail::posix
