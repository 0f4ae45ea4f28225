// Which READDIRPLUS pages are worth their attributes.
//
// With FUSE_CAP_READDIRPLUS_AUTO (libfuse's default) the kernel asks for
// attributes with a directory's first page, and with a later page only
// when a LOOKUP in the directory happened since the page before: it takes
// a lookup as the sign of a lister that stats what it lists (ls -l). But
// creating a name looks it up first too, so a directory being filled while
// it is listed (make -j writing objects beside a reader, stress-ng's dir)
// has every page asked with attributes, and the kernel instantiates a
// dentry and an inode for each entry, under the directory's lock, for a
// lister that reads names only: 0.75-0.8x bindfs on stress-ng dir, against
// 1.24-1.30x with READDIRPLUS off (docs/benchmarks.md, session 29).
//
// ListingHints sharpens the sign: a page past the first is answered
// without attributes (entries with node id 0, which the kernel lists
// without a dentry) when every lookup in the directory since its previous
// page found nothing. A lookup that found its name, the first page, or a
// directory whose note another took the slot of keeps the kernel's choice.
// Fixed memory: 4096 slots shared by hash; a shared slot can only give
// attributes where none were needed.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "util/hash_slot.h"

namespace pail::fuse {

class ListingHints {
 public:
  // A LOOKUP of a name in `dir` answered: found or not.
  void NoteLookup(uint64_t dir, bool found) {
    std::atomic<uint64_t>& slot = SlotOf(dir);
    const uint64_t note = dir << 1 | (found ? kFound : 0);
    if (found) {
      slot.store(note, std::memory_order_relaxed);
      return;
    }
    // A found lookup since the last page stands against later misses.
    uint64_t seen = slot.load(std::memory_order_relaxed);
    while (seen != (dir << 1 | kFound) &&
           !slot.compare_exchange_weak(seen, note, std::memory_order_relaxed)) {
    }
  }

  // Whether a page of `dir` past the first should carry attributes. Starts
  // the next page's record.
  bool AttributesWanted(uint64_t dir) {
    std::atomic<uint64_t>& slot = SlotOf(dir);
    uint64_t seen = slot.load(std::memory_order_relaxed);
    if (seen >> 1 != dir) return true;  // no record of this directory's lookups
    const bool wanted = (seen & kFound) != 0;
    slot.compare_exchange_strong(seen, 0, std::memory_order_relaxed);
    return wanted;
  }

 private:
  static constexpr uint64_t kFound = 1;
  static constexpr int kSlotBits = 12;

  std::atomic<uint64_t>& SlotOf(uint64_t dir) { return slots_[HashSlot(dir, kSlotBits)]; }

  // dir << 1 | kFound when a lookup found a name since the last page; 0: none.
  std::array<std::atomic<uint64_t>, size_t{1} << kSlotBits> slots_{};
};

}  // namespace pail::fuse
