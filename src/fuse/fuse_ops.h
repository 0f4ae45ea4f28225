// The low-level request handlers: each kernel request becomes one call of
// the filesystem core with the caller's credentials, and its answer.
#pragma once

#include <functional>

#include "fs/filesystem.h"
#include "fuse/device_io.h"
#include "fuse/fuse_lowlevel_include.h"
#include "fuse/listing_hints.h"
#include "util/thread_pool.h"

namespace pail::fuse {

// What every handler reaches through fuse_req_userdata().
struct FuseContext {
  fs::FileSystem* fs = nullptr;
  // Runs on a loop thread once the kernel's INIT handshake is answered.
  std::function<void()> on_init;
  // Set during INIT: the kernel can skip OPENDIR when we decline it.
  bool decline_opendir = false;
  // Answers FSYNC and FSYNCDIR off the request loop; when null or full, the
  // loop thread answers them itself.
  ThreadPool* sync_pool = nullptr;
  // The device hooks' memory of the INIT handshake (device_io.h).
  InitHandshake init;
  // Which READDIRPLUS pages get attributes (listing_hints.h).
  ListingHints listing_hints;
};

const fuse_lowlevel_ops& FuseOperations();

}  // namespace pail::fuse
