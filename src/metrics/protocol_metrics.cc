#include "metrics/protocol_metrics.h"

#include <cstring>

namespace pail::metrics {
namespace {

struct Registry {
  Mutex mu;
  std::map<std::string, std::unique_ptr<ProtocolMetrics>, std::less<>> protocols GUARDED_BY(mu);
};

Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

// "ENOENT" rather than 2, so dashboards read the same on every platform.
std::string ErrnoName(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : std::to_string(err);
}

}  // namespace

ProtocolMetrics& ProtocolMetrics::For(std::string_view protocol) {
  Registry& r = TheRegistry();
  MutexLock lock(&r.mu);
  auto it = r.protocols.find(protocol);
  if (it == r.protocols.end()) {
    it = r.protocols.emplace(std::string(protocol),
                             std::make_unique<ProtocolMetrics>(std::string(protocol))).first;
  }
  return *it->second;
}

ProtocolMetrics::Op& ProtocolMetrics::OpNamed(std::string_view op) {
  MutexLock lock(&mu_);
  auto it = ops_.find(op);
  if (it == ops_.end()) it = ops_.emplace(std::string(op), std::make_unique<Op>()).first;
  return *it->second;
}

void ProtocolMetrics::Observe(std::string_view op, std::chrono::nanoseconds latency, int err) {
  OpNamed(op).latency.Observe(latency);
  if (err != 0) {
    MutexLock lock(&mu_);
    ++errors_[err];
  }
}

void ProtocolMetrics::ConnectionOpened() {
  open_connections_.fetch_add(1, std::memory_order_relaxed);
  accepted_connections_.fetch_add(1, std::memory_order_relaxed);
}

void ProtocolMetrics::ConnectionClosed() {
  open_connections_.fetch_sub(1, std::memory_order_relaxed);
}

uint64_t ProtocolMetrics::operations() const {
  MutexLock lock(&mu_);
  uint64_t n = 0;
  for (const auto& [name, op] : ops_) n += op->latency.Read().count;
  return n;
}

void ProtocolMetrics::WriteAll(TextWriter& out) {
  Registry& r = TheRegistry();
  MutexLock lock(&r.mu);
  out.Family("pailfs_protocol_operations_total", "counter",
             "Requests served, by protocol and operation.");
  for (const auto& [name, p] : r.protocols) {
    MutexLock plock(&p->mu_);
    for (const auto& [op, stats] : p->ops_) {
      out.Sample("pailfs_protocol_operations_total", {{"protocol", name}, {"op", op}},
                 static_cast<double>(stats->latency.Read().count));
    }
  }
  out.Family("pailfs_protocol_operation_duration_seconds", "histogram",
             "Time from receiving a request to answering it, by protocol and operation.");
  for (const auto& [name, p] : r.protocols) {
    MutexLock plock(&p->mu_);
    for (const auto& [op, stats] : p->ops_) {
      out.Histogram("pailfs_protocol_operation_duration_seconds", {{"protocol", name}, {"op", op}},
                    stats->latency.Read());
    }
  }
  out.Family("pailfs_protocol_errors_total", "counter",
             "Requests answered with an error, by protocol and errno.");
  for (const auto& [name, p] : r.protocols) {
    MutexLock plock(&p->mu_);
    for (const auto& [err, n] : p->errors_) {
      out.Sample("pailfs_protocol_errors_total", {{"protocol", name}, {"errno", ErrnoName(err)}},
                 static_cast<double>(n));
    }
  }
  out.Family("pailfs_protocol_connections", "gauge", "Client connections open now, by protocol.");
  for (const auto& [name, p] : r.protocols) {
    out.Sample("pailfs_protocol_connections", {{"protocol", name}},
               static_cast<double>(p->open_connections_.load(std::memory_order_relaxed)));
  }
  out.Family("pailfs_protocol_connections_accepted_total", "counter",
             "Client connections (FUSE: mounts) accepted since start, by protocol.");
  for (const auto& [name, p] : r.protocols) {
    out.Sample("pailfs_protocol_connections_accepted_total", {{"protocol", name}},
               static_cast<double>(p->accepted_connections_.load(std::memory_order_relaxed)));
  }
}

}  // namespace pail::metrics
