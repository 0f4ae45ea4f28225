// A bounded cache of decoded inode records, in front of the engine.
//
// Nearly every operation loads an inode, and a READDIRPLUS page loads one per
// entry. From the engine each load is a search of the memtables and SSTs:
// with a full memtable on this project's 2-core VMs, about 7 us a record,
// most of a READDIRPLUS. Here a hit is one hash lookup.
//
// Coherence. The cache holds only what the engine holds: FileSystemImpl calls
// Store after every commit that wrote or deleted inode records (Txn::inodes),
// and Forget when a commit failed. A record read from the engine on a miss is
// kept only if no Store or Forget touched its shard since the reader took its
// Ticket before reading; otherwise an older record read before a commit could
// overwrite the newer one that commit stored. Readers need no inode lock.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>
#include <utility>

#include "fs/inode_record.h"
#include "util/mutex.h"

namespace pail::fs {

class InodeCache {
 public:
  // Holds at most `capacity` records (about 240 bytes each); 0 disables it.
  explicit InodeCache(size_t capacity);
  InodeCache(const InodeCache&) = delete;
  InodeCache& operator=(const InodeCache&) = delete;

  // The record of `ino`, if cached.
  std::optional<InodeRecord> Find(Ino ino);

  // Taken before reading `ino` from the engine; pass it to Fill.
  uint64_t Ticket(Ino ino);
  // Keeps `r`, read from the engine after `ticket` was taken, unless a commit
  // stored or forgot a record of the same shard since.
  void Fill(Ino ino, const InodeRecord& r, uint64_t ticket);

  // After a commit: `r` is what the engine now holds for `ino`, or nullptr
  // when the commit deleted it.
  void Store(Ino ino, const InodeRecord* r);
  // After a failed commit: whatever the engine holds for `ino` is unknown.
  void Forget(Ino ino) { Store(ino, nullptr); }

  size_t size() const;
  size_t capacity() const { return shard_capacity_ * kShards; }

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    Mutex mu;
    // Bumped by every Store; a Fill whose ticket is older is dropped.
    uint64_t version GUARDED_BY(mu) = 0;
    // Most recently used first.
    std::list<std::pair<Ino, InodeRecord>> lru GUARDED_BY(mu);
    std::unordered_map<Ino, std::list<std::pair<Ino, InodeRecord>>::iterator> index GUARDED_BY(mu);
  };

  Shard& ShardOf(Ino ino) { return shards_[(ino * 0x9E3779B97F4A7C15ull) >> 60]; }
  void Put(Shard& s, Ino ino, const InodeRecord& r) REQUIRES(s.mu);

  const size_t shard_capacity_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace pail::fs
