#include "objstore/counting_store.h"

namespace pail {

const char* OpKindName(OpKind op) {
  static const char* kNames[kOpKindCount] = {"get", "get_range", "head", "put",
                                             "put_if_absent", "put_if_match", "list", "delete"};
  return kNames[static_cast<int>(op)];
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

Result<std::string> CountingStore::Get(const std::string& key) {
  auto r = target_->Get(key);
  Count(OpKind::kGet, r.ok() ? r->size() : 0);
  return r;
}

Result<std::string> CountingStore::GetRange(const std::string& key, uint64_t offset,
                                            uint64_t length) {
  auto r = target_->GetRange(key, offset, length);
  Count(OpKind::kGetRange, r.ok() ? r->size() : 0);
  return r;
}

Result<ObjectMeta> CountingStore::Head(const std::string& key) {
  Count(OpKind::kHead, 0);
  return target_->Head(key);
}

Result<std::string> CountingStore::Put(const std::string& key, std::string_view body) {
  Count(OpKind::kPut, body.size());
  return target_->Put(key, body);
}

Result<std::string> CountingStore::PutIfAbsent(const std::string& key, std::string_view body) {
  Count(OpKind::kPutIfAbsent, body.size());
  return target_->PutIfAbsent(key, body);
}

Result<std::string> CountingStore::PutIfMatch(const std::string& key, std::string_view body,
                                              const std::string& etag) {
  Count(OpKind::kPutIfMatch, body.size());
  return target_->PutIfMatch(key, body, etag);
}

Result<ListPage> CountingStore::List(const std::string& prefix, const std::string& token,
                                     int max_keys) {
  Count(OpKind::kList, 0);
  return target_->List(prefix, token, max_keys);
}

Status CountingStore::Delete(const std::string& key) {
  Count(OpKind::kDelete, 0);
  return target_->Delete(key);
}

RequestCounts CountingStore::Snapshot() const {
  RequestCounts c;
  for (int i = 0; i < kOpKindCount; ++i) {
    c.requests[i] = requests_[i].load(std::memory_order_relaxed);
    c.bytes[i] = bytes_[i].load(std::memory_order_relaxed);
  }
  return c;
}

}  // namespace pail
