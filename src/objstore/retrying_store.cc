#include "objstore/retrying_store.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <random>
#include <thread>

namespace pail {
namespace {

const Status& StatusOf(const Status& s) { return s; }
template <typename T>
const Status& StatusOf(const Result<T>& r) { return r.status(); }

}  // namespace

template <typename Fn>
auto RetryingStore::Run(const char* what, const std::string& key, Fn attempt)
    -> decltype(attempt(false)) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const auto deadline = std::chrono::steady_clock::now() + options_.deadline;
  auto backoff = options_.initial_backoff;
  bool retried = false;
  for (int n = 1;; ++n) {
    auto result = attempt(retried);
    const Status& s = StatusOf(result);
    if (!s.IsRetryable() || n >= options_.max_attempts ||
        stop_retrying_.load(std::memory_order_relaxed)) {
      return result;
    }
    // Full jitter: spreads retries of many clients hitting the same throttle.
    auto sleep = std::chrono::milliseconds(
        std::uniform_int_distribution<int64_t>(0, backoff.count())(rng));
    if (std::chrono::steady_clock::now() + sleep > deadline) return result;
    spdlog::debug("{} {}: {}; retry {} in {} ms", what, key, s.ToString(), n, sleep.count());
    std::this_thread::sleep_for(sleep);
    backoff = std::min(backoff * 2, options_.max_backoff);
    retried = true;
  }
}

Result<std::string> RetryingStore::Get(const std::string& key) {
  return Run("get", key, [&](bool) { return target_->Get(key); });
}

Result<std::string> RetryingStore::GetRange(const std::string& key, uint64_t offset,
                                            uint64_t length) {
  return Run("get", key, [&](bool) { return target_->GetRange(key, offset, length); });
}

Result<ObjectMeta> RetryingStore::Head(const std::string& key) {
  return Run("head", key, [&](bool) { return target_->Head(key); });
}

Result<std::string> RetryingStore::Put(const std::string& key, std::string_view body) {
  return Run("put", key, [&](bool) { return target_->Put(key, body); });
}

Result<std::string> RetryingStore::ConditionalPut(
    const char* what, const std::string& key, std::string_view body,
    const std::function<Result<std::string>()>& put) {
  return Run(what, key, [&](bool retried) -> Result<std::string> {
    auto r = put();
    if (!retried || !r.status().IsPreconditionFailed()) return r;
    // Did an earlier, ambiguous attempt of ours land?
    auto stored = target_->Get(key);
    if (!stored.ok()) {
      return stored.status().IsNotFound() ? r : Result<std::string>(stored.status());
    }
    if (*stored != body) return r;
    auto meta = target_->Head(key);
    if (!meta.ok()) return meta.status();
    return meta->etag;
  });
}

Result<std::string> RetryingStore::PutIfAbsent(const std::string& key, std::string_view body) {
  return ConditionalPut("put-if-absent", key, body,
                        [&] { return target_->PutIfAbsent(key, body); });
}

Result<std::string> RetryingStore::PutIfMatch(const std::string& key, std::string_view body,
                                              const std::string& etag) {
  return ConditionalPut("put-if-match", key, body,
                        [&] { return target_->PutIfMatch(key, body, etag); });
}

Result<ListPage> RetryingStore::List(const std::string& prefix, const std::string& token,
                                     int max_keys) {
  return Run("list", prefix, [&](bool) { return target_->List(prefix, token, max_keys); });
}

Status RetryingStore::Delete(const std::string& key) {
  return Run("delete", key, [&](bool) { return target_->Delete(key); });
}

}  // namespace pail
