// ForwardingStore: passes every call to a target store. Wrappers derive from
// it and override only what they change.
#pragma once

#include <memory>

#include "objstore/object_store.h"

namespace pail {

// The kinds of request a store serves, for counters and fault injection.
enum class OpKind { kGet, kGetRange, kHead, kPut, kPutIfAbsent, kPutIfMatch, kList, kDelete };
constexpr int kOpKindCount = 8;
const char* OpKindName(OpKind op);

class ForwardingStore : public ObjectStore {
 public:
  explicit ForwardingStore(std::shared_ptr<ObjectStore> target) : target_(std::move(target)) {}

  Result<std::string> Get(const std::string& key) override { return target_->Get(key); }
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    return target_->GetRange(key, offset, length);
  }
  Result<ObjectMeta> Head(const std::string& key) override { return target_->Head(key); }
  Result<std::string> Put(const std::string& key, std::string_view body) override {
    return target_->Put(key, body);
  }
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override {
    return target_->PutIfAbsent(key, body);
  }
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override {
    return target_->PutIfMatch(key, body, etag);
  }
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override {
    return target_->List(prefix, token, max_keys);
  }
  Status Delete(const std::string& key) override { return target_->Delete(key); }
  std::string Describe() const override { return target_->Describe(); }
  bool IsLocal() const override { return target_->IsLocal(); }

  ObjectStore& target() { return *target_; }

 protected:
  std::shared_ptr<ObjectStore> target_;
};

}  // namespace pail
