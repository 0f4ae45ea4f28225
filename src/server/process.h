// The life of a pailfs server process: open the bucket, the engine and the
// filesystem, start the configured protocol servers, wait for SIGINT or
// SIGTERM, then stop the servers, flush everything to the bucket and close.
#pragma once

#include "fs/fsck.h"
#include "server/config.h"

namespace pail::server {

// Blocks SIGINT/SIGTERM in the calling thread (call before any thread
// starts, so every thread inherits the mask) and returns once one arrives
// and the shutdown is complete.
Status RunServer(const Config& config);

// Offline consistency check: prints problems, returns an error if any.
// `progress` (may be empty) sees how far the scan is.
Status RunFsck(const Config& config, fs::FsckProgress progress = nullptr);

// Rewraps the data key under `new_password`.
Status RunChangePassword(const Config& config, const std::string& new_password);

}  // namespace pail::server
