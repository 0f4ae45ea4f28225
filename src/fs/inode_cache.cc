#include "fs/inode_cache.h"

namespace pail::fs {

InodeCache::InodeCache(size_t capacity) : shard_capacity_((capacity + kShards - 1) / kShards) {}

std::optional<InodeRecord> InodeCache::Find(Ino ino) {
  Shard& s = ShardOf(ino);
  MutexLock g(&s.mu);
  auto it = s.index.find(ino);
  if (it == s.index.end()) return std::nullopt;
  s.lru.splice(s.lru.begin(), s.lru, it->second);
  return it->second->second;
}

uint64_t InodeCache::Ticket(Ino ino) {
  Shard& s = ShardOf(ino);
  MutexLock g(&s.mu);
  return s.version;
}

void InodeCache::Fill(Ino ino, const InodeRecord& r, uint64_t ticket) {
  Shard& s = ShardOf(ino);
  MutexLock g(&s.mu);
  if (s.version == ticket) Put(s, ino, r);
}

void InodeCache::Store(Ino ino, const InodeRecord* r) {
  Shard& s = ShardOf(ino);
  MutexLock g(&s.mu);
  s.version++;
  if (r != nullptr) {
    Put(s, ino, *r);
    return;
  }
  auto it = s.index.find(ino);
  if (it == s.index.end()) return;
  s.lru.erase(it->second);
  s.index.erase(it);
}

void InodeCache::Put(Shard& s, Ino ino, const InodeRecord& r) {
  if (shard_capacity_ == 0) return;
  auto it = s.index.find(ino);
  if (it != s.index.end()) {
    it->second->second = r;
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    return;
  }
  if (s.index.size() >= shard_capacity_) {
    // Reuse the least recently used node rather than free and allocate one.
    auto last = std::prev(s.lru.end());
    s.index.erase(last->first);
    *last = {ino, r};
    s.lru.splice(s.lru.begin(), s.lru, last);
  } else {
    s.lru.emplace_front(ino, r);
  }
  s.index.emplace(ino, s.lru.begin());
}

size_t InodeCache::size() const {
  size_t n = 0;
  for (Shard& s : shards_) {
    MutexLock g(&s.mu);
    n += s.index.size();
  }
  return n;
}

}  // namespace pail::fs
