// Per-inode locks. Inodes hash onto a fixed table of mutexes; an operation
// that needs several inodes locks their slots in ascending slot order, so two
// operations can never wait on each other in a cycle. Lock order across the
// layer: rename mutex (directory moves only), then inode slots, then the
// inode-number allocator or a stats shard; nothing waits on a slot while
// holding either of the last two.
#pragma once

#include <algorithm>
#include <array>
#include <initializer_list>
#include <mutex>
#include <vector>

#include "fs/filesystem.h"

namespace pail::fs {

class LockTable {
 public:
  static constexpr size_t kSlots = 1024;

  size_t SlotOf(Ino ino) const { return (ino * 0x9E3779B97F4A7C15ull) >> 54; }
  std::mutex& slot(size_t i) { return slots_[i]; }

 private:
  std::array<std::mutex, kSlots> slots_;
};

// Holds the slots of a set of inodes (duplicates and zeros ignored).
class InodeLocks {
 public:
  InodeLocks(LockTable& table, std::initializer_list<Ino> inos) : table_(table) {
    for (Ino ino : inos) {
      if (ino != 0) slots_.push_back(table.SlotOf(ino));
    }
    std::sort(slots_.begin(), slots_.end());
    slots_.erase(std::unique(slots_.begin(), slots_.end()), slots_.end());
    for (size_t s : slots_) table_.slot(s).lock();
  }
  ~InodeLocks() {
    for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) table_.slot(*it).unlock();
  }
  InodeLocks(const InodeLocks&) = delete;
  InodeLocks& operator=(const InodeLocks&) = delete;

  bool Covers(Ino ino) const {
    return std::binary_search(slots_.begin(), slots_.end(), table_.SlotOf(ino));
  }

 private:
  LockTable& table_;
  std::vector<size_t> slots_;
};

}  // namespace pail::fs
