// Per-inode locks. Inodes hash onto a fixed table of mutexes; an operation
// that needs several inodes locks their slots in ascending slot order, so two
// operations can never wait on each other in a cycle. Lock order across the
// layer: rename mutex (directory moves only), then inode slots, then the
// inode-number allocator or a stats shard; nothing waits on a slot while
// holding either of the last two.
//
// Which slot an operation holds is known only at run time, so clang's
// analysis cannot check these locks; functions that need an inode's lock
// call LockTable::AssertHeld instead (checked in debug and sanitizer builds).
#pragma once

#include <algorithm>
#include <array>
#include <initializer_list>
#include <vector>

#include "fs/filesystem.h"
#include "util/hash_slot.h"
#include "util/mutex.h"

namespace pail::fs {

class LockTable {
 public:
  static constexpr int kSlotBits = 10;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;

  size_t SlotOf(Ino ino) const { return HashSlot(ino, kSlotBits); }
  Mutex& slot(size_t i) { return slots_[i]; }
  // Aborts (debug and sanitizer builds) unless this thread holds ino's slot.
  void AssertHeld(Ino ino) const { slots_[SlotOf(ino)].AssertHeld(); }

 private:
  std::array<Mutex, kSlots> slots_;
};

// Holds the slots of a set of inodes (duplicates and zeros ignored).
class InodeLocks {
 public:
  // Not annotated: the slots are chosen at run time (see above).
  InodeLocks(LockTable& table, std::initializer_list<Ino> inos) NO_THREAD_SAFETY_ANALYSIS
      : table_(table) {
    for (Ino ino : inos) {
      if (ino != 0) slots_.push_back(table.SlotOf(ino));
    }
    LockSorted();
  }
  // The same for a run-time set (a batch of directory entries).
  InodeLocks(LockTable& table, const std::vector<Ino>& inos) NO_THREAD_SAFETY_ANALYSIS
      : table_(table) {
    slots_.reserve(inos.size());
    for (Ino ino : inos) {
      if (ino != 0) slots_.push_back(table.SlotOf(ino));
    }
    LockSorted();
  }
  // One inode's slot; without `wait` only if it is free now, else none
  // (held() false), for the calls that must not wait (FileSystem::TryRead,
  // TryWrite). Waiting on no other slot, a try cannot join a cycle.
  InodeLocks(LockTable& table, Ino ino, bool wait) NO_THREAD_SAFETY_ANALYSIS : table_(table) {
    const size_t slot = table.SlotOf(ino);
    if (wait) {
      table.slot(slot).Lock();
    } else if (!table.slot(slot).TryLock()) {
      return;
    }
    slots_.push_back(slot);
  }
  bool held() const { return !slots_.empty(); }
  ~InodeLocks() NO_THREAD_SAFETY_ANALYSIS {
    for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) table_.slot(*it).Unlock();
  }
  InodeLocks(const InodeLocks&) = delete;
  InodeLocks& operator=(const InodeLocks&) = delete;

  bool Covers(Ino ino) const {
    return std::binary_search(slots_.begin(), slots_.end(), table_.SlotOf(ino));
  }

 private:
  void LockSorted() NO_THREAD_SAFETY_ANALYSIS {
    std::sort(slots_.begin(), slots_.end());
    slots_.erase(std::unique(slots_.begin(), slots_.end()), slots_.end());
    for (size_t s : slots_) table_.slot(s).Lock();
  }

  LockTable& table_;
  std::vector<size_t> slots_;
};

}  // namespace pail::fs
