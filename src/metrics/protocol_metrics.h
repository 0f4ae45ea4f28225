// Per-protocol metrics, one object per protocol server (FUSE, NFS, 9P,
// NBD...), shared by all of them so that every protocol reports the same
// families with a `protocol` label:
//   pailfs_protocol_operations_total{protocol,op}
//   pailfs_protocol_operation_duration_seconds{protocol,op}  (histogram)
//   pailfs_protocol_errors_total{protocol,errno}
//   pailfs_protocol_connections{protocol}  (open now)
//   pailfs_protocol_connections_accepted_total{protocol}
//
// A server hooks in with one line per request and per connection:
//   auto op = metrics::ProtocolMetrics::For("nfs").Start("READ");
//   ... op.Done(err);                        // err: 0 or an errno
//   metrics::ProtocolMetrics::For("nfs").ConnectionOpened();   // and ...Closed()
// Operation names and errnos come from a protocol's fixed sets, so the
// label sets stay small.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "metrics/metric.h"
#include "util/mutex.h"

namespace pail::metrics {

class ProtocolMetrics {
 public:
  // The process-wide object of `protocol`, created on first use; lives
  // until exit, so references may be kept.
  static ProtocolMetrics& For(std::string_view protocol);
  // Every protocol that has reported anything, as the families above.
  static void WriteAll(TextWriter& out);

  class Timer {
   public:
    Timer(ProtocolMetrics* owner, std::string_view op)
        : owner_(owner), op_(op), start_(std::chrono::steady_clock::now()) {}
    // err: 0 for success, else the errno the client gets.
    void Done(int err) {
      if (owner_) owner_->Observe(op_, std::chrono::steady_clock::now() - start_, err);
      owner_ = nullptr;
    }

   private:
    ProtocolMetrics* owner_;
    std::string_view op_;  // a protocol's static operation name
    std::chrono::steady_clock::time_point start_;
  };

  Timer Start(std::string_view op) { return Timer(this, op); }
  void Observe(std::string_view op, std::chrono::nanoseconds latency, int err);
  void ConnectionOpened();
  void ConnectionClosed();

  uint64_t operations() const;  // over all ops, for tests and status
  const std::string& protocol() const { return protocol_; }

  explicit ProtocolMetrics(std::string protocol) : protocol_(std::move(protocol)) {}

 private:
  struct Op {
    LatencyHistogram latency;
  };
  Op& OpNamed(std::string_view op);

  const std::string protocol_;
  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<Op>, std::less<>> ops_ GUARDED_BY(mu_);
  std::map<int, uint64_t> errors_ GUARDED_BY(mu_);
  std::atomic<int64_t> open_connections_{0};
  std::atomic<uint64_t> accepted_connections_{0};
};

}  // namespace pail::metrics
