#include "fs/segment_format.h"

#include <gtest/gtest.h>

#include <random>

namespace pail::fs {
namespace {

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

std::string TextBytes(size_t n) {
  std::string s;
  while (s.size() < n) s += "the same line of text, over and over; ";
  s.resize(n);
  return s;
}

// The plain bytes an extent of `object` holds.
std::string ExtentBytes(const std::string& object, const ChunkExtent& e) {
  std::string plain(e.plain_len, '\0');
  EXPECT_TRUE(DecompressChunk(e.codec, std::string_view(object).substr(e.offset, e.stored_len),
                              e.plain_len, plain.data()));
  return plain;
}

// Staged chunks, compressible or not, come back as the bytes staged, back
// to back, and the footer names each with its final offset and length.
TEST(SegmentFormatTest, StagedChunksCompressInPlace) {
  const std::vector<std::string> chunks = {RandomBytes(32768, 1), TextBytes(32768),
                                           RandomBytes(100, 2),   TextBytes(5000),
                                           RandomBytes(32768, 3), std::string(40, 'x')};
  for (ChunkCodec codec : {ChunkCodec::kNone, ChunkCodec::kZstd, ChunkCodec::kLz4}) {
    SegmentBuilder builder(7, DataCompression{codec, 3}, 4096);  // too small: grows
    for (size_t i = 0; i < chunks.size(); ++i) builder.Stage(10 + i, i, chunks[i]);
    const std::vector<ChunkExtent> extents = builder.CompressStaged();
    ASSERT_EQ(extents.size(), chunks.size());
    const std::string object = builder.Finish();
    std::vector<SegmentEntry> entries;
    uint64_t need = 0;
    ASSERT_TRUE(ParseSegmentFooter(object, object.size(), &entries, &need));
    ASSERT_EQ(need, 0u);
    ASSERT_EQ(entries.size(), chunks.size());
    uint32_t at = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      const ChunkExtent& e = extents[i];
      EXPECT_EQ(e.segment, 7u);
      EXPECT_EQ(e.offset, at) << "extents are back to back";
      EXPECT_EQ(e.plain_len, chunks[i].size());
      EXPECT_EQ(ExtentBytes(object, e), chunks[i]) << "chunk " << i;
      EXPECT_EQ(entries[i].ino, 10 + i);
      EXPECT_EQ(entries[i].index, i);
      EXPECT_EQ(entries[i].offset, e.offset);
      EXPECT_EQ(entries[i].stored_len, e.stored_len);
      at += e.stored_len;
    }
    if (codec == ChunkCodec::kNone) {
      EXPECT_EQ(extents[1].codec, ChunkCodec::kNone);
    } else {
      EXPECT_EQ(extents[0].codec, ChunkCodec::kNone) << "random bytes are stored as they are";
      EXPECT_EQ(extents[1].codec, codec) << "text compresses";
      EXPECT_LT(extents[1].stored_len, chunks[1].size());
    }
  }
}

// Staging after chunks added the usual way starts where they end; the
// builder is reusable for a second staged batch.
TEST(SegmentFormatTest, StagingFollowsAddedChunks) {
  const DataCompression zstd{ChunkCodec::kZstd, 3};
  SegmentBuilder builder(9, zstd, 1 << 20);
  const std::string a = TextBytes(20000), b = RandomBytes(9000, 4), c = TextBytes(32768);
  const std::string d = RandomBytes(32768, 5);
  const ChunkExtent ea = builder.Add(1, 0, a);
  builder.Stage(1, 1, b);
  builder.Stage(1, 2, c);
  std::vector<ChunkExtent> staged = builder.CompressStaged();
  builder.Stage(2, 0, d);
  std::vector<ChunkExtent> more = builder.CompressStaged();
  ASSERT_EQ(staged.size(), 2u);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(staged[0].offset, ea.offset + ea.stored_len);
  EXPECT_EQ(more[0].offset, staged[1].offset + staged[1].stored_len);
  const std::string object = builder.Finish();
  EXPECT_EQ(ExtentBytes(object, ea), a);
  EXPECT_EQ(ExtentBytes(object, staged[0]), b);
  EXPECT_EQ(ExtentBytes(object, staged[1]), c);
  EXPECT_EQ(ExtentBytes(object, more[0]), d);
  std::vector<SegmentEntry> entries;
  uint64_t need = 0;
  ASSERT_TRUE(ParseSegmentFooter(object, object.size(), &entries, &need));
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[3].offset, more[0].offset);
  // Nothing staged: nothing changes.
  SegmentBuilder empty(10, zstd);
  EXPECT_TRUE(empty.CompressStaged().empty());
  EXPECT_TRUE(empty.empty());
}

// TryCompressChunk leaves the output alone when the bytes stay as they are.
TEST(SegmentFormatTest, TryCompressAppendsOnlyWhenItCompresses) {
  const DataCompression zstd{ChunkCodec::kZstd, 3};
  std::string out = "prefix";
  EXPECT_EQ(TryCompressChunk(zstd, RandomBytes(32768, 6), &out), ChunkCodec::kNone);
  EXPECT_EQ(out, "prefix");
  const std::string text = TextBytes(32768);
  EXPECT_EQ(TryCompressChunk(zstd, text, &out), ChunkCodec::kZstd);
  ASSERT_GT(out.size(), 6u);
  std::string back(text.size(), '\0');
  EXPECT_TRUE(DecompressChunk(ChunkCodec::kZstd, std::string_view(out).substr(6), text.size(),
                              back.data()));
  EXPECT_EQ(back, text);
}

}  // namespace
}  // namespace pail::fs
