// NbdServer: NBD (fixed newstyle negotiation, simple and structured
// replies) on TCP addresses and/or a Unix socket, serving the files of
// /.nbd/ as exports (see exports.h and docs/nbd.md).
//
// A few I/O threads (io_threads) move bytes, each connection on its own
// strand, so connections are served in parallel; negotiation steps and
// requests run on a pool of worker threads, so a FLUSH waiting for the
// bucket never stalls other requests or connections. A connection has up to max_in_flight requests
// (and max_in_flight_bytes of request data and unsent replies) outstanding;
// past that it stops reading until replies drain. Replies go out in the
// order requests complete. A client that has not chosen an export within
// handshake_timeout of connecting is disconnected.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fs/filesystem.h"
#include "server/access_policy.h"
#include "util/status.h"

namespace pail::nbd {

struct NbdServerOptions {
  // "host:port" (IPv4) or "[v6]:port"; port 0 picks a free port.
  std::vector<std::string> addresses;
  // A path; empty means none.
  std::string unix_socket;
  unsigned worker_threads = 8;
  // Threads moving bytes and answering what needs no worker; 0: one per
  // core, up to four (net::IoThreads).
  unsigned io_threads = 0;
  // TCP clients the policy refuses (allowed_clients, secure_port) are
  // disconnected at accept, as are clients past limits.max_connections or
  // limits.max_connections_per_client; refusals are logged at a bounded
  // rate. Identities and the idle timeout do not apply to NBD. The Unix
  // socket is guarded by its file permissions instead.
  server::AccessPolicy access;
  size_t max_in_flight = 64;
  size_t max_in_flight_bytes = 64u << 20;
  // A client that has not chosen an export by then is disconnected, so
  // sockets that never get going cannot hold every connection slot. 0: never.
  std::chrono::seconds handshake_timeout{60};
};

class NbdServer {
 public:
  NbdServer(fs::FileSystem& fs, NbdServerOptions options);
  ~NbdServer();
  NbdServer(const NbdServer&) = delete;
  NbdServer& operator=(const NbdServer&) = delete;

  // Makes /.nbd if needed, binds everything (failing if anything cannot be
  // bound) and serves on background threads.
  Status Start();
  // Closes listeners and connections and waits for running requests.
  // Idempotent; also done by the destructor.
  void Stop();
  // The TCP ports actually bound, in address order (useful with port 0).
  std::vector<uint16_t> bound_ports() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pail::nbd
