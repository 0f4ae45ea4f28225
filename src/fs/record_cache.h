// Bounded caches of decoded metadata records, in front of the engine.
//
// Nearly every operation loads an inode and looks a name up in its
// directory, and a READDIRPLUS page loads one inode per entry. From the
// engine each is a search of the memtables and SSTs: with a full memtable
// on this project's 2-core VMs, about 7 us a record; the two lookups of
// the name were 15-17% of the server's time in a loop of creates or of
// unlinks. Here a hit is one hash lookup.
//
// Coherence. A cache holds only what the engine holds: FileSystemImpl calls
// Store after every commit that wrote or deleted the records it caches
// (Txn::inodes, Txn::entries), and Forget when a commit failed. A record read
// from the engine on a miss is kept only if no Store or Forget touched its
// shard since the reader took its Ticket before reading; otherwise an older
// record read before a commit could overwrite the newer one that commit
// stored. Readers need no lock of the filesystem's; writers store before they
// release the inode locks their commit held, so a reader holding those locks
// sees exactly what the engine holds.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "fs/inode_record.h"
#include "fs/key_codec.h"
#include "util/hash_slot.h"
#include "util/mutex.h"

namespace pail::fs {

template <typename Key, typename Value>
class RecordCache {
 public:
  // Told of each record the cache lets go of to make room (or, at capacity
  // 0, does not keep), under the cache's lock: it must not call back in.
  using EvictionListener = std::function<void(const Key&, const Value&)>;

  // Holds at most `capacity` records; 0 disables it.
  explicit RecordCache(size_t capacity, EvictionListener on_evict = nullptr)
      : shard_capacity_((capacity + kShards - 1) / kShards), on_evict_(std::move(on_evict)) {}
  RecordCache(const RecordCache&) = delete;
  RecordCache& operator=(const RecordCache&) = delete;

  // The record of `key`, if cached.
  std::optional<Value> Find(const Key& key) {
    Shard& s = ShardOf(key);
    MutexLock g(&s.mu);
    auto it = s.index.find(key);
    if (it == s.index.end()) return std::nullopt;
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    return it->second->second;
  }

  // Taken before reading `key` from the engine; pass it to Fill.
  uint64_t Ticket(const Key& key) {
    Shard& s = ShardOf(key);
    MutexLock g(&s.mu);
    return s.version;
  }

  // Keeps `v`, read from the engine after `ticket` was taken, unless a
  // commit stored or forgot a record of the same shard since.
  void Fill(const Key& key, const Value& v, uint64_t ticket) {
    Shard& s = ShardOf(key);
    MutexLock g(&s.mu);
    if (s.version == ticket) Put(s, key, v);
  }

  // After a commit: `v` is what the engine now holds for `key`; nullptr
  // drops the key (what the engine holds is not known here).
  void Store(const Key& key, const Value* v) {
    Shard& s = ShardOf(key);
    MutexLock g(&s.mu);
    s.version++;
    if (v != nullptr) {
      Put(s, key, *v);
      return;
    }
    auto it = s.index.find(key);
    if (it == s.index.end()) return;
    s.lru.erase(it->second);
    s.index.erase(it);
  }
  // After a failed commit: whatever the engine holds for `key` is unknown.
  void Forget(const Key& key) { Store(key, nullptr); }

  size_t size() const {
    size_t n = 0;
    for (Shard& s : shards_) {
      MutexLock g(&s.mu);
      n += s.index.size();
    }
    return n;
  }
  size_t capacity() const { return shard_capacity_ * kShards; }

 private:
  static constexpr int kShardBits = 4;
  static constexpr size_t kShards = size_t{1} << kShardBits;
  using Entry = std::pair<Key, Value>;
  struct Shard {
    Mutex mu;
    // Bumped by every Store; a Fill whose ticket is older is dropped.
    uint64_t version GUARDED_BY(mu) = 0;
    // Most recently used first.
    std::list<Entry> lru GUARDED_BY(mu);
    std::unordered_map<Key, typename std::list<Entry>::iterator> index GUARDED_BY(mu);
  };

  Shard& ShardOf(const Key& key) {
    return shards_[HashSlot(std::hash<Key>{}(key), kShardBits)];
  }

  void Put(Shard& s, const Key& key, const Value& v) REQUIRES(s.mu) {
    if (shard_capacity_ == 0) {
      if (on_evict_) on_evict_(key, v);
      return;
    }
    auto it = s.index.find(key);
    if (it != s.index.end()) {
      it->second->second = v;
      s.lru.splice(s.lru.begin(), s.lru, it->second);
      return;
    }
    if (s.index.size() >= shard_capacity_) {
      // Reuse the least recently used node rather than free and allocate one.
      auto last = std::prev(s.lru.end());
      if (on_evict_) on_evict_(last->first, last->second);
      s.index.erase(last->first);
      *last = {key, v};
      s.lru.splice(s.lru.begin(), s.lru, last);
    } else {
      s.lru.emplace_front(key, v);
    }
    s.index.emplace(key, s.lru.begin());
  }

  const size_t shard_capacity_;
  const EvictionListener on_evict_;
  mutable std::array<Shard, kShards> shards_;
};

// Inode records by inode number.
using InodeCache = RecordCache<Ino, InodeRecord>;

// Directory entries by their engine key (DirEntryKey: directory and name),
// absent names included: a name looked up and not found is usually created
// next (the kernel looks before it creates).
using DentryCache = RecordCache<std::string, std::optional<DirEntryValue>>;

}  // namespace pail::fs
