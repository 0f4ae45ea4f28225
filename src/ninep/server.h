// NinepServer: 9P2000.L over TCP (any number of IPv4/IPv6 addresses) and a
// Unix socket, serving one filesystem core.
//
// A few I/O threads (io_threads) move bytes, each connection on its own
// strand, so connections are served in parallel; requests run on a bounded
// pool of worker threads, so a connection has many requests in flight and
// each reply goes out as soon as its request completes. A metadata-only
// request that arrives while its connection has nothing else running is
// handled on its I/O thread directly (no thread switch), as a lone client's lookups,
// getattrs and clunks mostly are. Tflush is answered here: a flushed
// request that has not started never runs, one that has is answered first,
// and Rflush follows its reply.
//
// Bounds per connection: a message larger than the negotiated msize closes
// the connection before it is buffered; once max_tags requests (or
// max_buffered_bytes of requests and unsent replies) are outstanding the
// connection stops reading until replies drain; the session holds at most
// max_fids fids. Connections past the access policy's max_connections, or
// its max_connections_per_client from one address, are closed on accept,
// and so is a connection that has not attached within attach_timeout.
// There is no idle timeout, since the kernel client does not reconnect.
// Byte-range locks live in one table shared by every connection; a
// connection's locks go when it closes. See docs/ninep.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fs/filesystem.h"
#include "ninep/session.h"
#include "util/status.h"

namespace pail::ninep {

struct NinepServerOptions {
  // "host:port" (IPv4) or "[v6]:port"; port 0 picks a free port.
  std::vector<std::string> addresses;
  // A path for a Unix stream socket; empty: none.
  std::string unix_socket;
  unsigned worker_threads = 8;
  // Threads reading and framing requests and answering the ones run
  // inline; 0: one per core, up to four (net::IoThreads).
  unsigned io_threads = 0;
  size_t max_tags = 256;
  size_t max_buffered_bytes = 32u << 20;
  // A connection with no successful Tattach by then is closed, so sockets
  // that never get going cannot hold every connection slot. 0: never.
  std::chrono::seconds attach_timeout{60};
  SessionOptions session;
};

class NinepServer {
 public:
  NinepServer(fs::FileSystem& fs, NinepServerOptions options);
  ~NinepServer();
  NinepServer(const NinepServer&) = delete;
  NinepServer& operator=(const NinepServer&) = delete;

  // Binds every address (failing if any cannot be bound), then serves on
  // background threads.
  Status Start();
  // Closes listeners and connections, waits for running requests. Idempotent.
  void Stop();
  // The TCP ports actually bound, in address order (useful with port 0).
  std::vector<uint16_t> bound_ports() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pail::ninep
