// The layout of a segment, the bucket object that holds file data
// (docs/FORMAT.md, "Segments"):
//
//   extent*           the stored bytes of each chunk, back to back
//   entry*            kSegmentEntryBytes each: ino (8 BE), chunk index
//                     (8 BE), offset (4 BE), stored length (4 BE)
//   entry count       4 BE
//   magic             kSegmentMagic, 8 bytes
//
// The footer names the chunk each extent was written for. It is what lets
// the reclaimer move the live extents of a mostly dead segment without
// scanning every chunk value, and what fsck checks values against: an
// extent is live exactly when its chunk's value still points at it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fs/chunk_value.h"
#include "fs/filesystem.h"

namespace pail::fs {

inline constexpr char kSegmentMagic[] = "PAILSEG1";
inline constexpr size_t kSegmentEntryBytes = 24;
inline constexpr size_t kSegmentTrailerBytes = 4 + 8;

struct SegmentEntry {
  Ino ino = 0;
  uint64_t index = 0;
  uint32_t offset = 0;
  uint32_t stored_len = 0;
};

class SegmentBuilder {
 public:
  // `expected_bytes`: about how much will be added, so the body is
  // allocated once rather than regrown (and copied) step by step.
  SegmentBuilder(uint64_t segment, DataCompression compression, size_t expected_bytes = 0);

  // Appends a chunk's bytes (trailing zeros removed, not empty).
  ChunkExtent Add(Ino ino, uint64_t index, std::string_view plain);
  // Appends an extent already in stored form (moved from another segment).
  ChunkExtent AddStored(Ino ino, uint64_t index, const ChunkExtent& from, std::string_view stored);
  // Staging, for chunks copied out while their file's lock is held: Stage
  // copies a chunk's plain bytes (trailing zeros removed, not empty) to the
  // end of the body as they are, one memcpy and no allocation per chunk;
  // CompressStaged, later and without any lock, compresses the staged
  // chunks in place, each moved down to just after the one before, and
  // returns their extents in staging order. Bytes stored as they are
  // (incompressible data, compression off) never move: each chunk is
  // copied once from the write-back buffer into the object. Add and
  // AddStored must not be called between the two.
  void Stage(Ino ino, uint64_t index, std::string_view plain);
  std::vector<ChunkExtent> CompressStaged();
  uint64_t segment() const { return segment_; }
  size_t bytes() const { return body_.size(); }
  bool empty() const { return entries_.empty(); }
  // The whole object: extents, then the footer.
  std::string Finish();

 private:
  uint64_t segment_;
  DataCompression compression_;
  std::string body_;
  std::vector<SegmentEntry> entries_;
  size_t staged_ = 0;  // entries at the end of entries_ not yet compressed
};

// Reads the footer from `tail`, the last bytes of a segment of `size`
// bytes. When `tail` is too short, sets *need to the tail length required
// and returns true with no entries; false when the bytes are not a footer.
bool ParseSegmentFooter(std::string_view tail, uint64_t size, std::vector<SegmentEntry>* entries,
                        uint64_t* need);

}  // namespace pail::fs
