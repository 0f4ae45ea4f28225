// RpcTcpServer: ONC RPC over TCP for one dispatcher, on any number of
// listening addresses.
//
// A few I/O threads (io_threads) run Asio's accept and read loops, each
// connection on its own strand, so connections are read in parallel. A quick call (answered from
// the core's memory, RpcProgram::Quick) of a connection with nothing else
// running runs right there; every other call is dispatched on a separate
// pool of worker threads, so a slow procedure (a COMMIT waiting for the
// bucket) never stalls the sockets. The thread that finishes a call sends
// the reply itself when the socket is free (queued replies are written on
// the connection's strand), so a connection has many calls in flight and answers
// them in the order they complete.
//
// Memory is bounded per connection: a record larger than max_record_bytes
// closes the connection before it is buffered, and once max_in_flight calls
// (or max_in_flight_bytes of requests, replies not yet sent, and the reply
// sizes calls announced before they ran: RpcDispatcher::ReplyBytesBound) are
// outstanding the connection stops reading until replies drain. So a client
// that pipelines large READs and never reads the replies costs at most
// max_in_flight_bytes plus one call.
//
// Fairness: at most max_running_per_connection calls of one connection are on
// the workers at once (the rest wait in that connection's bounded queue), so a
// client whose calls block (WRITEs waiting for write-back memory) leaves
// workers for everyone else.
//
// Connections (server::ConnectionLimits): at most max_connections_per_client
// per client address and max_connections in all. When the table is full the
// connection idle longest (nothing in flight) is closed so a new client is
// still served; connections idle for idle_timeout are closed. Refusals are
// logged at a bounded rate.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nfs/rpc_dispatcher.h"
#include "server/access_policy.h"
#include "util/status.h"

namespace pail::nfs {

struct RpcTcpServerOptions {
  // "host:port" (IPv4) or "[v6]:port"; port 0 picks a free port.
  std::vector<std::string> addresses;
  // Threads running the connections' strands (reading, quick calls,
  // writing replies); 0: one per core, up to four (net::IoThreads).
  unsigned io_threads = 0;
  unsigned worker_threads = 8;
  server::ConnectionLimits limits;
  // 0: half the workers (at least one).
  size_t max_running_per_connection = 0;
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

}  // namespace pail::nfs
