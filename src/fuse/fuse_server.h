// FuseServer: serves a fs::FileSystem through the kernel's FUSE device.
//
// Start() mounts the filesystem at options.mountpoint and answers kernel
// requests on its own threads (see request_loop.h);
// it returns once the kernel has completed the FUSE handshake, so the mount
// is usable. Stop() unmounts and waits for those threads; the caller then
// flushes the filesystem. An unmount from outside ends the serving too, and
// is reported through options.on_unmounted.
//
// The mount is meant to be shared by many users: allow_other lets every uid
// use it, and the kernel checks permissions itself (default_permissions)
// against attributes this server reports, so cached path lookups cannot
// skip a search-permission check. The filesystem checks again with the
// caller's uid, gid and supplementary groups, so both agree.
//
// Durability: write() hands data to the filesystem (acknowledged from
// memory); fsync()/fdatasync() return only once the file is in the bucket.
// close() adds no durability of its own; unsynced data reaches the bucket
// within the filesystem's flush interval.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fs/filesystem.h"
#include "util/status.h"

namespace pail::fuse {

class KernelInvalidator;

struct FuseServerOptions {
  std::string mountpoint;
  bool allow_other = true;
  // Upper bound on threads serving kernel requests at once; as many more
  // wait for fsyncs (the sync pool, fuse_ops.h).
  unsigned threads = 8;
  // Called once, on a server thread, when the mount goes away without
  // Stop(): someone ran umount or fusermount -u.
  std::function<void()> on_unmounted;
  // When set, it sends its reports to this mount's kernel from mount to
  // Stop() (changes made through the other protocols; fuse_convert.h).
  KernelInvalidator* invalidator = nullptr;
};

class FuseServer {
 public:
  FuseServer(fs::FileSystem& fs, FuseServerOptions options);
  ~FuseServer();  // Stop()s if still running
  FuseServer(const FuseServer&) = delete;
  FuseServer& operator=(const FuseServer&) = delete;

  // Mounts and starts serving. Fails with a clear error when the
  // mountpoint is missing, not a directory, or the kernel refuses the mount.
  Status Start();
  // Unmounts and stops serving. Idempotent; safe after a failed Start().
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pail::fuse
