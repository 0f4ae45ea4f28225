// Listeners: the listening sockets of one protocol server (NFS, 9P, NBD).
//
// A server is configured with TCP addresses ("host:port", "[v6]:port") and
// optionally a Unix socket path. Listeners binds them all or none, accepts
// on each until closed, and hands every accepted connection to the server
// as a generic stream socket with where it came from; whether to admit it
// (client policy, connection limits) is the server's business.
//
// Two things every server needs and is easy to get wrong are done here:
// - An IPv6 address is bound v6-only, so a server may list "0.0.0.0:P" and
//   "[::]:P" side by side.
// - A Unix socket file left by an earlier run is replaced, but any other
//   file at the configured path is an error, never deleted.
// An accept that fails for a reason other than closing (out of descriptors,
// say) is retried after kAcceptRetryDelay rather than at once, which would
// spin on the same error.
#pragma once

#include <asio.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace pail::net {

using Socket = asio::generic::stream_protocol::socket;

// Splits "1.2.3.4:2049" or "[::1]:2049" into host and port; the host must
// be an IP address.
Status ParseListenAddress(const std::string& address, std::string* host, uint16_t* port);

// Where an accepted connection came from: a TCP peer's address and port, or
// an empty address for the Unix socket (whose callers are whoever the
// socket file's permissions let in).
struct Peer {
  std::string address;
  uint16_t port = 0;
  uint16_t local_port = 0;  // the TCP port the connection came in on
  bool tcp() const { return !address.empty(); }
};

class Listeners {
 public:
  using Accepted = std::function<void(Socket socket, const Peer& peer)>;
  static constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

  // `name` prefixes this server's messages ("nfs", "9p", "nbd").
  Listeners(asio::io_context& io, std::string name);
  ~Listeners();
  Listeners(const Listeners&) = delete;
  Listeners& operator=(const Listeners&) = delete;

  // Binds every address and the Unix socket (none when empty). On failure
  // nothing stays bound.
  Status Open(const std::vector<std::string>& addresses, const std::string& unix_socket);
  // Accepts on every listener until Close, calling `accepted` for one
  // connection at a time, on whichever thread runs the io_context; TCP
  // connections get TCP_NODELAY (every protocol served here is request and
  // reply). The accepting and the retry state below live on one strand, so
  // any number of threads may run the io_context.
  void Start(Accepted accepted);
  // Stops accepting, on the strand: callable from any thread.
  void Close();
  // Removes the Unix socket file; for after Close.
  void RemoveUnixSocket();

  // The TCP listeners' ports, in the order of the addresses (0 when
  // unknown): the actual ports when the configuration asked for port 0.
  std::vector<uint16_t> bound_ports() const;
  // "127.0.0.1:5564 (port 5564), /run/pailfs.sock", for the startup line.
  std::string Describe() const;

 private:
  using Tcp = asio::ip::tcp;
  using Local = asio::local::stream_protocol;
  template <typename Acceptor>
  void Accept(Acceptor* acceptor);
  template <typename Acceptor>
  void RetryLater(Acceptor* acceptor);

  asio::io_context& io_;
  asio::strand<asio::io_context::executor_type> strand_;
  const std::string name_;
  std::vector<std::string> addresses_;
  std::string unix_socket_;
  std::vector<std::unique_ptr<Tcp::acceptor>> tcp_;
  std::unique_ptr<Local::acceptor> local_;
  Accepted accepted_;
  // Listeners whose accept failed, accepting again when the timer fires.
  // All on strand_.
  asio::steady_timer retry_timer_;
  bool retry_armed_ = false;
  std::vector<Tcp::acceptor*> tcp_retry_;
  bool local_retry_ = false;
};

}  // namespace pail::net
