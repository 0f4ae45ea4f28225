// The chunks of a regular file that fallocate set aside against the quota
// (docs/FORMAT.md, "Reserved chunks"). A reserved chunk is charged its full
// kChunkSize whatever it stores, so writing into it never needs room; it
// stays reserved until a punch covers it whole or a truncate cuts it off.
//
// Kept in the inode record as runs of chunk indexes, sorted, apart (never
// touching) and at most kMaxRuns of them, so a record stays small: past the
// bound the two runs with the smallest gap between them become one, which
// reserves the gap too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pail::fs {

// Chunk indexes [first, end).
struct ChunkRun {
  uint64_t first = 0;
  uint64_t end = 0;
  uint64_t size() const { return end - first; }
  bool operator==(const ChunkRun&) const = default;
};

class ReservedChunks {
 public:
  static constexpr size_t kMaxRuns = 64;
  // Bytes per run in the record: first and end, u64 little-endian each.
  static constexpr size_t kEncodedRunBytes = 16;

  bool empty() const { return runs_.empty(); }
  const std::vector<ChunkRun>& runs() const { return runs_; }
  bool Contains(uint64_t index) const;
  // Chunks reserved in all.
  uint64_t Count() const;
  // Reserves `add` (merging past kMaxRuns as above); returns the runs that
  // were not reserved before, in order.
  std::vector<ChunkRun> Add(ChunkRun add);
  // Releases what lies in `cut`; returns how many chunks were reserved there.
  uint64_t Remove(ChunkRun cut);

  void AppendTo(std::string* out) const;
  // False when `in` is not runs as AppendTo writes them (sorted, apart,
  // non-empty, at most kMaxRuns).
  bool Parse(std::string_view in);

  bool operator==(const ReservedChunks&) const = default;

 private:
  std::vector<ChunkRun> runs_;
};

}  // namespace pail::fs
