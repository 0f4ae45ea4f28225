#include "fs/chunk_value.h"

#include <lz4.h>
#include <zstd.h>

#include <charconv>
#include <memory>
#include <cstring>

#include "fs/key_codec.h"

namespace pail::fs {

namespace {
// The sample the incompressibility test compresses, and what it must save.
constexpr size_t kSampleBytes = 4096;
constexpr size_t kSampleMinSaving = kSampleBytes / 16;

void PutI64(char* p, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(u >> (8 * i));
}
int64_t GetI64(const char* p) {
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | static_cast<uint8_t>(p[i]);
  return static_cast<int64_t>(u);
}

class SegmentUsageMergeOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    SegmentUsage sum, add;
    if (existing != nullptr && !DecodeSegmentUsage(existing->ToStringView(), &sum)) return false;
    if (!DecodeSegmentUsage(value.ToStringView(), &add)) return false;
    sum.total_bytes += add.total_bytes;
    sum.live_bytes += add.live_bytes;
    *new_value = EncodeSegmentUsage(sum);
    return true;
  }
  const char* Name() const override { return "pailfs.SegmentUsage"; }
};

}  // namespace

size_t PlainLength(std::string_view bytes) {
  size_t len = bytes.size();
  while (len > 0 && bytes[len - 1] == 0) --len;
  return len;
}

std::string EncodeInlineChunk(std::string_view bytes) {
  std::string v;
  v.reserve(1 + bytes.size());
  v.push_back(static_cast<char>(kChunkInline));
  v.append(bytes);
  return v;
}

namespace {

void PutExtent(std::string* v, const ChunkExtent& e) {
  PutBigEndian64(v, e.segment);
  PutBigEndian32(v, e.offset);
  PutBigEndian32(v, e.stored_len);
  PutBigEndian32(v, e.plain_len);
  v->push_back(static_cast<char>(e.codec));
}

// Reads the kExtentValueBytes - 1 bytes at `p`; false for an extent no
// writer produces.
bool GetExtent(const char* p, ChunkExtent* out) {
  ChunkExtent e;
  e.segment = GetBigEndian64(p);
  e.offset = GetBigEndian32(p + 8);
  e.stored_len = GetBigEndian32(p + 12);
  e.plain_len = GetBigEndian32(p + 16);
  const uint8_t codec = static_cast<uint8_t>(p[20]);
  if (codec > static_cast<uint8_t>(ChunkCodec::kLz4)) return false;
  e.codec = static_cast<ChunkCodec>(codec);
  if (e.plain_len == 0 || e.plain_len > kChunkSize || e.stored_len == 0) return false;
  if (e.codec == ChunkCodec::kNone && e.stored_len != e.plain_len) return false;
  *out = e;
  return true;
}

bool SameExtent(const ChunkExtent& a, const ChunkExtent& b) {
  return a.segment == b.segment && a.offset == b.offset;
}
}  // namespace

std::string EncodeExtentChunk(const ChunkExtent& e) {
  std::string v;
  v.reserve(kExtentValueBytes);
  v.push_back(static_cast<char>(kChunkExtent));
  PutExtent(&v, e);
  return v;
}

std::string EncodePiecesChunk(const PieceList& pieces) {
  std::string v;
  v.reserve(2 + pieces.size() * kPieceBytes);
  v.push_back(static_cast<char>(kChunkPieces));
  v.push_back(static_cast<char>(pieces.size()));
  for (const ChunkPiece& p : pieces) {
    PutBigEndian32(&v, p.start);
    PutBigEndian32(&v, p.length);
    PutBigEndian32(&v, p.from);
    PutExtent(&v, p.extent);
  }
  return v;
}

bool DecodeChunk(std::string_view value, StoredChunk* out) {
  if (value.empty()) return false;
  const uint8_t tag = static_cast<uint8_t>(value[0]);
  out->is_extent = out->is_pieces = false;
  out->pieces.clear();
  out->inline_bytes = {};
  if (tag == kChunkInline) {
    if (value.size() - 1 > kChunkSize) return false;
    out->inline_bytes = value.substr(1);
    return true;
  }
  if (tag == kChunkPieces) {
    if (value.size() < 2) return false;
    const size_t count = static_cast<uint8_t>(value[1]);
    if (count == 0 || count > kMaxChunkPieces || value.size() != 2 + count * kPieceBytes) {
      return false;
    }
    PieceList pieces(count);
    uint64_t prev_end = 0;
    for (size_t i = 0; i < count; ++i) {
      const char* p = value.data() + 2 + i * kPieceBytes;
      ChunkPiece& piece = pieces[i];
      piece.start = GetBigEndian32(p);
      piece.length = GetBigEndian32(p + 4);
      piece.from = GetBigEndian32(p + 8);
      if (!GetExtent(p + 12, &piece.extent)) return false;
      const uint64_t end = uint64_t{piece.start} + piece.length;
      if (piece.length == 0 || piece.start < prev_end || end > kChunkSize ||
          uint64_t{piece.from} + piece.length > piece.extent.plain_len) {
        return false;
      }
      prev_end = end;
    }
    out->is_pieces = true;
    out->pieces = std::move(pieces);
    return true;
  }
  if (tag != kChunkExtent || value.size() != kExtentValueBytes) return false;
  if (!GetExtent(value.data() + 1, &out->extent)) return false;
  out->is_extent = true;
  return true;
}

PieceList ChunkPieces(const StoredChunk& c) {
  if (c.is_pieces) return c.pieces;
  if (c.is_extent) return {ChunkPiece{0, c.extent.plain_len, 0, c.extent}};
  return {};
}

