// ChangeSequences: for each inode, a bound on the engine sequence number of
// the last write that changed it, so that an fsync uploads only when that
// write is not in the bucket yet (Engine::SyncThrough). A process that
// fsyncs a directory nobody changed since the last upload, or a file only
// read, then waits for nothing, as on a local filesystem; one that fsyncs
// a changed file still pays for one upload, which carries every write made
// before it (the crash-prefix property is the engine's, unchanged).
//
// The inodes a write changes are read from its batch, not declared by the
// operations: every key that belongs to an inode names it (docs/FORMAT.md:
// the inode record, directory entries and scan keys by the directory,
// xattrs, orphan and reclaim marks, data chunks by the file), so no
// operation can change an inode behind the tracker's back.
//
// A batch is noted after it is applied and before its operation returns,
// so an fsync covers every operation that returned before it began; one
// running alongside it may or may not be covered, as on any filesystem.
//
// Memory is fixed: inodes share kSlots slots by hash, each holding the
// highest sequence of any inode in it. A shared slot can only make a bound
// too high (a needless upload), never too low (a missed one).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include <rocksdb/write_batch.h>

#include "fs/filesystem.h"

namespace pail::fs {

class ChangeSequences {
 public:
  // Column family ids of the metadata and the file data.
  ChangeSequences(uint32_t meta_family, uint32_t data_family);

  // Notes every inode `batch` writes a key of as changed at `sequence`,
  // a sequence number read after the batch was applied.
  void Note(const rocksdb::WriteBatch& batch, uint64_t sequence);

  // The sequence through which the engine must be in the bucket for every
  // change of `ino` made so far to be (0: none since the process started).
  uint64_t LastChange(Ino ino) const;

 private:
  // 2^16 slots, 512 KiB: with a few thousand inodes changed between two
  // uploads, one unchanged inode finds its slot taken about 3% of the time.
  static constexpr int kSlotBits = 16;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;

  class InodeCollector;
  void Raise(Ino ino, uint64_t sequence);
  static void RaiseTo(std::atomic<uint64_t>* slot, uint64_t sequence);
  static size_t SlotOf(Ino ino);

  const uint32_t meta_family_;
  const uint32_t data_family_;
  std::array<std::atomic<uint64_t>, kSlots> slots_{};
  std::atomic<uint64_t> floor_{0};  // a bound for every inode
};

}  // namespace pail::fs
