#include "metrics/metric.h"

#include <cmath>

#include <fmt/format.h>

namespace pail::metrics {
namespace {

void AppendValue(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else if (v == std::floor(v) && std::fabs(v) < 1e15) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<int64_t>(v));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

// Label values escape backslash, double quote and newline; HELP text
// escapes backslash and newline.
void AppendEscaped(std::string& out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

void LatencyHistogram::Observe(std::chrono::nanoseconds latency) {
  const double seconds = std::chrono::duration<double>(latency).count();
  for (size_t i = 0; i < kLatencyBucketsSeconds.size(); ++i) {
    if (seconds <= kLatencyBucketsSeconds[i]) {
      buckets_[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, latency.count())),
                    std::memory_order_relaxed);
}

LatencyHistogram::Snapshot LatencyHistogram::Read() const {
  Snapshot s;
  // Count first: a racing Observe may then show in a bucket but not in the
  // count, and the writer clamps the cumulative buckets to the count.
  s.count = count_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < buckets_.size(); ++i) s.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
  s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return s;
}

void TextWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  AppendEscaped(out_, help, false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void TextWriter::Series(std::string_view name, std::string_view suffix, const Labels& labels,
                        const std::pair<std::string_view, std::string>* extra) {
  out_ += name;
  out_ += suffix;
  if (!labels.empty() || extra) {
    out_ += '{';
    bool first = true;
    auto add = [&](const std::pair<std::string_view, std::string>& l) {
      if (!first) out_ += ',';
      first = false;
      out_ += l.first;
      out_ += "=\"";
      AppendEscaped(out_, l.second, true);
      out_ += '"';
    };
    for (const auto& l : labels) add(l);
    if (extra) add(*extra);
    out_ += '}';
  }
  out_ += ' ';
}

void TextWriter::Sample(std::string_view name, const Labels& labels, double value) {
  Series(name, "", labels, nullptr);
  AppendValue(out_, value);
  out_ += '\n';
}

void TextWriter::Histogram(std::string_view name, const Labels& labels,
                           const LatencyHistogram::Snapshot& s) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBucketsSeconds.size(); ++i) {
    cumulative = std::min(cumulative + s.buckets[i], s.count);
    std::pair<std::string_view, std::string> le{"le", fmt::format("{}", kLatencyBucketsSeconds[i])};
    Series(name, "_bucket", labels, &le);
    AppendValue(out_, static_cast<double>(cumulative));
    out_ += '\n';
  }
  std::pair<std::string_view, std::string> inf{"le", "+Inf"};
  Series(name, "_bucket", labels, &inf);
  AppendValue(out_, static_cast<double>(s.count));
  out_ += '\n';
  Series(name, "_sum", labels, nullptr);
  AppendValue(out_, s.sum_seconds);
  out_ += '\n';
  Series(name, "_count", labels, nullptr);
  AppendValue(out_, static_cast<double>(s.count));
  out_ += '\n';
}

}  // namespace pail::metrics
