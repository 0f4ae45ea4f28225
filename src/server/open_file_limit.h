// The process's open-file limit, raised at start.
//
// A shell's soft limit is often 1024 while the hard limit is far higher; a
// server with 512 connections per protocol and a disk cache of up to 1024
// open files would meet EMFILE under load at 1024 (accepts refused, cache
// files not opened). Like most servers, pailfs raises its soft limit to the
// hard one at start; the systemd units set both (LimitNOFILE).
#pragma once

#include <cstdint>

namespace pail::server {

// Raises RLIMIT_NOFILE's soft limit to its hard limit (at most
// kMaxOpenFiles when the hard limit is unlimited) and logs the change.
void RaiseOpenFileLimit();

inline constexpr uint64_t kMaxOpenFiles = 1 << 20;

}  // namespace pail::server
