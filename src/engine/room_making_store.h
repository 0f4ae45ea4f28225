// RoomMakingStore: the writes into a bucket on this machine's disk, which
// make the disk cache give way when that disk is full.
//
// The embedded default keeps the bucket (file://) and the cache directory on
// one disk. When a put finds the disk full (NoSpace), the cache, which holds
// copies only, evicts and pauses (DiskCache::NoteLocalFailure), and the put
// is tried once more when that freed anything. A put refused for room wrote
// nothing (the store writes a temp file and links it into place), so the
// second try of a put-if-absent cannot find its own first. Reads pass
// through untouched.
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
    Result<std::string> put = target_->Put(key, body);
    if (CacheGaveWay(key, put)) put = target_->Put(key, body);
    return put;
  }
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override {
    Result<std::string> put = target_->PutIfAbsent(key, body);
    if (CacheGaveWay(key, put)) put = target_->PutIfAbsent(key, body);
    return put;
  }
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override {
    Result<std::string> put = target_->PutIfMatch(key, body, etag);
    if (CacheGaveWay(key, put)) put = target_->PutIfMatch(key, body, etag);
    return put;
  }

 private:
  // Whether `put` was refused for room and the cache then freed some.
  bool CacheGaveWay(const std::string& key, const Result<std::string>& put) {
    if (put.ok() || !put.status().IsNoSpace()) return false;
    const uint64_t held = cache_->cached_bytes();
    cache_->NoteLocalFailure("the bucket's disk refused " + key, ENOSPC);
    return cache_->cached_bytes() < held;
  }

  DiskCache* cache_;
};

}  // namespace pail::engine
