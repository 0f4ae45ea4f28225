#include "objstore/fault_store.h"

#include <thread>

namespace pail {

void FaultStore::SetOptions(const FaultOptions& options) {
  std::lock_guard lock(mu_);
  options_ = options;
}

void FaultStore::SetErrorRateAll(double rate) {
  std::lock_guard lock(mu_);
  options_.error_rate.fill(rate);
}

void FaultStore::SetHook(std::function<void(OpKind, const std::string&)> hook) {
  std::lock_guard lock(mu_);
  hook_ = std::move(hook);
}

FaultStore::Fault FaultStore::Decide(OpKind op, const std::string& key) {
  std::function<void(OpKind, const std::string&)> hook;
  std::chrono::microseconds latency;
  Fault fault = Fault::kNone;
  {
    std::lock_guard lock(mu_);
    hook = hook_;
    latency = options_.latency;
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    if (coin(rng_) < options_.error_rate[static_cast<int>(op)]) {
      fault = Fault::kBefore;
    } else if (coin(rng_) < options_.ambiguous_rate[static_cast<int>(op)]) {
      fault = Fault::kAfter;
    }
  }
  if (hook) hook(op, key);
  if (latency.count() > 0) std::this_thread::sleep_for(latency);
  if (fault != Fault::kNone) injected_.fetch_add(1);
  return fault;
}

template <typename Fn>
auto FaultStore::Apply(OpKind op, const std::string& key, Fn call) -> decltype(call()) {
  Fault fault = Decide(op, key);
  Status injected = Status::Retryable(std::string("injected fault on ") + OpKindName(op) + " " + key);
  if (fault == Fault::kBefore) return injected;
  auto result = call();
  if (fault == Fault::kAfter) return injected;
  return result;
}

Result<std::string> FaultStore::Get(const std::string& key) {
  return Apply(OpKind::kGet, key, [&] { return target_->Get(key); });
}

Result<std::string> FaultStore::GetRange(const std::string& key, uint64_t offset, uint64_t length) {
  return Apply(OpKind::kGetRange, key, [&] { return target_->GetRange(key, offset, length); });
}

Result<ObjectMeta> FaultStore::Head(const std::string& key) {
  return Apply(OpKind::kHead, key, [&] { return target_->Head(key); });
}

Result<std::string> FaultStore::Put(const std::string& key, std::string_view body) {
  return Apply(OpKind::kPut, key, [&] { return target_->Put(key, body); });
}

Result<std::string> FaultStore::PutIfAbsent(const std::string& key, std::string_view body) {
  return Apply(OpKind::kPutIfAbsent, key, [&] { return target_->PutIfAbsent(key, body); });
}

Result<std::string> FaultStore::PutIfMatch(const std::string& key, std::string_view body,
                                           const std::string& etag) {
  return Apply(OpKind::kPutIfMatch, key, [&] { return target_->PutIfMatch(key, body, etag); });
}

Result<ListPage> FaultStore::List(const std::string& prefix, const std::string& token,
                                  int max_keys) {
  return Apply(OpKind::kList, prefix, [&] { return target_->List(prefix, token, max_keys); });
}

Status FaultStore::Delete(const std::string& key) {
  return Apply(OpKind::kDelete, key, [&] { return target_->Delete(key); });
}

}  // namespace pail
