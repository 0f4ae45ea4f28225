// ConnectionTable: the connections a socket server (NFS, 9P, NBD) holds
// open, counted against its limits (server::ConnectionCount) and in the
// protocol's metrics, from admission until they close or the server stops.
//
// The table owns a reference to each connection, which keeps it alive
// while it waits for its socket; a connection takes itself out (Forget) once
// closed. Stop refuses every later admission and hands the server the
// connections still open, to close; what is left once the server's
// threads are done, Clear drops. StopServing, below, is that sequence.
//
// C provides `const std::string& address() const`: the client address it
// was admitted under ("" for a Unix socket), which Forget releases.
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "metrics/protocol_metrics.h"
#include "net/io_threads.h"
#include "net/listeners.h"
#include "server/access_policy.h"
#include "util/mutex.h"

namespace pail::net {

template <typename C>
class ConnectionTable {
 public:
  using Ptr = std::shared_ptr<C>;

  // `protocol` names the server in the connection metrics ("nfs", "9p").
  ConnectionTable(const std::string& protocol, const server::ConnectionLimits& limits)
      : metrics_(metrics::ProtocolMetrics::For(protocol)), count_(limits) {}

  // Records and returns the connection make() builds for a client at
  // `address`. nullptr, with *refusal saying why, when the limits refuse it;
  // with *refusal empty once stopped. make() runs under the table's lock.
  template <typename Make>
  Ptr Admit(const std::string& address, std::string* refusal, Make make) {
    MutexLock lock(&mu_);
    if (stopped_) return nullptr;
    if (std::optional<std::string> why = count_.Admit(address)) {
      *refusal = std::move(*why);
      return nullptr;
    }
    Ptr connection = make();
    connections_.insert(connection);
    metrics_.ConnectionOpened();
    return connection;
  }

  // Takes `connection` out; false if it was not in (already forgotten).
  bool Forget(C* connection) {
    Ptr last;  // destroyed after the lock is released
    MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      if (it->get() != connection) continue;
      last = *it;
      count_.Release(connection->address());
      connections_.erase(it);
      metrics_.ConnectionClosed();
      return true;
    }
    return false;
  }

  // For a server that closes an idle connection to make room (NFS): why
  // `address` may open no more whatever the total, and whether all
  // max_connections are open.
  std::optional<std::string> ClientRefusal(const std::string& address) {
    MutexLock lock(&mu_);
    return count_.ClientRefusal(address);
  }
  bool Full() {
    MutexLock lock(&mu_);
    return count_.Full();
  }
  // The connections open now.
  std::vector<Ptr> Open() {
    MutexLock lock(&mu_);
    return {connections_.begin(), connections_.end()};
  }

  // Admits nothing more; returns the connections open, for the server to
  // close, or nullopt if stopped before.
  std::optional<std::vector<Ptr>> Stop() {
    MutexLock lock(&mu_);
    if (stopped_) return std::nullopt;
    stopped_ = true;
    return std::vector<Ptr>(connections_.begin(), connections_.end());
  }
  bool stopped() {
    MutexLock lock(&mu_);
    return stopped_;
  }
  // Forgets whatever is still recorded (the server's threads are done).
  void Clear() {
    std::set<Ptr> left;  // destroyed after the lock is released
    MutexLock lock(&mu_);
    for (const Ptr& connection : connections_) {
      count_.Release(connection->address());
      metrics_.ConnectionClosed();
    }
    left.swap(connections_);
  }

 private:
  metrics::ProtocolMetrics& metrics_;
  Mutex mu_;
  std::set<Ptr> connections_ GUARDED_BY(mu_);
  server::ConnectionCount count_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
};

// Stops a server (once; later calls return at once) in the one order that
// is safe. Admissions end, then the listeners; the connections open are
// closed; running requests finish (the workers are joined; their replies go
// nowhere); then the I/O threads run what is still queued, every closed
// socket's last handlers, and return. Draining them rather than stopping
// them destroys every connection (and what it holds open) before the caller
// closes the filesystem. `once_stopped` runs as soon as admissions have
// ended, for a timer that must not re-arm (NFS's idle sweep).
template <typename C>
void StopServing(ConnectionTable<C>& connections, Listeners& listeners,
                 asio::thread_pool& workers, IoThreads& io_threads,
                 const std::function<void()>& once_stopped = {}) {
  std::optional<std::vector<std::shared_ptr<C>>> open = connections.Stop();
  if (!open) return;  // stopped already
  if (once_stopped) once_stopped();
  listeners.Close();
  for (auto& connection : *open) connection->Close();
  open.reset();
  workers.join();
  io_threads.Drain();
  connections.Clear();
  listeners.RemoveUnixSocket();
}

}  // namespace pail::net
