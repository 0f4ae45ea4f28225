// DiskCache: the local disk copy of bucket objects, bounded in bytes.
//
// Objects are immutable under their key, so a cached extent never goes
// stale. Each cached object is a sparse local file plus a bitmap of the
// 1 MiB extents present; a read fetches the missing extents it touches with
// one ranged GET per contiguous run and keeps them. When the cache holds
// more than its budget, whole objects are evicted least recently used first
// (their extents are punched out; open readers simply fetch again).
// Files the engine wrote itself enter the cache complete once uploaded.
// The cache starts empty at every open: nothing on local disk is trusted.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include "util/mutex.h"
#include <string>
#include <unordered_map>
#include <vector>

#include "objstore/object_store.h"

namespace pail::engine {

constexpr uint64_t kCacheExtentBytes = 1 << 20;

class DiskCache {
 public:
  DiskCache(std::shared_ptr<ObjectStore> store, std::string dir, uint64_t budget_bytes);
  ~DiskCache();

  // Local path where the object `key` is (or will be) cached.
  std::string PathFor(const std::string& key) const;

  // Registers a complete local file at PathFor(key), written by the engine.
  void AddComplete(const std::string& key, uint64_t size);

  // Reads [offset, offset+n) of `key` (whose size is `size`) into `out`,
  // fetching what the cache lacks. Returns the bytes read (short at the end).
  Result<size_t> Read(const std::string& key, uint64_t size, uint64_t offset, size_t n, char* out);

  // Drops the object and its local file.
  void Remove(const std::string& key);

  uint64_t cached_bytes() const;
  // Reads served wholly from local disk, and reads that fetched extents.
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    // A new entry, all extents present when `complete`.
    Entry(std::string k, uint64_t s, int f, bool complete)
        : key(std::move(k)), size(s), fd(f),
          present((s + kCacheExtentBytes - 1) / kCacheExtentBytes, complete),
          present_bytes(complete ? s : 0) {}
    std::string key;
    uint64_t size = 0;
    int fd = -1;
    Mutex mu;  // guards fd contents, present, present_bytes; taken before mu_
    std::vector<bool> present GUARDED_BY(mu);  // one per extent
    uint64_t present_bytes GUARDED_BY(mu) = 0;
    std::list<std::string>::iterator lru;
  };
  std::shared_ptr<Entry> GetEntry(const std::string& key, uint64_t size);
  Status Fill(Entry& e, uint64_t first_extent, uint64_t last_extent) REQUIRES(e.mu);
  void EvictOverBudget();
  // Empties an entry already taken out of the map and closes its file.
  void Forget(Entry& e) EXCLUDES(mu_);
  size_t entries_size() const;
  static uint64_t ExtentLength(const Entry& e, uint64_t extent);

  std::shared_ptr<ObjectStore> store_;
  std::string dir_;
  uint64_t budget_;
  mutable Mutex mu_;  // taken after an Entry's mu, never before
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_ GUARDED_BY(mu_);
  std::list<std::string> lru_ GUARDED_BY(mu_);  // front = most recent
  uint64_t total_ GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace pail::engine
