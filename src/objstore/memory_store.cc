#include "objstore/memory_store.h"

#include "objstore/object_store_util.h"

namespace pail {

std::string MemoryStore::StoreLocked(const std::string& key, std::string_view body) {
  std::string etag = "v" + std::to_string(next_version_++);
  objects_[key] = Object{std::string(body), etag};
  return etag;
}

Result<std::string> MemoryStore::Get(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Status::NotFound("memory://" + key);
  return it->second.body;
}

Result<std::string> MemoryStore::GetRange(const std::string& key, uint64_t offset, uint64_t length) {
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Status::NotFound("memory://" + key);
  return SliceRange(it->second.body, offset, length);
}

Result<ObjectMeta> MemoryStore::Head(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Status::NotFound("memory://" + key);
  return ObjectMeta{key, it->second.body.size(), it->second.etag};
}

Result<std::string> MemoryStore::Put(const std::string& key, std::string_view body) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  std::lock_guard lock(mu_);
  return StoreLocked(key, body);
}

Result<std::string> MemoryStore::PutIfAbsent(const std::string& key, std::string_view body) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  std::lock_guard lock(mu_);
  if (objects_.count(key)) return Status::PreconditionFailed("memory://" + key + " exists");
  return StoreLocked(key, body);
}

Result<std::string> MemoryStore::PutIfMatch(const std::string& key, std::string_view body,
                                            const std::string& etag) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end() || it->second.etag != etag) {
    return Status::PreconditionFailed("memory://" + key + " etag mismatch");
  }
  return StoreLocked(key, body);
}

Result<ListPage> MemoryStore::List(const std::string& prefix, const std::string& token,
                                   int max_keys) {
  std::lock_guard lock(mu_);
  ListPage page;
  // The token is the last key returned; listing resumes after it.
  auto it = token.empty() ? objects_.lower_bound(prefix) : objects_.upper_bound(token);
  for (; it != objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    if (static_cast<int>(page.objects.size()) == max_keys) {
      page.next_token = page.objects.back().key;
      break;
    }
    page.objects.push_back(ObjectMeta{it->first, it->second.body.size(), it->second.etag});
  }
  return page;
}

Status MemoryStore::Delete(const std::string& key) {
  std::lock_guard lock(mu_);
  objects_.erase(key);
  return Status::OK();
}

}  // namespace pail
