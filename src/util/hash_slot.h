// HashSlot: which of 2^bits slots a key falls in, by Fibonacci hashing (the
// top bits of key * 2^64/phi). Consecutive keys, such as inode numbers,
// land far apart, so a fixed table of locks, shards or notes shared by hash
// spreads them without a division.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pail {

// `bits` is 1 to 63.
inline size_t HashSlot(uint64_t key, int bits) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

}  // namespace pail