PieceList LayPieces(const PieceList& under, const PieceList& over) {
  PieceList out;
  auto add = [&out](const ChunkPiece& p) {
    if (p.length == 0) return;
    if (!out.empty()) {
      ChunkPiece& last = out.back();
      if (last.end() == p.start && SameExtent(last.extent, p.extent) &&
          last.from + last.length == p.from) {
        last.length += p.length;
        return;
      }
    }
    out.push_back(p);
  };
  size_t o = 0;
  for (const ChunkPiece& u : under) {
    // The parts of `u` no piece of `over` covers; every piece of `over`
    // that ends before a part goes out first, so the output stays sorted.
    uint32_t at = u.start;
    while (at < u.end()) {
      while (o < over.size() && over[o].end() <= at) {
        add(over[o]);
        ++o;
      }
      if (o < over.size() && over[o].start <= at) {
        at = std::min(u.end(), over[o].end());  // covered up to there
        continue;
      }
      const uint32_t stop = o < over.size() ? std::min(u.end(), over[o].start) : u.end();
      add(ChunkPiece{at, stop - at, u.from + (at - u.start), u.extent});
      at = stop;
    }
  }
  for (; o < over.size(); ++o) add(over[o]);
  return out;
}

std::vector<ChunkExtent> DistinctExtents(const PieceList& pieces) {
  std::vector<ChunkExtent> out;
  for (const ChunkPiece& p : pieces) {
    bool seen = false;
    for (const ChunkExtent& e : out) seen = seen || SameExtent(e, p.extent);
    if (!seen) out.push_back(p.extent);
  }
  return out;
}

DataCompression ParseDataCompression(std::string_view spec) {
  if (spec == "none") return {ChunkCodec::kNone, 0};
  if (spec == "lz4") return {ChunkCodec::kLz4, 0};
  DataCompression d{ChunkCodec::kZstd, 3};
  if (spec.size() > 5 && spec.substr(0, 5) == "zstd-") {
    int level = 0;
    auto [ptr, ec] = std::from_chars(spec.data() + 5, spec.data() + spec.size(), level);
    if (ec == std::errc() && level >= 1 && level <= 22) d.level = level;
  }
  return d;
}

ChunkCodec TryCompressChunk(const DataCompression& setting, std::string_view plain,
                            std::string* out) {
  if (setting.codec == ChunkCodec::kNone || plain.size() < 64) return ChunkCodec::kNone;
  {
    char sample_out[LZ4_COMPRESSBOUND(kSampleBytes)];
    const int sample = static_cast<int>(std::min(plain.size(), kSampleBytes));
    const int n = LZ4_compress_default(plain.data(), sample_out, sample, sizeof(sample_out));
    if (n <= 0 || sample - n < static_cast<int>(kSampleMinSaving * sample / kSampleBytes)) {
      return ChunkCodec::kNone;
    }
  }
  const size_t start = out->size();
  size_t n = 0;
  if (setting.codec == ChunkCodec::kZstd) {
    out->resize(start + ZSTD_compressBound(plain.size()));
    // One context per thread: ZSTD_compress would make and free one per
    // chunk, which costs more than compressing a chunk of text.
    thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(),
                                                                       ZSTD_freeCCtx);
    n = cctx == nullptr
            ? ZSTD_compress(out->data() + start, out->size() - start, plain.data(), plain.size(),
                            setting.level)
            : ZSTD_compressCCtx(cctx.get(), out->data() + start, out->size() - start,
                                plain.data(), plain.size(), setting.level);
    if (ZSTD_isError(n)) n = 0;
  } else {
    out->resize(start + LZ4_compressBound(static_cast<int>(plain.size())));
    const int r = LZ4_compress_default(plain.data(), out->data() + start,
                                       static_cast<int>(plain.size()),
                                       static_cast<int>(out->size() - start));
    n = r > 0 ? static_cast<size_t>(r) : 0;
  }
  if (n == 0 || n > plain.size() - plain.size() / 32) {
    out->resize(start);
    return ChunkCodec::kNone;
  }
  out->resize(start + n);
  return setting.codec;
}

ChunkCodec CompressChunk(const DataCompression& setting, std::string_view plain, std::string* out) {
  const ChunkCodec codec = TryCompressChunk(setting, plain, out);
  if (codec == ChunkCodec::kNone) out->append(plain);
  return codec;
}

bool DecompressChunk(ChunkCodec codec, std::string_view stored, uint32_t plain_len, char* dst) {
  switch (codec) {
    case ChunkCodec::kNone:
      if (stored.size() != plain_len) return false;
      std::memcpy(dst, stored.data(), plain_len);
      return true;
    case ChunkCodec::kZstd: {
      size_t n = ZSTD_decompress(dst, plain_len, stored.data(), stored.size());
      return !ZSTD_isError(n) && n == plain_len;
    }
    case ChunkCodec::kLz4: {
      int n = LZ4_decompress_safe(stored.data(), dst, static_cast<int>(stored.size()),
                                  static_cast<int>(plain_len));
      return n >= 0 && static_cast<uint32_t>(n) == plain_len;
    }
  }
  return false;
}

std::string EncodeSegmentUsage(const SegmentUsage& u) {
  std::string v(16, '\0');
  PutI64(v.data(), u.total_bytes);
  PutI64(v.data() + 8, u.live_bytes);
  return v;
}

bool DecodeSegmentUsage(std::string_view in, SegmentUsage* u) {
  if (in.size() != 16) return false;
  u->total_bytes = GetI64(in.data());
  u->live_bytes = GetI64(in.data() + 8);
  return true;
}

std::shared_ptr<rocksdb::MergeOperator> SegmentUsageMerge() {
  static const auto op = std::make_shared<SegmentUsageMergeOperator>();
  return op;
}

}  // namespace pail::fs
