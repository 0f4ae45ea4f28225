// RoomMakingStore: the writes into a bucket on this machine's disk, which
// make the disk cache give way when that disk is full.
//
// The embedded default keeps the bucket (file://) and the cache directory on
// one disk. When a put finds the disk full (NoSpace), the cache, which holds
// copies only, evicts and pauses (DiskCache::NoteLocalFailure), and the
// writer's next attempt (the uploader retries each second) finds the room
// it freed. Reads pass through untouched.
#pragma once

#include <cerrno>
#include <memory>
#include <string>

#include "engine/disk_cache.h"
#include "objstore/forwarding_store.h"

namespace pail::engine {

class RoomMakingStore : public ForwardingStore {
 public:
  RoomMakingStore(std::shared_ptr<ObjectStore> target, DiskCache* cache)
      : ForwardingStore(std::move(target)), cache_(cache) {}

  Result<std::string> Put(const std::string& key, std::string_view body) override {
    return Noted(key, target_->Put(key, body));
  }
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override {
    return Noted(key, target_->PutIfAbsent(key, body));
  }
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override {
    return Noted(key, target_->PutIfMatch(key, body, etag));
  }

 private:
  Result<std::string> Noted(const std::string& key, Result<std::string> put) {
    if (!put.ok() && put.status().IsNoSpace()) {
      cache_->NoteLocalFailure("the bucket's disk refused " + key, ENOSPC);
    }
    return put;
  }

  DiskCache* cache_;
};

}  // namespace pail::engine
