// The shape of the four block workloads: what they write and where.
// Shared by nbd_bench (through libnbd) and block_io_bench (through the
// kernel's NBD client), so both run the same requests and their numbers
// compare:
//   seq-write   1 MiB writes in order, then a flush (counted)
//   seq-read    1 MiB reads in order
//   rand-write  4 KiB writes at random aligned offsets, then a flush (counted)
//   rand-read   the same offsets, shuffled
// The data is pseudo-random, so no server can skip zeros or compress it away.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace block_workloads {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kSeqBlock = kMiB;
constexpr uint64_t kRandomBlock = 4096;

// `n` pseudo-random bytes drawn from `rng`.
inline std::string RandomBytes(std::mt19937_64& rng, uint64_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

struct Workloads {
  std::string data;  // what writes send, 8 MiB
  std::vector<uint64_t> write_offsets, read_offsets;  // of the random runs

  // What request `i` of `block` bytes writes.
  std::string_view WriteData(uint64_t i, uint64_t block) const {
    return std::string_view(data).substr((i * kRandomBlock) % (data.size() - block), block);
  }
  static uint64_t SeqOffset(uint64_t i) { return i * kSeqBlock; }
};

// The random runs cover the first `seq_mib` MiB, as the sequential ones do.
inline Workloads Make(uint64_t seq_mib, uint64_t random_ops) {
  std::mt19937_64 rng(42);
  Workloads w;
  w.data = RandomBytes(rng, 8 * kMiB);
  const uint64_t blocks = seq_mib * kMiB / kRandomBlock;
  w.write_offsets.resize(random_ops);
  for (auto& o : w.write_offsets) o = (rng() % blocks) * kRandomBlock;
  w.read_offsets = w.write_offsets;
  std::shuffle(w.read_offsets.begin(), w.read_offsets.end(), rng);
  return w;
}

}  // namespace block_workloads
