// RpcTcpServer: ONC RPC over TCP for one dispatcher, on any number of
// listening addresses.
//
// An I/O thread runs Asio's accept/read loops; every call is dispatched on
// a separate pool of worker threads, so a slow procedure (a COMMIT waiting
// for the bucket) never stalls the sockets. The worker that finishes a call
// sends the reply itself when the socket is free (queued replies are written
// by the I/O thread), so a connection has many calls in flight and answers
// them in the order they complete.
//
// Memory is bounded per connection: a record larger than max_record_bytes
// closes the connection before it is buffered, and once max_in_flight calls
// (or max_in_flight_bytes of requests and unsent replies) are outstanding the
// connection stops reading until replies drain. Connections beyond
// max_connections are closed as soon as they are accepted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nfs/rpc_dispatcher.h"
#include "util/status.h"

namespace pail::nfs {

struct RpcTcpServerOptions {
  // "host:port" (IPv4) or "[v6]:port"; port 0 picks a free port.
  std::vector<std::string> addresses;
  // One thread moves the bytes; more would only hand events to each other.
  unsigned io_threads = 1;
  unsigned worker_threads = 8;
  size_t max_connections = 512;
  size_t max_in_flight = 64;
  size_t max_in_flight_bytes = 16u << 20;
  size_t max_record_bytes = (4u << 20) + 4096;
};

class RpcTcpServer {
 public:
  RpcTcpServer(const RpcDispatcher& dispatcher, RpcTcpServerOptions options);
  ~RpcTcpServer();
  RpcTcpServer(const RpcTcpServer&) = delete;
  RpcTcpServer& operator=(const RpcTcpServer&) = delete;

  // Binds every address (failing if any cannot be bound), then serves on
  // background threads.
  Status Start();
  // Closes listeners and connections, waits for running calls. Idempotent.
  void Stop();
  // The ports actually bound, in address order (useful with port 0).
  std::vector<uint16_t> bound_ports() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Splits "1.2.3.4:2049" or "[::1]:2049" into host and port.
Status ParseListenAddress(const std::string& address, std::string* host, uint16_t* port);

}  // namespace pail::nfs
