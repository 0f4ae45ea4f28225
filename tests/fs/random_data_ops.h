// Random offsets, lengths and bytes for the data-model tests: the core's
// (tests/fs/data_model_test.cc) and the FUSE mount's (tests/fuse/
// data_model.cc). Offsets fall mostly on or beside chunk and block
// boundaries, where the stored layout changes; bytes come with zero runs,
// which the core trims or keeps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

namespace pail::testing {

inline constexpr uint64_t kModelChunkBytes = 32 * 1024;  // fs::kChunkSize
inline constexpr uint64_t kModelBlockBytes = 4096;       // fs::kPieceBlockBytes

// An offset in [0, limit].
inline uint64_t RandomOffset(std::mt19937_64& rng, uint64_t limit) {
  if (limit == 0) return 0;
  switch (rng() % 4) {
    case 0:
      return std::min(limit, (rng() % (limit / kModelChunkBytes + 1)) * kModelChunkBytes);
    case 1:
      return std::min(limit, (rng() % (limit / kModelBlockBytes + 1)) * kModelBlockBytes);
    case 2: {  // a byte either side of a chunk boundary
      uint64_t edge = (1 + rng() % (limit / kModelChunkBytes + 1)) * kModelChunkBytes;
      return std::min(limit, rng() % 2 == 0 ? edge - 1 : edge + 1);
    }
    default:
      return rng() % (limit + 1);
  }
}

// A length from one byte to six chunks: small, whole blocks, whole chunks.
inline uint64_t RandomLength(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return 1 + rng() % 100;
    case 1:
      return kModelBlockBytes * (1 + rng() % 8);
    case 2:
      return kModelChunkBytes * (1 + rng() % 6) + rng() % 3;
    default:
      return 1 + rng() % (6 * kModelChunkBytes);
  }
}

// n bytes, none zero, except: all of them (one time in six), or a run.
inline std::string RandomBytes(std::mt19937_64& rng, uint64_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(1 + rng() % 255);
  if (rng() % 6 == 0) {
    std::fill(s.begin(), s.end(), '\0');
  } else if (rng() % 4 == 0 && n > 2) {
    uint64_t from = rng() % n;
    std::fill(s.begin() + from, s.begin() + from + rng() % (n - from), '\0');
  }
  return s;
}

}  // namespace pail::testing
