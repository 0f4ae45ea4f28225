// DeviceIo: the session's reads and writes of /dev/fuse (libfuse's custom
// io), there to ask the kernel for one capability libfuse 3.14 has no name
// for: FUSE_HANDLE_KILLPRIV_V2.
//
// Why: without it the kernel asks for a file's security.capability (a
// GETXATTR round trip) before every write, to learn whether the write must
// remove it. With it the kernel marks the mount SB_NOSEC: once a file has
// been seen without setuid/setgid bits and without capabilities, its writes
// go out alone until its attributes are next refreshed; clearing the bits
// and the capabilities on write, truncate and chown is then ours, which the
// core does for every protocol (fs/xattr_ops.cc, DropCapabilities).
#pragma once

#include <atomic>
#include <cstdint>

#include "fuse/fuse_lowlevel_include.h"

namespace pail::fuse {

// What the device hooks remember of the kernel's INIT between reading it and
// answering it (libfuse hands the hooks the session's userdata, so this
// lives in FuseContext).
struct InitHandshake {
  std::atomic<bool> reply_pending{false};
  uint64_t unique = 0;         // of the INIT request
  bool offers_kill_priv_v2 = false;
};

// Routes `session`'s device reads and writes through the hooks, which keep
// their state in the session's FuseContext (`init`). Call after
// fuse_session_mount and before the first request. Returns 0 or -errno.
int UseDeviceIo(fuse_session* session);

}  // namespace pail::fuse
