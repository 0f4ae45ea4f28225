// MemoryStore: a bucket in a map, for tests and `memory://`.
#pragma once

#include <map>
#include <mutex>

#include "objstore/object_store.h"

namespace pail {

class MemoryStore : public ObjectStore {
 public:
  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;
  Status Delete(const std::string& key) override;
  std::string Describe() const override { return "memory://"; }

 private:
  struct Object {
    std::string body;
    std::string etag;
  };
  std::string StoreLocked(const std::string& key, std::string_view body);

  std::mutex mu_;
  std::map<std::string, Object> objects_;
  uint64_t next_version_ = 1;  // etags are write counters: unique per write
};

}  // namespace pail
