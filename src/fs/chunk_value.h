// Values of the data column family (docs/FORMAT.md, "Data keys"): a chunk is
// stored inline, its bytes in the value, as an extent of a data object
// ("segment") in the bucket, or as pieces of extents laid side by side. Also
// the segment usage record and the per-chunk compression the values share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/merge_operator.h>

namespace pail::fs {

// First byte of every chunk value.
inline constexpr uint8_t kChunkInline = 0x01;  // 01 | chunk bytes, trailing zeros removed
inline constexpr uint8_t kChunkExtent = 0x02;  // 02 | extent (kExtentValueBytes - 1 bytes)
inline constexpr uint8_t kChunkPieces = 0x03;  // 03 | count (1) | count x piece
inline constexpr size_t kExtentValueBytes = 1 + 8 + 4 + 4 + 4 + 1;
// A piece: start in the chunk (4 BE), length (4 BE), offset in the extent's
// plain bytes (4 BE), then the extent as in an extent value (21 bytes).
inline constexpr size_t kPieceBytes = 4 + 4 + 4 + (kExtentValueBytes - 1);
// A pieces value has 1 to this many pieces; a write that would need more
// rewrites the chunk as one extent instead.
inline constexpr size_t kMaxChunkPieces = 8;
// Writes into a stored chunk are kept as pieces only when they cover whole
// blocks of this size, the block size block devices write in.
inline constexpr uint32_t kPieceBlockBytes = 4096;

// How an extent's bytes are stored in its segment.
enum class ChunkCodec : uint8_t { kNone = 0, kZstd = 1, kLz4 = 2 };

// Where a chunk's bytes live in a segment.
struct ChunkExtent {
  uint64_t segment = 0;
  uint32_t offset = 0;      // in the segment
  uint32_t stored_len = 0;  // bytes in the segment
  uint32_t plain_len = 0;   // the chunk's bytes without trailing zeros
  ChunkCodec codec = ChunkCodec::kNone;
  // Segments are never rewritten, so equal extents hold equal bytes.
  bool operator==(const ChunkExtent&) const = default;
};

// Bytes [start, start + length) of a chunk are bytes [from, from + length)
// of the extent's plain bytes.
struct ChunkPiece {
  uint32_t start = 0;
  uint32_t length = 0;
  uint32_t from = 0;
  ChunkExtent extent;
  uint32_t end() const { return start + length; }
  bool operator==(const ChunkPiece&) const = default;
};
using PieceList = std::vector<ChunkPiece>;

// A decoded chunk value.
struct StoredChunk {
  bool is_extent = false;
  bool is_pieces = false;
  std::string_view inline_bytes;  // when inline; points into the value
  ChunkExtent extent;             // when is_extent
  PieceList pieces;               // when is_pieces: sorted, not overlapping
  bool is_inline() const { return !is_extent && !is_pieces; }
  // The chunk's length without trailing zeros; for pieces the end of the
  // last piece (the bytes a value accounts for in `used`).
  uint64_t plain_len() const {
    if (is_extent) return extent.plain_len;
    if (is_pieces) return pieces.back().end();
    return inline_bytes.size();
  }
};

// A chunk's plain length: its bytes without trailing zeros (0: a hole).
size_t PlainLength(std::string_view bytes);

std::string EncodeInlineChunk(std::string_view bytes);
std::string EncodeExtentChunk(const ChunkExtent& e);
// `pieces`: 1 to kMaxChunkPieces, sorted, not overlapping, inside the chunk.
std::string EncodePiecesChunk(const PieceList& pieces);
// False for a value no writer produces (unknown tag, wrong length, an
// extent longer than a chunk, pieces out of order, overlapping, too many,
// or reaching past their extent or the chunk).
bool DecodeChunk(std::string_view value, StoredChunk* out);

// The pieces a stored value reads as: one covering an extent's plain bytes,
// the list of a pieces value, none for an inline value.
PieceList ChunkPieces(const StoredChunk& c);
// `under` with `over` laid on top: what `over` covers comes from it, the
// rest from `under` (pieces cut where they meet), holes stay holes. Both
// sorted and not overlapping; so is the result, in which pieces that
// continue each other within one extent are joined.
PieceList LayPieces(const PieceList& under, const PieceList& over);
// The extents the pieces read from, each once (a segment's live bytes
// count an extent once however many pieces point into it).
std::vector<ChunkExtent> DistinctExtents(const PieceList& pieces);

// The compression setting for file data: "zstd-N", "lz4" or "none" (the
// engine's compression option, parsed the same way).
struct DataCompression {
  ChunkCodec codec = ChunkCodec::kZstd;
  int level = 3;
};
DataCompression ParseDataCompression(std::string_view spec);

// Compresses `plain` (at most one chunk) for a segment, appending to `out`.
// Incompressible bytes (random data, media, already compressed files) are
// found by compressing a sample with LZ4 first, which costs a few
// microseconds per chunk, and are stored as they are; so is anything the
// codec does not shrink by at least 1/32. Returns the codec used.
ChunkCodec CompressChunk(const DataCompression& setting, std::string_view plain, std::string* out);
// As CompressChunk, but appends nothing when the bytes are to be stored as
// they are (returns kNone), so a caller holding them in place keeps them
// there instead of copying them.
ChunkCodec TryCompressChunk(const DataCompression& setting, std::string_view plain,
                            std::string* out);
// Writes the extent's `plain_len` bytes to `dst`; false when the stored
// bytes do not decode to exactly that many.
bool DecompressChunk(ChunkCodec codec, std::string_view stored, uint32_t plain_len, char* dst);

// The usage record of a segment: total bytes of the object and the bytes
// of its extents that committed chunk values point at. Stored as two
// little-endian int64 and updated only by merge operands of the same shape,
// which SegmentUsageMerge adds, so no writer ever reads it to change it.
struct SegmentUsage {
  int64_t total_bytes = 0;
  int64_t live_bytes = 0;
};
std::string EncodeSegmentUsage(const SegmentUsage& u);
bool DecodeSegmentUsage(std::string_view in, SegmentUsage* u);
std::shared_ptr<rocksdb::MergeOperator> SegmentUsageMerge();

}  // namespace pail::fs
