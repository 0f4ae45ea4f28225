// The threads that run one protocol server's io_context (NFS, 9P, NBD).
#pragma once

#include <asio.hpp>

#include <optional>
#include <thread>
#include <vector>

namespace pail::net {

// How many threads run a server's io_context by default: one per core, up
// to four. Each connection's work is on its own strand, so more threads
// serve more connections at once; one connection never uses more than one.
unsigned DefaultIoThreads();

// The threads running one server's io_context.
//
// They keep running while the server is idle, however briefly it has no
// work (no accept pending between a listener's close and the connections'
// closes, no read pending while a worker runs a connection's request).
// Only Drain lets them return, and only once every handler queued by then
// has run: a handler left queued would be destroyed with the io_context,
// and with it the connection it holds, after the filesystem has closed.
class IoThreads {
 public:
  // Runs `io` on `configured` threads, or DefaultIoThreads() when 0.
  void Start(asio::io_context& io, unsigned configured);
  // For a server that has closed its listeners and connections and joined
  // its workers: runs what is still queued, then waits for the threads.
  void Drain();

 private:
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> busy_;
  std::vector<std::thread> threads_;
};

}  // namespace pail::net
