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

std::string EncodeExtentChunk(const ChunkExtent& e) {
  std::string v;
  v.reserve(kExtentValueBytes);
  v.push_back(static_cast<char>(kChunkExtent));
  PutBigEndian64(&v, e.segment);
  PutBigEndian32(&v, e.offset);
  PutBigEndian32(&v, e.stored_len);
  PutBigEndian32(&v, e.plain_len);
  v.push_back(static_cast<char>(e.codec));
  return v;
}

bool DecodeChunk(std::string_view value, StoredChunk* out) {
  if (value.empty()) return false;
  const uint8_t tag = static_cast<uint8_t>(value[0]);
  if (tag == kChunkInline) {
    if (value.size() - 1 > kChunkSize) return false;
    out->is_extent = false;
    out->inline_bytes = value.substr(1);
    return true;
  }
  if (tag != kChunkExtent || value.size() != kExtentValueBytes) return false;
  const char* p = value.data() + 1;
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
  out->is_extent = true;
  out->extent = e;
  return true;
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
