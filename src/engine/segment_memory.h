// SegmentMemory: the plaintext of segments this process uploaded, kept in
// memory so that reading them back soon costs no request, no decryption and
// no disk cache read.
//
// What is kept is the upload's own buffer (the segment body SegmentBuilder
// built, from TakeStringBuffer), handed over once the upload succeeded, so
// keeping it copies nothing. Evicted bodies go back to the buffer pool
// (ReturnStringBuffer), where the next upload takes them.
//
// The bound is honest and holds at every moment: each body is charged its
// buffer's capacity (the memory it really holds) plus kEntryOverheadBytes,
// a body that does not fit evicts others first, and one bigger than the
// whole bound is not kept. A small body (under kPooledMinBytes) in a
// segment-sized buffer is kept as a copy and its buffer goes back to the
// pool; a bigger one is kept in its buffer and charged all of it, since
// copying megabytes means fresh memory, whose first touch costs more than
// the upload's encryption on a virtual machine.
// Readers copy out without the lock, holding a pin on the entry: an entry
// evicted while pinned leaves the map at once but stays charged until its
// last reader is done, so no reader ever holds memory outside the bound;
// when pinned entries leave no room, a new body is not kept. (A shared
// lock held across the copy would be simpler, but a steady stream of
// readers could then starve the upload that wants to keep its body.)
//
// Eviction is CLOCK, an approximation of least recently used: entries wait
// in insertion order; a read marks its entry; eviction takes the oldest,
// giving marked ones a second round.
//
// Staleness: a segment never changes under its id and ids never repeat (the
// writer's epoch is new at every open, data_objects.h), so a kept body is
// the segment's bytes for as long as it is kept. Erase drops the body of a
// deleted segment, so its memory does not wait for eviction.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

#include "util/mutex.h"

namespace pail::engine {

class SegmentMemory {
 public:
  // What an entry costs beyond its buffer: the map node, the clock slot and
  // the entry itself, rounded up.
  static constexpr size_t kEntryOverheadBytes = 128;

  explicit SegmentMemory(size_t capacity_bytes);
  ~SegmentMemory();
  SegmentMemory(const SegmentMemory&) = delete;
  SegmentMemory& operator=(const SegmentMemory&) = delete;

  // Keeps `body` as the whole of segment `id`, evicting others to make room;
  // gives it back to the buffer pool when it cannot be kept.
  void Keep(uint64_t id, std::string&& body) EXCLUDES(mu_);
  // Copies [offset, offset + n) of segment `id` to `out`. False, nothing
  // copied, when the segment is not kept or is shorter than that.
  bool Read(uint64_t id, uint64_t offset, size_t n, char* out) EXCLUDES(mu_);
  bool Contains(uint64_t id) EXCLUDES(mu_);
  void Erase(uint64_t id) EXCLUDES(mu_);

  size_t capacity() const { return capacity_; }
  // Bytes charged right now (never above capacity()).
  size_t charged() EXCLUDES(mu_);
  size_t entries() EXCLUDES(mu_);
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::string body;  // never changed while pinned
    size_t charge = 0;
    bool referenced = false;  // read since the clock last passed it
    int pins = 0;             // readers copying from it right now
    bool evicted = false;     // out of the map; the last reader frees it
  };
  // Evicts until `charge` more bytes fit or nothing evictable is left; the
  // evicted bodies are moved to *freed so they go back to the pool after
  // the lock is released.
  void MakeRoom(size_t charge, std::deque<std::string>* freed) REQUIRES(mu_);
  // Takes `e` (already out of the map) out of the charge, or leaves that to
  // its last reader when it is pinned.
  void Detach(std::unique_ptr<Entry> e, std::deque<std::string>* freed) REQUIRES(mu_);
  // Drops clock slots of erased entries once they outnumber the live ones.
  void CompactClock() REQUIRES(mu_);

  const size_t capacity_;
  Mutex mu_;
  std::unordered_map<uint64_t, std::unique_ptr<Entry>> entries_ GUARDED_BY(mu_);
  std::deque<uint64_t> clock_ GUARDED_BY(mu_);  // ids, oldest first; may name erased ones
  size_t charged_ GUARDED_BY(mu_) = 0;  // kept and evicted-but-pinned entries
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> evictions_{0};
};

}  // namespace pail::engine
