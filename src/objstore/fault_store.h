// FaultStore: injects failures, latency and crash points, for tests.
//
// Per operation kind it can fail a fraction of calls with a retryable error,
// either before the call reaches the target ("clean" failure) or after it
// succeeded there ("ambiguous": the write landed but the caller is told it
// failed, as when a connection drops before the response). A hook runs
// before every call so a test can kill the process at a precise point.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <random>

#include "objstore/forwarding_store.h"

namespace pail {

struct FaultOptions {
  std::array<double, kOpKindCount> error_rate{};      // clean retryable failures
  std::array<double, kOpKindCount> ambiguous_rate{};  // applied, then reported failed
  std::chrono::microseconds latency{0};               // added to every call
  uint64_t seed = 1;
};

class FaultStore : public ForwardingStore {
 public:
  FaultStore(std::shared_ptr<ObjectStore> target, FaultOptions options)
      : ForwardingStore(std::move(target)), options_(options), rng_(options.seed) {}

  // Replaces the fault settings; takes effect for calls that start later.
  void SetOptions(const FaultOptions& options);
  // Sets every error rate to `rate` (0 heals the store).
  void SetErrorRateAll(double rate);
  // Called before each operation with its kind and key.
  void SetHook(std::function<void(OpKind, const std::string&)> hook);
  uint64_t injected_failures() const { return injected_.load(); }

  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;
  Status Delete(const std::string& key) override;

 private:
  enum class Fault { kNone, kBefore, kAfter };
  Fault Decide(OpKind op, const std::string& key);
  template <typename Fn>
  auto Apply(OpKind op, const std::string& key, Fn call) -> decltype(call());

  std::mutex mu_;
  FaultOptions options_;
  std::mt19937_64 rng_;
  std::function<void(OpKind, const std::string&)> hook_;
  std::atomic<uint64_t> injected_{0};
};

}  // namespace pail
