// RetryingStore: retries Status::kRetryable failures with exponential backoff,
// full jitter and an overall deadline; every other outcome passes through.
//
// A conditional write whose earlier attempt failed ambiguously (the request
// may have landed) and whose retry then reports "precondition failed" may be
// seeing its own earlier write. It re-reads the object and reports success
// when the stored body is byte-for-byte the one it sent.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "objstore/forwarding_store.h"

namespace pail {

struct RetryOptions {
  int max_attempts = 12;
  std::chrono::milliseconds initial_backoff{20};
  std::chrono::milliseconds max_backoff{2000};
  std::chrono::milliseconds deadline{60000};  // across all attempts of one call
};

class RetryingStore : public ForwardingStore {
 public:
  RetryingStore(std::shared_ptr<ObjectStore> target, RetryOptions options)
      : ForwardingStore(std::move(target)), options_(options) {}

  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;
  Status Delete(const std::string& key) override;

  // From now on every call makes one attempt: for a process stopping while
  // the store does not answer, where each retry would hold it up by another
  // attempt's timeout.
  void StopRetrying() { stop_retrying_.store(true, std::memory_order_relaxed); }

 private:
  // Runs `attempt` until it returns something other than kRetryable, the
  // attempts run out or the deadline passes. `retried` tells whether an
  // earlier attempt failed ambiguously.
  template <typename Fn>
  auto Run(const char* what, const std::string& key, Fn attempt) -> decltype(attempt(false));
  Result<std::string> ConditionalPut(const char* what, const std::string& key,
                                     std::string_view body, const std::function<Result<std::string>()>& put);

  RetryOptions options_;
  std::atomic<bool> stop_retrying_{false};
};

}  // namespace pail
