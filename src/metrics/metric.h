// Metric primitives and the Prometheus text exposition format (version
// 0.0.4): lock-free counters and latency histograms that hot paths update,
// and a writer that renders them when /metrics is scraped. Rendering reads
// memory only, so a scrape never causes an object-store request.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pail::metrics {

// Upper bounds, in seconds, of the latency histogram buckets: from 100 us
// (a cached read) to 10 s (a slow object-store request with retries).
inline constexpr std::array<double, 12> kLatencyBucketsSeconds = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5, 10};

class LatencyHistogram {
 public:
  struct Snapshot {
    std::array<uint64_t, kLatencyBucketsSeconds.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum_seconds = 0;
  };

  void Observe(std::chrono::nanoseconds latency);
  Snapshot Read() const;

 private:
  std::array<std::atomic<uint64_t>, kLatencyBucketsSeconds.size()> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// Builds one exposition page. Call Family() once per metric name, then
// every sample of that family, before the next Family().
class TextWriter {
 public:
  // type: "counter", "gauge" or "histogram".
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  void Histogram(std::string_view name, const Labels& labels,
                 const LatencyHistogram::Snapshot& snapshot);

  const std::string& text() const { return out_; }

 private:
  void Series(std::string_view name, std::string_view suffix, const Labels& labels,
              const std::pair<std::string_view, std::string>* extra);
  std::string out_;
};

}  // namespace pail::metrics
