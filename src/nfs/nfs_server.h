// NfsServer: NFSv3, MOUNT v3 and the port mapper's GETPORT, all on the same
// TCP port(s), serving one filesystem core.
//
// Clients mount with `mount -t nfs -o vers=3,tcp,port=P,mountport=P host:/ dir`
// or ask the port mapper on P. Calls run on `worker_threads` threads. The
// access policy decides which clients are served and as whom: AUTH_SYS
// identities are squashed as it says before the core's permission checks,
// AUTH_NONE callers act as anonuid/anongid. With durable_commit, COMMIT,
// stable WRITEs and every directory or attribute change return only once in
// the bucket; otherwise WRITE is acknowledged as stable from memory and the
// core's flush interval bounds what a crash can lose. See docs/nfs.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fs/filesystem.h"
#include "server/access_policy.h"
#include "util/status.h"

namespace pail::nfs {

struct NfsServerOptions {
  // "host:port" (IPv4) or "[v6]:port"; port 0 picks a free port.
  std::vector<std::string> addresses;
  bool durable_commit = false;
  server::AccessPolicy access;
  unsigned worker_threads = 8;
  // Threads reading calls and answering the quick ones; 0: one per core,
  // up to four (net::IoThreads).
  unsigned io_threads = 0;
};

class NfsServer {
 public:
  NfsServer(fs::FileSystem& fs, NfsServerOptions options);
  ~NfsServer();
  NfsServer(const NfsServer&) = delete;
  NfsServer& operator=(const NfsServer&) = delete;

  // Binds all addresses and serves on background threads; returns once
  // listening.
  Status Start();
  // Stops listening, closes connections and waits for running calls.
  // Idempotent; also done by the destructor.
  void Stop();
  // The ports actually bound, in address order (useful with port 0).
  std::vector<uint16_t> bound_ports() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pail::nfs
