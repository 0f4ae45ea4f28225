// CountingStore: counts requests and bytes per operation kind, for metrics,
// cost reports and tests that assert "no request was made".
#pragma once

#include <array>
#include <atomic>

#include "objstore/forwarding_store.h"

namespace pail {

struct RequestCounts {
  std::array<uint64_t, kOpKindCount> requests{};
  std::array<uint64_t, kOpKindCount> bytes{};  // body bytes sent (writes) or received (reads)
  uint64_t total_requests() const;
  uint64_t bytes_written() const;  // Put, PutIfAbsent, PutIfMatch
  uint64_t bytes_read() const;     // Get, GetRange
};

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

 private:
  void Count(OpKind op, uint64_t bytes) {
    requests_[static_cast<int>(op)].fetch_add(1, std::memory_order_relaxed);
    bytes_[static_cast<int>(op)].fetch_add(bytes, std::memory_order_relaxed);
  }
  std::array<std::atomic<uint64_t>, kOpKindCount> requests_{};
  std::array<std::atomic<uint64_t>, kOpKindCount> bytes_{};
};

}  // namespace pail
