// CountingStore: counts requests and bytes per operation kind, and each
// request's outcome and latency, for metrics, cost reports and tests that
// assert "no request was made".
#pragma once

#include <array>
#include <atomic>

#include "metrics/metric.h"
#include "objstore/forwarding_store.h"

namespace pail {

struct RequestCounts {
  std::array<uint64_t, kOpKindCount> requests{};
  std::array<uint64_t, kOpKindCount> bytes{};  // body bytes sent (writes) or received (reads)
  uint64_t total_requests() const;
  uint64_t bytes_written() const;  // Put, PutIfAbsent, PutIfMatch
  uint64_t bytes_read() const;     // Get, GetRange
  RequestCounts& operator+=(const RequestCounts& other);
  // Counts are monotonic: `earlier` is a snapshot taken before this one.
  RequestCounts operator-(const RequestCounts& earlier) const;
};

// How a request ended, as the pailfs_objstore_requests_total outcome label.
enum class Outcome { kOk, kNotFound, kPreconditionFailed, kError };
constexpr int kOutcomeCount = 4;
const char* OutcomeName(Outcome outcome);

class CountingStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;
  Status Delete(const std::string& key) override;

  RequestCounts Snapshot() const;

  // pailfs_objstore_requests_total{op,outcome}, pailfs_objstore_bytes_total
  // {direction} and pailfs_objstore_request_duration_seconds{op}.
  void WriteMetrics(metrics::TextWriter& out) const;

 private:
  // Runs one request, then counts it with its outcome and latency.
  template <typename Call>
  auto Measure(OpKind op, uint64_t bytes_sent, Call call);
  void Count(OpKind op, const Status& status, uint64_t bytes, std::chrono::nanoseconds latency);

  std::array<std::atomic<uint64_t>, kOpKindCount> requests_{};
  std::array<std::atomic<uint64_t>, kOpKindCount> bytes_{};
  std::array<std::array<std::atomic<uint64_t>, kOutcomeCount>, kOpKindCount> outcomes_{};
  std::array<metrics::LatencyHistogram, kOpKindCount> latency_{};
};

}  // namespace pail
