// Pieces chunk values (docs/FORMAT.md, "Data keys"): their encoding, what
// the decoder refuses, and laying new pieces over old ones.
#include <gtest/gtest.h>

#include "fs/chunk_value.h"

namespace pail::fs {
namespace {

ChunkExtent Extent(uint64_t segment, uint32_t offset, uint32_t plain_len = 32768) {
  ChunkExtent e;
  e.segment = segment;
  e.offset = offset;
  e.plain_len = plain_len;
  e.stored_len = plain_len;
  e.codec = ChunkCodec::kNone;
  return e;
}

ChunkPiece Piece(uint32_t start, uint32_t length, uint32_t from, const ChunkExtent& e) {
  return ChunkPiece{start, length, from, e};
}

TEST(ChunkPiecesTest, RoundTripsAndReportsItsLength) {
  const ChunkExtent a = Extent(0x1234567890ull, 4096);
  ChunkExtent b = Extent(77, 0, 8192);
  b.codec = ChunkCodec::kZstd;
  b.stored_len = 300;
  const PieceList pieces = {Piece(0, 4096, 0, a), Piece(8192, 8192, 0, b),
                            Piece(20480, 4096, 20480, a)};
  const std::string v = EncodePiecesChunk(pieces);
  EXPECT_EQ(v.size(), 2 + 3 * kPieceBytes);
  EXPECT_EQ(static_cast<uint8_t>(v[0]), kChunkPieces);
  StoredChunk c;
  ASSERT_TRUE(DecodeChunk(v, &c));
  EXPECT_TRUE(c.is_pieces);
  EXPECT_FALSE(c.is_extent);
  EXPECT_FALSE(c.is_inline());
  EXPECT_EQ(c.pieces, pieces);
  EXPECT_EQ(c.plain_len(), 24576u) << "the end of the last piece";
  EXPECT_EQ(ChunkPieces(c), pieces);
  const std::vector<ChunkExtent> extents = DistinctExtents(pieces);
  ASSERT_EQ(extents.size(), 2u) << "an extent two pieces read from counts once";
  EXPECT_EQ(extents[0], a);
  EXPECT_EQ(extents[1], b);

  // A decoded extent value reads as one piece over its plain bytes; an
  // inline value as none.
  StoredChunk e;
  ASSERT_TRUE(DecodeChunk(EncodeExtentChunk(b), &e));
  EXPECT_EQ(ChunkPieces(e), PieceList{Piece(0, 8192, 0, b)});
  StoredChunk i;
  ASSERT_TRUE(DecodeChunk(EncodeInlineChunk("abc"), &i));
  EXPECT_TRUE(ChunkPieces(i).empty());
  EXPECT_TRUE(DistinctExtents(ChunkPieces(i)).empty());
}

TEST(ChunkPiecesTest, DecoderRefusesWhatNoWriterProduces) {
  const ChunkExtent a = Extent(5, 0);
  const ChunkExtent small = Extent(6, 0, 4096);
  auto refused = [](const PieceList& pieces) {
    StoredChunk c;
    return !DecodeChunk(EncodePiecesChunk(pieces), &c);
  };
  EXPECT_TRUE(refused({})) << "no pieces";
  PieceList nine;
  for (uint32_t k = 0; k < 9; ++k) nine.push_back(Piece(k * 2048, 1024, 0, a));
  EXPECT_TRUE(refused(nine)) << "more than kMaxChunkPieces";
  nine.pop_back();
  EXPECT_FALSE(refused(nine)) << "kMaxChunkPieces is allowed";
  EXPECT_TRUE(refused({Piece(4096, 4096, 0, a), Piece(0, 4096, 0, a)})) << "out of order";
  EXPECT_TRUE(refused({Piece(0, 8192, 0, a), Piece(4096, 4096, 0, a)})) << "overlapping";
  EXPECT_TRUE(refused({Piece(30000, 4096, 0, a)})) << "past the chunk";
  EXPECT_TRUE(refused({Piece(0, 0, 0, a)})) << "empty piece";
  EXPECT_TRUE(refused({Piece(0, 4096, 1, small)})) << "past its extent";
  ChunkExtent bad = a;
  bad.stored_len = 10;  // uncompressed, so stored must equal plain
  EXPECT_TRUE(refused({Piece(0, 4096, 0, bad)}));

  std::string v = EncodePiecesChunk({Piece(0, 4096, 0, a)});
  StoredChunk c;
  EXPECT_FALSE(DecodeChunk(v.substr(0, v.size() - 1), &c)) << "truncated";
  EXPECT_FALSE(DecodeChunk(v + "x", &c)) << "trailing byte";
  EXPECT_FALSE(DecodeChunk(std::string(1, static_cast<char>(kChunkPieces)), &c));
  v[1] = 2;  // count says two, one is there
  EXPECT_FALSE(DecodeChunk(v, &c));
}

TEST(ChunkPiecesTest, LayingOverCutsJoinsAndKeepsHoles) {
  const ChunkExtent old = Extent(1, 0);
  const ChunkExtent fresh = Extent(2, 0, 8192);
  // A block in the middle of an extent: the extent is cut around it.
  EXPECT_EQ(LayPieces({Piece(0, 32768, 0, old)}, {Piece(8192, 4096, 0, fresh)}),
            (PieceList{Piece(0, 8192, 0, old), Piece(8192, 4096, 0, fresh),
                       Piece(12288, 20480, 12288, old)}));
  // At both ends, and over everything.
  EXPECT_EQ(LayPieces({Piece(0, 32768, 0, old)},
                      {Piece(0, 4096, 0, fresh), Piece(28672, 4096, 4096, fresh)}),
            (PieceList{Piece(0, 4096, 0, fresh), Piece(4096, 24576, 4096, old),
                       Piece(28672, 4096, 4096, fresh)}));
  EXPECT_EQ(LayPieces({Piece(4096, 4096, 4096, old)}, {Piece(0, 8192, 0, fresh)}),
            (PieceList{Piece(0, 8192, 0, fresh)}));
  // Into holes: between pieces and past the end; the hole before stays.
  const PieceList holes = {Piece(4096, 4096, 4096, old), Piece(16384, 4096, 16384, old)};
  EXPECT_EQ(LayPieces(holes, {Piece(8192, 4096, 0, fresh), Piece(24576, 4096, 4096, fresh)}),
            (PieceList{Piece(4096, 4096, 4096, old), Piece(8192, 4096, 0, fresh),
                       Piece(16384, 4096, 16384, old), Piece(24576, 4096, 4096, fresh)}));
  // A piece spanning a hole and the start of the next piece.
  EXPECT_EQ(LayPieces(holes, {Piece(12288, 8192, 0, fresh)}),
            (PieceList{Piece(4096, 4096, 4096, old), Piece(12288, 8192, 0, fresh)}));
  // Pieces of one extent that continue each other are joined again.
  EXPECT_EQ(LayPieces({Piece(0, 4096, 0, old), Piece(4096, 4096, 0, fresh),
                       Piece(8192, 24576, 8192, old)},
                      {Piece(4096, 4096, 4096, old)}),
            (PieceList{Piece(0, 32768, 0, old)}));
  EXPECT_EQ(LayPieces({}, {Piece(4096, 4096, 0, fresh)}), (PieceList{Piece(4096, 4096, 0, fresh)}));
  EXPECT_EQ(LayPieces(holes, {}), holes);
}

}  // namespace
}  // namespace pail::fs
