// Helpers for tests that damage a bucket or take it over mid-step.
#pragma once

#include <functional>
#include <set>
#include <string>

#include <rocksdb/db.h>

#include "engine/engine.h"
#include "objstore/forwarding_store.h"

namespace pail::testing {

// Refuses (cleanly, before the request) every write whose key `refuse`
// accepts: a process that stops at that step.
class RefusingStore : public ForwardingStore {
 public:
  RefusingStore(std::shared_ptr<ObjectStore> target, std::function<bool(const std::string&)> refuse)
      : ForwardingStore(std::move(target)), refuse_(std::move(refuse)) {}
  Result<std::string> Put(const std::string& key, std::string_view body) override {
    if (refuse_(key)) return Status::Permanent("refused by the test: " + key);
    return target_->Put(key, body);
  }
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override {
    if (refuse_(key)) return Status::Permanent("refused by the test: " + key);
    return target_->PutIfAbsent(key, body);
  }

 private:
  std::function<bool(const std::string&)> refuse_;
};

inline bool HasSuffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

inline std::set<std::string> Keys(ObjectStore& store, const std::string& prefix) {
  std::set<std::string> out;
  auto all = ListAll(store, prefix);
  if (all.ok()) {
    for (auto& meta : *all) out.insert(meta.key);
  }
  return out;
}

inline std::string Read(engine::Engine& e, const std::string& cf, const std::string& key) {
  std::string value;
  rocksdb::Status s = e.db()->Get(rocksdb::ReadOptions(), e.column_family(cf), key, &value);
  if (s.IsNotFound()) return "<missing>";
  return s.ok() ? value : "<error " + s.ToString() + ">";
}

inline Status Write(engine::Engine& e, const std::string& cf, const std::string& key,
                    const std::string& value) {
  rocksdb::WriteBatch batch;
  batch.Put(e.column_family(cf), key, value);
  return e.Write(&batch);
}

inline rocksdb::Status FlushAll(engine::Engine& e) {
  std::vector<rocksdb::ColumnFamilyHandle*> all{e.column_family("default"), e.column_family("meta"),
                                                e.column_family("data")};
  return e.db()->Flush(rocksdb::FlushOptions(), all);
}

}  // namespace pail::testing
