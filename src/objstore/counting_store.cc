#include "objstore/counting_store.h"

namespace pail {
namespace {

Outcome OutcomeOf(const Status& s) {
  if (s.ok()) return Outcome::kOk;
  if (s.IsNotFound()) return Outcome::kNotFound;
  if (s.IsPreconditionFailed()) return Outcome::kPreconditionFailed;
  return Outcome::kError;
}

const Status& StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const Result<T>& r) { return r.status(); }

// Bytes a successful read brought back (a write's result is its etag, not
// a body); writes count what they sent.
uint64_t BytesReceived(OpKind op, const Result<std::string>& r) {
  return (op == OpKind::kGet || op == OpKind::kGetRange) && r.ok() ? r->size() : 0;
}
template <typename T>
uint64_t BytesReceived(OpKind, const T&) { return 0; }

}  // namespace

const char* OpKindName(OpKind op) {
  static const char* kNames[kOpKindCount] = {"get", "get_range", "head", "put",
                                             "put_if_absent", "put_if_match", "list", "delete"};
  return kNames[static_cast<int>(op)];
}

const char* OutcomeName(Outcome outcome) {
  static const char* kNames[kOutcomeCount] = {"ok", "not_found", "precondition_failed", "error"};
  return kNames[static_cast<int>(outcome)];
}

uint64_t RequestCounts::total_requests() const {
  uint64_t n = 0;
  for (uint64_t r : requests) n += r;
  return n;
}

uint64_t RequestCounts::bytes_written() const {
  return bytes[int(OpKind::kPut)] + bytes[int(OpKind::kPutIfAbsent)] + bytes[int(OpKind::kPutIfMatch)];
}

uint64_t RequestCounts::bytes_read() const {
  return bytes[int(OpKind::kGet)] + bytes[int(OpKind::kGetRange)];
}

RequestCounts& RequestCounts::operator+=(const RequestCounts& other) {
  for (int i = 0; i < kOpKindCount; ++i) {
    requests[i] += other.requests[i];
    bytes[i] += other.bytes[i];
  }
  return *this;
}

RequestCounts RequestCounts::operator-(const RequestCounts& earlier) const {
  RequestCounts d = *this;
  for (int i = 0; i < kOpKindCount; ++i) {
    d.requests[i] -= earlier.requests[i];
    d.bytes[i] -= earlier.bytes[i];
  }
  return d;
}

template <typename Call>
auto CountingStore::Measure(OpKind op, uint64_t bytes_sent, Call call) {
  const auto start = std::chrono::steady_clock::now();
  auto result = call();
  Count(op, StatusOf(result), bytes_sent + BytesReceived(op, result),
        std::chrono::steady_clock::now() - start);
  return result;
}

void CountingStore::Count(OpKind op, const Status& status, uint64_t bytes,
                          std::chrono::nanoseconds latency) {
  const int i = static_cast<int>(op);
  requests_[i].fetch_add(1, std::memory_order_relaxed);
  bytes_[i].fetch_add(bytes, std::memory_order_relaxed);
  outcomes_[i][static_cast<int>(OutcomeOf(status))].fetch_add(1, std::memory_order_relaxed);
  latency_[i].Observe(latency);
}

Result<std::string> CountingStore::Get(const std::string& key) {
  return Measure(OpKind::kGet, 0, [&] { return target_->Get(key); });
}

Result<std::string> CountingStore::GetRange(const std::string& key, uint64_t offset,
                                            uint64_t length) {
  return Measure(OpKind::kGetRange, 0, [&] { return target_->GetRange(key, offset, length); });
}

Result<ObjectMeta> CountingStore::Head(const std::string& key) {
  return Measure(OpKind::kHead, 0, [&] { return target_->Head(key); });
}

Result<std::string> CountingStore::Put(const std::string& key, std::string_view body) {
  return Measure(OpKind::kPut, body.size(), [&] { return target_->Put(key, body); });
}

Result<std::string> CountingStore::PutIfAbsent(const std::string& key, std::string_view body) {
  return Measure(OpKind::kPutIfAbsent, body.size(), [&] { return target_->PutIfAbsent(key, body); });
}

Result<std::string> CountingStore::PutIfMatch(const std::string& key, std::string_view body,
                                              const std::string& etag) {
  return Measure(OpKind::kPutIfMatch, body.size(),
                 [&] { return target_->PutIfMatch(key, body, etag); });
}

Result<ListPage> CountingStore::List(const std::string& prefix, const std::string& token,
                                     int max_keys) {
  return Measure(OpKind::kList, 0, [&] { return target_->List(prefix, token, max_keys); });
}

Status CountingStore::Delete(const std::string& key) {
  return Measure(OpKind::kDelete, 0, [&] { return target_->Delete(key); });
}

RequestCounts CountingStore::Snapshot() const {
  RequestCounts c;
  for (int i = 0; i < kOpKindCount; ++i) {
    c.requests[i] = requests_[i].load(std::memory_order_relaxed);
    c.bytes[i] = bytes_[i].load(std::memory_order_relaxed);
  }
  return c;
}

void CountingStore::WriteMetrics(metrics::TextWriter& out) const {
  out.Family("pailfs_objstore_requests_total", "counter",
             "Object-store requests (every retry attempt counts), by operation and outcome.");
  for (int i = 0; i < kOpKindCount; ++i) {
    for (int o = 0; o < kOutcomeCount; ++o) {
      out.Sample("pailfs_objstore_requests_total",
                 {{"op", OpKindName(OpKind(i))}, {"outcome", OutcomeName(Outcome(o))}},
                 static_cast<double>(outcomes_[i][o].load(std::memory_order_relaxed)));
    }
  }
  const RequestCounts c = Snapshot();
  out.Family("pailfs_objstore_bytes_total", "counter",
             "Object bodies sent to (up) and received from (down) the object store.");
  out.Sample("pailfs_objstore_bytes_total", {{"direction", "up"}}, static_cast<double>(c.bytes_written()));
  out.Sample("pailfs_objstore_bytes_total", {{"direction", "down"}}, static_cast<double>(c.bytes_read()));
  out.Family("pailfs_objstore_request_duration_seconds", "histogram",
             "Latency of each object-store request attempt, by operation.");
  for (int i = 0; i < kOpKindCount; ++i) {
    out.Histogram("pailfs_objstore_request_duration_seconds", {{"op", OpKindName(OpKind(i))}},
                  latency_[i].Read());
  }
}

}  // namespace pail
