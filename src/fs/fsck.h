// Offline consistency check of a pailfs filesystem (`pailfs fsck`).
//
// Reads every key of the filesystem's column families from an engine that no
// FileSystem is using and checks the invariants described in docs/FORMAT.md:
// every directory entry points to an existing inode of the recorded type and
// has its scan row (and the other way round), link counts match the entries,
// directory counters (entries, subdirectories, next cookie) match their
// contents, each file's stored data matches its size and used bytes, and no
// data or xattr is left for an inode that no longer exists (unless its
// reclaim is pending), and each inode's xattr totals add up its xattrs.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "util/status.h"

namespace pail::fs {

struct FsckReport {
  std::vector<std::string> problems;  // empty when the filesystem is clean
  std::vector<std::string> notes;     // worth saying, not problems
  uint64_t inodes = 0;
  uint64_t directories = 0;
  uint64_t files = 0;
  uint64_t entries = 0;
  uint64_t chunks = 0;
  uint64_t pieces_chunks = 0;  // of those, stored as pieces of extents
  uint64_t data_bytes = 0;  // plain bytes of the chunks
  uint64_t pending_reclaims = 0;  // deleted files whose data is not yet freed
  uint64_t orphans = 0;           // unlinked while open; reclaimed at next open
  // Segments: every registered one with its total bytes and the bytes of
  // it that chunk values point at (garbage is the difference).
  struct Segment {
    uint64_t id = 0;
    uint64_t total_bytes = 0;
    uint64_t live_bytes = 0;
  };
  std::vector<Segment> segments;
  uint64_t segment_bytes = 0;
  uint64_t segment_live_bytes = 0;
  uint64_t unregistered_objects = 0;  // data objects no record names (collected later)

  bool clean() const { return problems.empty(); }
};

// Called now and then during the scan with the pass ("inodes", "entries",
// "data") and the keys read so far in it, for a progress display.
using FsckProgress = std::function<void(std::string_view pass, uint64_t keys)>;

// Fails only when the engine cannot be read; damage goes into the report.
Result<FsckReport> Fsck(engine::Engine& engine, FsckProgress progress = nullptr);

}  // namespace pail::fs
