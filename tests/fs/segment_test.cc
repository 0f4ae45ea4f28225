// File data in segment objects: what goes inline and what to segments,
// compression, reads after a restart, partial rewrites of uploaded chunks,
// and the collector returning deleted and overwritten data to the bucket
// (docs/FORMAT.md, "Segments").
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "engine/data_objects.h"
#include "fs/chunk_value.h"
#include "fs/key_codec.h"
#include "fs/lock_table.h"
#include "objstore/counting_store.h"
#include "objstore/local_store.h"
#include "fs_test_util.h"
#include "util/failpoint.h"

namespace pail::fs::testing {
namespace {

std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "the quick brown fox jumps over the lazy dog " + std::to_string(s.size()) + "\n";
  s.resize(n);
  return s;
}

class SegmentTest : public FsTest {
 protected:
  FsOptions Options() override {
    FsOptions o = FsTest::Options();
    o.compression = "zstd-3";
    o.segment_bytes = 4ull << 20;
    o.dead_segment_grace = std::chrono::milliseconds(0);
    o.collect_interval = std::chrono::milliseconds(50);
    // Only the tests' own syncs upload: a timed flush between two writes
    // would split what WriteInterleaved puts in one segment.
    o.write_back_interval = std::chrono::hours(1);
    return o;
  }

  // Data objects in the bucket: count and bytes (plaintext sizes).
  std::pair<size_t, uint64_t> DataObjects() {
    auto listed = ListAll(*store_, engine::kDataPrefix);
    EXPECT_TRUE(listed.ok());
    uint64_t bytes = 0;
    for (const auto& o : *listed) bytes += o.size;
    return {listed->size(), bytes};
  }

  // A file "f" holding `data` in the bucket alone: synced, then the
  // filesystem opened again, so no chunk of it is in memory.
  Ino StoredFile(const std::string& data) {
    Ino f = MakeFile(kRootIno, "f");
    WriteAt(f, 0, data);
    Fsync(f);
    Remount();
    return f;
  }

  bool WaitFor(const std::function<bool()>& done) {
    for (int i = 0; i < 400; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return done();
  }

  void Fsync(Ino ino) { ASSERT_FS_OK(fs_->Fsync(Root(), ino)); }
  // Two files written 256 KiB at a time in turn, synced after each pair:
  // every segment holds both, so deleting one leaves them half dead.
  void WriteInterleaved(Ino a, const std::string& da, Ino b, const std::string& db) {
    for (size_t off = 0; off < da.size(); off += 256 << 10) {
      WriteAt(a, off, std::string_view(da).substr(off, 256 << 10));
      WriteAt(b, off, std::string_view(db).substr(off, 256 << 10));
      ASSERT_TRUE(fs_->SyncAll().ok());
    }
  }

  // The engine's value of chunk `index` of `ino`, decoded (false: none).
  bool StoredValue(Ino ino, uint64_t index, StoredChunk* out, std::string* raw) {
    auto* cf = engine_->column_family(kDataColumnFamily);
    if (!engine_->db()->Get(rocksdb::ReadOptions(), cf, ChunkKey(ino, index), raw).ok()) {
      return false;
    }
    EXPECT_TRUE(DecodeChunk(*raw, out)) << "chunk " << index;
    return true;
  }

  // How many of the first `chunks` chunks of `ino` are stored as pieces.
  size_t PiecesChunks(Ino ino, uint64_t chunks) {
    size_t n = 0;
    for (uint64_t i = 0; i < chunks; ++i) {
      StoredChunk c;
      std::string raw;
      if (StoredValue(ino, i, &c, &raw) && c.is_pieces) n++;
    }
    return n;
  }
};

TEST_F(SegmentTest, BigFilesGoToSegmentsSmallFilesStayInline) {
  Ino small = MakeFile(kRootIno, "small");
  Ino big = MakeFile(kRootIno, "big");
  const std::string small_data = Pattern(3000, 1);
  const std::string big_data = Pattern(1 << 20, 2);
  WriteAt(small, 0, small_data);
  Fsync(small);
  EXPECT_EQ(DataObjects().first, 0u) << "a small file made a data object";
  WriteAt(big, 0, big_data);
  Fsync(big);
  auto [objects, bytes] = DataObjects();
  EXPECT_EQ(objects, 1u);
  EXPECT_GE(bytes, big_data.size());  // random data is stored as it is
  EXPECT_LT(bytes, big_data.size() + 64 * 1024);
  EXPECT_EQ(fs_->counters().segment_live_bytes, big_data.size());
  EXPECT_EQ(fs_->counters().segment_bytes, bytes);
  Remount();  // an empty cache: everything comes from the bucket
  EXPECT_EQ(ReadAt(small, 0, 1 << 20), small_data);
  EXPECT_EQ(ReadAt(big, 0, 2 << 20), big_data);
  EXPECT_EQ(ReadAt(big, 12345, 100000), big_data.substr(12345, 100000));
  ExpectFsckClean();
}

TEST_F(SegmentTest, CompressibleDataCompressesRandomDataDoesNot) {
  Ino text = MakeFile(kRootIno, "text");
  WriteAt(text, 0, Text(4 << 20));
  Fsync(text);
  const uint64_t text_bytes = fs_->counters().segment_put_bytes;
  EXPECT_LT(text_bytes, 1u << 20) << "4 MiB of text stored in " << text_bytes << " bytes";
  Ino noise = MakeFile(kRootIno, "noise");
  WriteAt(noise, 0, Pattern(4 << 20, 3));
  Fsync(noise);
  const uint64_t noise_bytes = fs_->counters().segment_put_bytes - text_bytes;
  EXPECT_GE(noise_bytes, 4u << 20);
  EXPECT_LT(noise_bytes, (4u << 20) + (64u << 10));
  Remount();
  EXPECT_EQ(ReadAt(text, 0, 4 << 20), Text(4 << 20));
  EXPECT_EQ(ReadAt(noise, 0, 4 << 20), Pattern(4 << 20, 3));
}

TEST_F(SegmentTest, BackgroundUploadFreesMemoryBeforeTheCommit) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string data = Pattern(12 << 20, 4);
  for (size_t off = 0; off < data.size(); off += 1 << 20) {
    WriteAt(f, off, std::string_view(data).substr(off, 1 << 20));
  }
  // Full chunks leave memory once a segment's worth waits.
  EXPECT_TRUE(WaitFor([&] { return fs_->counters().segment_puts >= 2; }));
  EXPECT_EQ(ReadAt(f, 0, 12 << 20), data);  // uploaded, not committed: still readable
  Fsync(f);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 12 << 20), data);
  ExpectFsckClean();
}

// Writes that start inside a chunk's bytes and run past them (appended
// without a zero fill), writes past the end (the gap reads as zeros),
// trailing zeros, and upload passes staging the file 1 MiB per hold of its
// lock while the writes go on: every byte is what a plain model holds,
// before and after a restart.
TEST_F(SegmentTest, OverlappingAndExtendingWritesDuringUploadsKeepEveryByte) {
  Ino f = MakeFile(kRootIno, "f");
  constexpr size_t kFileBytes = 8 << 20;
  std::string model;
  std::mt19937_64 rng(99);
  for (int i = 0; i < 1500; ++i) {
    const size_t len = 1 + rng() % (rng() % 4 == 0 ? 200000 : 6000);
    size_t off = rng() % kFileBytes;
    if (i % 3 == 0 && !model.empty()) {
      // Start inside the bytes written so far, end past them.
      off = model.size() - std::min<size_t>(model.size(), 1 + rng() % 40000);
    }
    std::string bytes(len, '\0');
    for (auto& c : bytes) c = static_cast<char>('a' + rng() % 26);
    if (rng() % 4 == 0) std::fill(bytes.begin() + bytes.size() / 2, bytes.end(), '\0');
    WriteAt(f, off, bytes);
    if (model.size() < off + len) model.resize(off + len, '\0');
    model.replace(off, len, bytes);
  }
  EXPECT_GE(fs_->counters().segment_puts, 1u);
  EXPECT_EQ(ReadAt(f, 0, model.size() + 1), model);
  Fsync(f);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, model.size() + 1), model);
  ExpectFsckClean();
}

TEST_F(SegmentTest, PartialWritesIntoStoredAndUploadedChunks) {
  std::string data = Pattern(1 << 20, 5);
  Ino f = StoredFile(data);
  // Into a chunk that lives in a segment, across a chunk boundary.
  const std::string patch = "patched bytes";
  WriteAt(f, kChunkSize - 5, patch);
  data.replace(kChunkSize - 5, patch.size(), patch);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  Fsync(f);
  // Rewriting a whole chunk needs none of its old bytes.
  const std::string whole = Pattern(kChunkSize, 6);
  WriteAt(f, 3 * kChunkSize, whole);
  data.replace(3 * kChunkSize, kChunkSize, whole);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  ExpectFsckClean();
}

TEST_F(SegmentTest, TruncateAndPunchHoleInSegmentData) {
  Ino f = MakeFile(kRootIno, "f");
  std::string data = Pattern(1 << 20, 7);
  WriteAt(f, 0, data);
  Fsync(f);
  ASSERT_FS_OK(fs_->PunchHole(Root(), f, 100000, 300000));
  std::fill(data.begin() + 100000, data.begin() + 400000, '\0');
  SetAttrRequest req;
  req.size = 700001;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, req));
  data.resize(700001);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  EXPECT_EQ(Stat(f).size, 700001u);
  ExpectFsckClean();
}

TEST_F(SegmentTest, DeletedAndOverwrittenDataLeavesTheBucket) {
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  WriteAt(a, 0, Pattern(3 << 20, 8));
  WriteAt(b, 0, Pattern(3 << 20, 9));
  ASSERT_TRUE(fs_->SyncAll().ok());
  const uint64_t before = DataObjects().second;
  EXPECT_GE(before, 6u << 20);
  // Overwrite a whole, delete b: the old bytes of both must go.
  const std::string fresh = Pattern(3 << 20, 10);
  WriteAt(a, 0, fresh);
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "b"));
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_TRUE(WaitFor([&] { return DataObjects().second <= (3u << 20) + (256u << 10); }))
      << "bucket holds " << DataObjects().second << " data bytes for 3 MiB of live data";
  Remount();
  EXPECT_EQ(ReadAt(a, 0, 4 << 20), fresh);
  ExpectFsckClean();
}

// NBD's TRIM and fallocate's PUNCH_HOLE, and a shrinking truncate, return
// their space too: the segments they empty are deleted or rewritten.
TEST_F(SegmentTest, PunchedAndTruncatedDataLeavesTheBucket) {
  Ino f = MakeFile(kRootIno, "f");
  std::string data = Pattern(8 << 20, 13);
  WriteAt(f, 0, data);
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_GE(DataObjects().second, 8u << 20);
  ASSERT_FS_OK(fs_->PunchHole(Root(), f, 1 << 20, 5 << 20));
  std::fill(data.begin() + (1 << 20), data.begin() + (6 << 20), '\0');
  SetAttrRequest req;
  req.size = 7 << 20;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, req));
  data.resize(7 << 20);
  ASSERT_TRUE(fs_->SyncAll().ok());
  // 2 MiB still stored: [0, 1 MiB) and [6, 7 MiB).
  EXPECT_TRUE(WaitFor([&] { return DataObjects().second <= (2u << 20) + (256u << 10); }))
      << "bucket holds " << DataObjects().second << " data bytes for 2 MiB of live data";
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 8 << 20), data);
  ExpectFsckClean();
}

TEST_F(SegmentTest, HalfDeadSegmentsAreRewritten) {
  // Two files interleaved in the same segments; deleting one leaves them
  // half dead, and the collector moves the survivor's extents out.
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  std::string da = Pattern(2 << 20, 11), db = Pattern(2 << 20, 12);
  WriteInterleaved(a, da, b, db);
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "b"));
  EXPECT_TRUE(WaitFor([&] { return fs_->counters().segments_relocated >= 1; }));
  EXPECT_TRUE(WaitFor([&] { return DataObjects().second <= (2u << 20) + (256u << 10); }))
      << "bucket holds " << DataObjects().second << " data bytes for 2 MiB of live data";
  Remount();
  EXPECT_EQ(ReadAt(a, 0, 4 << 20), da);
  ExpectFsckClean();
}

// Segments just uploaded are read back from memory (segment_memory.h); the
// collector's deletions take their bodies out, and what it moves elsewhere
// is read from its new segment, never from a stale body.
TEST_F(SegmentTest, MemoryHoldsOnlySegmentsStillInTheBucket) {
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  std::string da = Pattern(2 << 20, 51), db = Pattern(2 << 20, 52);
  WriteInterleaved(a, da, b, db);
  engine::DataObjects& objects = engine_->data_objects();
  auto ids = [&] {
    std::set<uint64_t> out;
    auto listed = ListAll(*store_, engine::kDataPrefix);
    EXPECT_TRUE(listed.ok());
    for (const auto& o : *listed) out.insert(*engine::DataObjects::ParseKey(o.key));
    return out;
  };
  const std::set<uint64_t> before = ids();
  size_t kept = 0;
  for (uint64_t id : before) kept += objects.memory().Contains(id);
  EXPECT_GE(kept, 1u) << "no upload was kept in memory";
  const uint64_t hits = objects.memory().hits();
  EXPECT_TRUE(ReadAt(a, 0, 2 << 20) == da);
  EXPECT_GT(objects.memory().hits(), hits) << "a read of data just written missed memory";
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "b"));
  EXPECT_TRUE(WaitFor([&] { return fs_->counters().segments_relocated >= 1; }));
  EXPECT_TRUE(WaitFor([&] { return DataObjects().second <= (2u << 20) + (256u << 10); }));
  const std::set<uint64_t> after = ids();
  for (uint64_t id : before) {
    if (after.count(id) == 0) {
      EXPECT_FALSE(objects.memory().Contains(id)) << id;
    }
  }
  // Relocated (old) data is not kept: it would only displace new data.
  for (uint64_t id : after) {
    if (before.count(id) == 0) {
      EXPECT_FALSE(objects.memory().Contains(id)) << id;
    }
  }
  EXPECT_TRUE(ReadAt(a, 0, 4 << 20) == da);
  EXPECT_LE(objects.memory().charged(), objects.memory().capacity());
  ExpectFsckClean();
}

// Whole 4 KiB blocks written into stored chunks are kept as pieces: only the
// blocks are uploaded (not their 32 KiB chunks), and every byte reads back
// before the commit, after it and after a restart.
TEST_F(SegmentTest, BlockWritesIntoStoredChunksUploadOnlyTheirBlocks) {
  constexpr uint32_t kBlock = kPieceBlockBytes;
  std::string model = Pattern(1 << 20, 30);
  Ino f = StoredFile(model);
  const uint64_t put_before = fs_->counters().segment_put_bytes;
  size_t written = 0;
  auto write = [&](uint64_t off, size_t len, uint32_t seed) {
    const std::string bytes = Pattern(len, seed);
    WriteAt(f, off, bytes);
    model.replace(off, len, bytes);
    written += len;
  };
  for (uint64_t c = 0; c < 16; ++c) write(c * kChunkSize + (c % 8) * kBlock, kBlock, 100 + c);
  write(2 * kChunkSize + 7 * kBlock, kBlock, 200);      // a second block of chunk 2
  write(3 * kChunkSize + kBlock, 2 * kBlock, 201);      // two blocks, one already written
  write(5 * kChunkSize + 5 * kBlock, kBlock, 202);      // the same block again
  write(17 * kChunkSize - kBlock, 2 * kBlock, 203);     // across a chunk boundary
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model) << "blocks in memory over stored chunks";
  Fsync(f);
  const uint64_t put = fs_->counters().segment_put_bytes - put_before;
  EXPECT_LT(put, written + (64u << 10)) << "uploaded " << put << " bytes for " << written;
  EXPECT_GE(PiecesChunks(f, 32), 16u);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model) << "committed pieces";
  EXPECT_EQ(Stat(f).size, 1u << 20);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model) << "after a restart";
  EXPECT_EQ(ReadAt(f, 3 * kChunkSize + 100, 9000), model.substr(3 * kChunkSize + 100, 9000));
  ExpectFsckClean();
}

// The ways out of pieces: an unaligned write into a pieces chunk (stored or
// buffered) rewrites it as one extent, a whole-chunk write replaces it; a
// chunk may be cut into as many as kMaxChunkPieces pieces, holes included.
TEST_F(SegmentTest, PiecesFallBackToWholeChunksAndKeepHoles) {
  constexpr uint32_t kBlock = kPieceBlockBytes;
  Ino f = MakeFile(kRootIno, "f");
  std::string model = Pattern(1 << 20, 31);
  // Chunk 8 holds only its first 10000 bytes; chunk 9 is a hole.
  std::fill(model.begin() + 8 * kChunkSize + 10000, model.begin() + 10 * kChunkSize, '\0');
  WriteAt(f, 0, model);
  Fsync(f);
  auto write = [&](uint64_t off, size_t len, uint32_t seed) {
    const std::string bytes = Pattern(len, seed);
    WriteAt(f, off, bytes);
    model.replace(off, len, bytes);
  };
  for (uint32_t k = 1; k < 8; k += 2) write(k * kBlock, kBlock, 300 + k);  // chunk 0: 8 pieces
  write(8 * kChunkSize + 5 * kBlock, kBlock, 310);  // past chunk 8's bytes: a hole between
  write(9 * kChunkSize + kBlock, kBlock, 311);      // into the hole: plain bytes as before
  write(2 * kChunkSize + 2 * kBlock, kBlock, 312);
  write(3 * kChunkSize, kBlock, 313);
  Fsync(f);
  StoredChunk c;
  std::string raw;
  ASSERT_TRUE(StoredValue(f, 0, &c, &raw));
  ASSERT_TRUE(c.is_pieces);
  EXPECT_EQ(c.pieces.size(), kMaxChunkPieces);
  ASSERT_TRUE(StoredValue(f, 8, &c, &raw));
  ASSERT_TRUE(c.is_pieces);
  EXPECT_EQ(c.pieces.size(), 2u);
  EXPECT_EQ(c.plain_len(), 6u * kBlock);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  // Unaligned into a stored pieces chunk; into a buffered overlay; a whole
  // chunk over a buffered overlay.
  write(200, 5000, 320);
  write(2 * kChunkSize + 5 * kBlock, kBlock, 321);
  write(2 * kChunkSize + 7, 10, 322);
  write(3 * kChunkSize + 4 * kBlock, kBlock, 323);
  write(3 * kChunkSize, kChunkSize, 324);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  // A flush (an fsync of this few chunks would put them inline).
  ASSERT_TRUE(fs_->SyncAll().ok());
  for (uint64_t index : {0, 2, 3}) {
    ASSERT_TRUE(StoredValue(f, index, &c, &raw));
    EXPECT_TRUE(c.is_extent) << "chunk " << index << " is one extent again";
  }
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  // Punching and truncating through pieces.
  ASSERT_FS_OK(fs_->PunchHole(Root(), f, 8 * kChunkSize + 100, 5 * kBlock));
  std::fill(model.begin() + 8 * kChunkSize + 100, model.begin() + 8 * kChunkSize + 100 + 5 * kBlock,
            '\0');
  SetAttrRequest req;
  req.size = 9 * kChunkSize + kBlock + 10;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, req));
  model.resize(*req.size);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  ExpectFsckClean();
}

// Pieces point into old and new segments at once; when the old ones are
// mostly dead the collector moves the extents pieces read from, switching
// every piece of a value that reads from a moved extent.
TEST_F(SegmentTest, CollectorRelocatesExtentsThatPiecesReadFrom) {
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  std::string da = Pattern(2 << 20, 32), db = Pattern(2 << 20, 33);
  WriteInterleaved(a, da, b, db);
  // Two blocks of every other chunk of `a`: three pieces reading from the
  // old extent (twice) and the new blocks.
  for (uint64_t c = 0; c < da.size() / kChunkSize; c += 2) {
    const std::string bytes = Pattern(kPieceBlockBytes, 400 + static_cast<uint32_t>(c));
    const uint64_t off = c * kChunkSize + 3 * kPieceBlockBytes;
    WriteAt(a, off, bytes);
    da.replace(off, bytes.size(), bytes);
  }
  ASSERT_TRUE(fs_->SyncAll().ok());
  const size_t pieces = PiecesChunks(a, da.size() / kChunkSize);
  EXPECT_EQ(pieces, da.size() / kChunkSize / 2);
  const uint64_t relocated = fs_->counters().segments_relocated;
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "b"));
  EXPECT_TRUE(WaitFor([&] { return fs_->counters().segments_relocated >= relocated + 1; }));
  EXPECT_TRUE(WaitFor([&] { return DataObjects().second <= (2u << 20) + (512u << 10); }))
      << "bucket holds " << DataObjects().second << " data bytes for 2 MiB of live data";
  EXPECT_EQ(PiecesChunks(a, da.size() / kChunkSize), pieces) << "moved, not rewritten";
  EXPECT_EQ(ReadAt(a, 0, 4 << 20), da);
  Remount();
  EXPECT_EQ(ReadAt(a, 0, 4 << 20), da);
  FsckReport report = RunFsck();
  EXPECT_TRUE(report.clean());
  for (const auto& p : report.problems) ADD_FAILURE() << "fsck: " << p;
  EXPECT_EQ(report.pieces_chunks, pieces);
}

// Format 4 only adds pieces values: a format 3 bucket opens as it is and is
// restamped, so an older pailfs refuses it from then on; format 2 is still
// refused.
TEST_F(SegmentTest, FormatThreeIsUpgradedInPlace) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string data = Pattern(1 << 20, 34);
  WriteAt(f, 0, data);
  Fsync(f);
  auto* meta = engine_->column_family(kMetaColumnFamily);
  auto stamp = [&] {
    std::string v;
    EXPECT_TRUE(engine_->db()->Get(rocksdb::ReadOptions(), meta, SystemKey(kSystemFormat), &v).ok());
    return v.size() == 8 ? GetBigEndian64(v.data()) : 0;
  };
  auto restamp = [&](uint64_t version) {
    if (fs_) {
      ASSERT_TRUE(fs_->Close().ok());
      fs_.reset();
    }
    std::string v;
    PutBigEndian64(&v, version);
    rocksdb::WriteBatch batch;
    batch.Put(meta, SystemKey(kSystemFormat), v);
    ASSERT_TRUE(engine_->Write(&batch).ok());
  };
  EXPECT_EQ(stamp(), kFormatVersion);
  restamp(kPreviousFormatVersion);
  auto opened = FileSystem::Open(*engine_, Options());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  fs_ = std::move(opened).value();
  EXPECT_EQ(stamp(), 4u);
  EXPECT_EQ(ReadAt(f, 0, 2 << 20), data);
  restamp(2);
  EXPECT_FALSE(FileSystem::Open(*engine_, Options()).ok());
  restamp(kFormatVersion);
  opened = FileSystem::Open(*engine_, Options());
  ASSERT_TRUE(opened.ok());
  fs_ = std::move(opened).value();
  ExpectFsckClean();
}

// Commits only on fsync, so what the test uploads stays uncommitted.
class SlowCommitSegmentTest : public SegmentTest {
 protected:
  FsOptions Options() override {
    FsOptions o = SegmentTest::Options();
    o.write_back_interval = std::chrono::milliseconds(60000);
    return o;
  }
};

TEST_F(SlowCommitSegmentTest, UploadWithoutCommitLeavesNoPointerAndIsCollected) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string old_data = Pattern(1 << 20, 13);
  WriteAt(f, 0, old_data);
  Fsync(f);
  // The upload lands, the commit never does (as a crash between the two).
  // No periodic flush (this fixture) may hit the one-shot failpoint first.
  ArmFailpoint("data/after_upload", FailAction::kError);
  WriteAt(f, 0, Pattern(1 << 20, 14));
  EXPECT_FALSE(fs_->Fsync(Root(), f).ok());
  DisarmAllFailpoints();
  // At least the one upload no commit names; a background flush may have
  // tried again meanwhile, landing (and perhaps committing) another.
  EXPECT_GE(DataObjects().first, 2u);
  // A restart (the unflushed write is lost with the process) finds the
  // object no record names and deletes it.
  fs_.reset();  // destruction flushes; that is allowed to succeed or not
  engine_.reset();
  Mount();
  EXPECT_EQ(ReadAt(f, 0, 2 << 20).size(), 1u << 20);
  EXPECT_TRUE(WaitFor([&] { return DataObjects().first == 1; }));
  ExpectFsckClean();
}

TEST_F(SlowCommitSegmentTest, NewWriterNeverUsesAFencedWritersUncommittedSegments) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string committed = Pattern(2 << 20, 15);
  WriteAt(f, 0, committed);
  Fsync(f);
  // The old writer uploads more without committing it...
  WriteAt(f, 0, Pattern(6 << 20, 16));
  EXPECT_TRUE(WaitFor([&] { return fs_->counters().segment_puts >= 2; }));
  // ...and a new writer opens the bucket meanwhile.
  std::unique_ptr<engine::Engine> old_engine = std::move(engine_);
  std::unique_ptr<FileSystem> old_fs = std::move(fs_);
  Mount();
  EXPECT_EQ(ReadAt(f, 0, 8 << 20), committed);
  // The old writer's leftovers go; what the new one uses stays.
  EXPECT_TRUE(WaitFor([&] { return DataObjects().first == 1; }));
  EXPECT_FALSE(old_fs->Fsync(Root(), f).ok());  // fenced
  old_fs.reset();
  old_engine.reset();
  EXPECT_EQ(ReadAt(f, 0, 8 << 20), committed);
  ExpectFsckClean();
}

// A bucket in a local directory: an upload is not copied into the disk
// cache (that would only double the disk writes); reads still fill it.
class LocalBucketSegmentTest : public SegmentTest {
 protected:
  std::shared_ptr<ObjectStore> MakeStore() override {
    bucket_dir_ = std::filesystem::temp_directory_path() /
                  ("pailfs-local-bucket-" + std::to_string(std::random_device()()));
    auto store = LocalStore::Open(bucket_dir_.string());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    counting_ = std::make_shared<CountingStore>(std::shared_ptr<ObjectStore>(std::move(store).value()));
    return counting_;
  }
  void TearDown() override {
    SegmentTest::TearDown();
    std::error_code ec;
    std::filesystem::remove_all(bucket_dir_, ec);
  }

  // Files in the current mount's disk cache that hold a data object.
  size_t CachedDataObjects() {
    size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(cache_dirs_.back())) {
      if (e.path().filename().string().rfind("data_", 0) == 0) n++;
    }
    return n;
  }

  std::filesystem::path bucket_dir_;
  std::shared_ptr<CountingStore> counting_;
};

TEST_F(LocalBucketSegmentTest, UploadsAreNotCopiedIntoTheDiskCache) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string data = Pattern(6 << 20, 17);
  WriteAt(f, 0, data);
  Fsync(f);
  EXPECT_GE(DataObjects().first, 1u);
  EXPECT_EQ(CachedDataObjects(), 0u) << "an upload was copied into the cache";
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 8 << 20), data);  // sequential: read-ahead runs too
  EXPECT_EQ(ReadAt(f, 3 << 20, 100000), data.substr(3 << 20, 100000));
  EXPECT_EQ(ReadAt(f, (6 << 20) - 10, 100), data.substr((6 << 20) - 10));
  EXPECT_GE(CachedDataObjects(), 1u) << "reads left the cache empty";
  ExpectFsckClean();
}

// The collector reads the extents it moves past the disk cache (their
// segment is deleted next; a copy would only push out data read again),
// one request per run of extents.
TEST_F(LocalBucketSegmentTest, CollectorReadsPastTheDiskCacheInRuns) {
  Ino a = MakeFile(kRootIno, "a");
  Ino b = MakeFile(kRootIno, "b");
  std::string da = Pattern(2 << 20, 61), db = Pattern(2 << 20, 62);
  WriteInterleaved(a, da, b, db);
  Remount();  // empty cache and segment memory: what moves comes from the bucket
  const size_t segments = DataObjects().first;
  const RequestCounts before = counting_->Snapshot();
  const uint64_t cache_fills = engine_->stats().disk_cache_misses;
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "b"));
  EXPECT_TRUE(WaitFor([&] { return fs_->counters().segments_relocated >= segments; }));
  EXPECT_TRUE(WaitFor([&] { return DataObjects().second <= (2u << 20) + (256u << 10); }));
  const RequestCounts reads = counting_->Snapshot() - before;
  EXPECT_EQ(engine_->stats().disk_cache_misses, cache_fills)
      << "the collector's reads went through the disk cache";
  // Each segment: its footer, then a's 256 KiB in one run.
  const uint64_t gets = reads.requests[static_cast<int>(OpKind::kGet)] +
                        reads.requests[static_cast<int>(OpKind::kGetRange)];
  EXPECT_GE(gets, segments);
  EXPECT_LE(gets, 2 * segments) << segments << " segments moved";
  EXPECT_EQ(ReadAt(a, 0, 4 << 20), da);
  ExpectFsckClean();
}

// Small writes into chunks whose bytes live in segments, from many threads
// at once, while the uploader and the flusher work: the bytes a write reads
// ahead without the lock are used only when the chunk still has them.
class SmallWriteSegmentTest : public SegmentTest {
 protected:
  FsOptions Options() override {
    FsOptions o = SegmentTest::Options();
    o.write_back_bytes = 1ull << 20;
    o.write_back_file_bytes = 128ull << 10;
    o.segment_bytes = 256ull << 10;
    o.write_back_interval = std::chrono::milliseconds(20);
    return o;
  }
};

TEST_F(SmallWriteSegmentTest, ConcurrentSmallWritesKeepEveryByte) {
  constexpr size_t kFileBytes = 2 << 20;
  constexpr size_t kBlock = 4096;
  constexpr int kThreads = 8;
  std::string expected = Pattern(kFileBytes, 20);
  Ino f = StoredFile(expected);
  // Thread t owns the blocks b with b % kThreads == t (so the end result
  // is known), offset by 100 bytes so writes straddle chunk boundaries;
  // blocks of one chunk belong to different threads.
  const size_t blocks = kFileBytes / kBlock - 1;
  std::vector<std::string> last(blocks);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 300; ++i) {
        size_t b = (rng() % (blocks / kThreads)) * kThreads + t;
        std::string data = Pattern(kBlock, static_cast<uint32_t>(1000 * t + i));
        auto w = fs_->Write(Root(), f, b * kBlock + 100, data);
        ASSERT_TRUE(w.ok()) << "errno " << w.error();
        last[b] = std::move(data);
        if (i % 50 == 49) ASSERT_FS_OK(fs_->Fsync(Root(), f));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (size_t b = 0; b < blocks; ++b) {
    if (!last[b].empty()) expected.replace(b * kBlock + 100, kBlock, last[b]);
  }
  EXPECT_EQ(ReadAt(f, 0, kFileBytes), expected);
  Fsync(f);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, kFileBytes), expected);
  ExpectFsckClean();
}

// Random block writes (kept as pieces, uploaded early, brought back),
// unaligned and whole-chunk writes, punched holes and commits from several
// threads at once against a model.
TEST_F(SmallWriteSegmentTest, MixedBlockAndByteWritesMatchAModel) {
  constexpr size_t kFileBytes = 2 << 20;
  constexpr int kThreads = 4;
  std::string model = Pattern(kFileBytes, 40);
  Ino f = StoredFile(model);
  // Thread t owns chunks c with c % kThreads == t, so the result is known.
  const size_t chunks = kFileBytes / kChunkSize;
  std::mutex model_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(50 + t);
      for (int i = 0; i < 400; ++i) {
        const uint64_t c = (rng() % (chunks / kThreads)) * kThreads + t;
        const uint64_t base = c * kChunkSize;
        const int kind = static_cast<int>(rng() % 20);
        if (kind == 0) {
          const uint64_t from = base + rng() % kChunkSize;
          const uint64_t len = 1 + rng() % (base + kChunkSize - from);
          ASSERT_FS_OK(fs_->PunchHole(Root(), f, from, len));
          std::lock_guard<std::mutex> l(model_mu);
          std::fill(model.begin() + from, model.begin() + from + len, '\0');
          continue;
        }
        if (kind == 1) {
          ASSERT_FS_OK(fs_->Fsync(Root(), f));
          continue;
        }
        uint64_t off, len;
        if (kind < 4) {  // unaligned, inside the chunk
          off = base + rng() % kChunkSize;
          len = 1 + rng() % (base + kChunkSize - off);
        } else if (kind == 4) {
          off = base;
          len = kChunkSize;
        } else {
          const uint64_t k = rng() % 8;
          off = base + k * kPieceBlockBytes;
          len = (1 + rng() % (8 - k)) * kPieceBlockBytes;
        }
        std::string data = Pattern(len, static_cast<uint32_t>(1000 * t + i));
        if (rng() % 5 == 0) std::fill(data.begin(), data.end(), '\0');
        auto w = fs_->Write(Root(), f, off, data);
        ASSERT_TRUE(w.ok()) << "errno " << w.error();
        std::lock_guard<std::mutex> l(model_mu);
        model.replace(off, len, data);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ReadAt(f, 0, kFileBytes), model);
  EXPECT_GE(fs_->counters().segment_puts, 2u);
  Fsync(f);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, kFileBytes), model);
  ExpectFsckClean();
}

// A store whose data-object reads wait while the gate is closed, and whose
// data-object writes wait while the put gate is (each at most ten seconds,
// so a broken test cannot hang). With failing puts, a data-object write
// fails after the gate and a pause, as in an outage that times requests out.
class GatedStore : public MemoryStore {
 public:
  Result<std::string> Get(const std::string& key) override {
    Hold(key, reads_);
    return MemoryStore::Get(key);
  }
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    Hold(key, reads_);
    return MemoryStore::GetRange(key, offset, length);
  }
  Result<std::string> Put(const std::string& key, std::string_view body) override {
    Hold(key, puts_);
    if (puts_failing_ && key.rfind(engine::kDataPrefix, 0) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return Status::IOError("data object put failed (test outage)");
    }
    return MemoryStore::Put(key, body);
  }
  void SetOpen(bool open) { Set(reads_, open); }
  void SetPutsOpen(bool open) { Set(puts_, open); }
  void SetPutsFailing(bool failing) { puts_failing_ = failing; }
  // Reads waiting at the gate now; data-object writes that reached it.
  int waiting() { return Count(reads_.waiting); }
  int puts_started() { return Count(puts_.arrived); }

 private:
  struct Gate {
    bool open = true;
    int waiting = 0;
    int arrived = 0;
  };
  void Hold(const std::string& key, Gate& gate) {
    if (key.rfind(engine::kDataPrefix, 0) != 0) return;
    std::unique_lock<std::mutex> l(gate_mu_);
    gate.arrived++;
    gate.waiting++;
    gate_cv_.wait_for(l, std::chrono::seconds(10), [&] { return gate.open; });
    gate.waiting--;
  }
  void Set(Gate& gate, bool open) {
    std::lock_guard<std::mutex> l(gate_mu_);
    gate.open = open;
    gate_cv_.notify_all();
  }
  int Count(const int& n) {
    std::lock_guard<std::mutex> l(gate_mu_);
    return n;
  }

  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  Gate reads_, puts_;
  std::atomic<bool> puts_failing_{false};
};

class GatedSegmentTest : public SegmentTest {
 protected:
  std::shared_ptr<ObjectStore> MakeStore() override {
    gated_ = std::make_shared<GatedStore>();
    return gated_;
  }
  void TearDown() override {
    gated_->SetOpen(true);
    gated_->SetPutsOpen(true);
    gated_->SetPutsFailing(false);
    SegmentTest::TearDown();
  }
  // Waits up to 2 s for a segment read to reach the closed gate; returns
  // how many are held there.
  int AwaitHeldRead() {
    for (int i = 0; i < 400 && gated_->waiting() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return gated_->waiting();
  }
  std::shared_ptr<GatedStore> gated_;
};

TEST_F(GatedSegmentTest, SmallWriteReadsItsChunkWithoutBlockingTheFile) {
  std::string data = Pattern(1 << 20, 21);
  Ino f = StoredFile(data);  // an empty cache: chunk bytes come from the bucket
  const std::string a = Pattern(4096, 22), b = Pattern(4096, 23), c = Pattern(4096, 24);
  WriteAt(f, 5 * kChunkSize + 100, a);  // chunk 5 is in memory now
  data.replace(5 * kChunkSize + 100, a.size(), a);
  gated_->SetOpen(false);
  // This write must read chunk 10 from its segment, and waits there...
  auto slow = std::async(std::launch::async, [&] { WriteAt(f, 10 * kChunkSize + 100, b); });
  ASSERT_EQ(AwaitHeldRead(), 1);
  // ...without holding the file: a write into a buffered chunk goes on.
  auto fast = std::async(std::launch::async, [&] { WriteAt(f, 5 * kChunkSize + 200, c); });
  EXPECT_EQ(fast.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  gated_->SetOpen(true);
  fast.get();
  slow.get();
  data.replace(10 * kChunkSize + 100, b.size(), b);
  data.replace(5 * kChunkSize + 200, c.size(), c);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  Fsync(f);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  ExpectFsckClean();
}

// A write of whole blocks into a stored chunk reads nothing of it: it
// finishes while every segment read is held back.
TEST_F(GatedSegmentTest, BlockWriteIntoAStoredChunkReadsNothing) {
  std::string data = Pattern(1 << 20, 25);
  Ino f = StoredFile(data);
  gated_->SetOpen(false);
  const std::string a = Pattern(2 * kPieceBlockBytes, 26);
  auto write = std::async(std::launch::async, [&] { WriteAt(f, 10 * kChunkSize + 8192, a); });
  EXPECT_EQ(write.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(gated_->waiting(), 0);
  gated_->SetOpen(true);
  write.get();
  data.replace(10 * kChunkSize + 8192, a.size(), a);
  Fsync(f);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  ExpectFsckClean();
}

class GatedQuotaSegmentTest : public GatedSegmentTest {
 protected:
  FsOptions Options() override {
    FsOptions o = GatedSegmentTest::Options();
    o.max_size_bytes = (6ull << 20) + 4096;
    return o;
  }
};

// A write reads an overlay chunk whole while an upload of its blocks is on
// its way, then is refused for room. The upload, landing afterwards, must
// not be taken for the whole chunk: its extent holds the blocks alone.
TEST_F(GatedQuotaSegmentTest, RefusedWriteStalesTheUploadOfTheChunkItRead) {
  std::string data = Pattern(1 << 20, 31);
  Ino f = StoredFile(data);
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);  // in the cache now: writes read it there
  const std::string blocks = Pattern(2 * kPieceBlockBytes, 32);
  WriteAt(f, 31 * kChunkSize + 8192, blocks);  // an overlay of the last chunk
  data.replace(31 * kChunkSize + 8192, blocks.size(), blocks);
  // Another file's writes fill a segment's worth: an upload takes the
  // overlay's blocks along and is held at the bucket.
  gated_->SetPutsOpen(false);
  const int puts_before = gated_->puts_started();
  Ino g = MakeFile(kRootIno, "g");
  WriteAt(g, 0, Pattern(5 << 20, 33));
  ASSERT_TRUE(WaitFor([&] { return gated_->puts_started() > puts_before; }));
  // An unaligned byte needs the chunk's bytes; the 8 KiB past the end find
  // 4 KiB of room.
  EXPECT_ERRNO(fs_->Write(Root(), f, 31 * kChunkSize + 100, std::string(kChunkSize + 8192, 'w')),
               ENOSPC);
  gated_->SetPutsOpen(true);
  Fsync(g);  // the held upload has landed
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  Fsync(f);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), data);
  ExpectFsckClean();
}

// The bucket stops taking data objects while a writer waits for room in a
// full write-back buffer. The writer keeps asking for uploads, and the
// uploader keeps putting the failed chunks back on the way; the flush the
// writer waits for must still fail (and the writer with it) rather than
// wait for the uploads to settle, which they never do. (A server stopping
// then waited for that writer for ever.)
TEST_F(GatedSegmentTest, WriterWaitingForRoomFailsWhenUploadsFail) {
  Ino f = MakeFile(kRootIno, "f");
  gated_->SetPutsFailing(true);
  gated_->SetPutsOpen(false);
  const std::string block = Pattern(1 << 20, 27);
  auto writer = std::async(std::launch::async, [&]() -> int {
    for (uint64_t off = 0; off < (64ull << 20); off += block.size()) {
      auto w = fs_->Write(Root(), f, off, block);
      if (!w.ok()) return w.error();
    }
    return 0;
  });
  ASSERT_TRUE(WaitFor([&] { return gated_->puts_started() > 0; }));
  // The buffer (16 MiB) fills while the first uploads are held.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  gated_->SetPutsOpen(true);
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the writer still waits for room";
  EXPECT_EQ(writer.get(), EIO);
  // Once the bucket is back (uploads still failing in flight may fail the
  // first syncs), the file system syncs and checks clean.
  gated_->SetPutsFailing(false);
  ASSERT_TRUE(WaitFor([&] { return fs_->SyncAll().ok(); }));
  ExpectFsckClean();
}

// The gated store with no background flush in the way: what a test put in
// memory stays there.
class GatedHeldTest : public GatedSegmentTest {
 protected:
  FsOptions Options() override {
    FsOptions o = GatedSegmentTest::Options();
    o.write_back_interval = std::chrono::seconds(600);
    return o;
  }
};

// TryRead and TryWrite never wait on the bucket: with every segment read
// held back they answer at once, doing what memory and block overlays
// allow and refusing, with nothing changed, what needs a segment's bytes.
TEST_F(GatedHeldTest, TryCallsNeverWaitOnTheBucket) {
  std::string data = Pattern(1 << 20, 31);
  Ino f = StoredFile(data);
  const std::string a = Pattern(4096, 32);
  WriteAt(f, 5 * kChunkSize + 100, a);  // chunk 5 is in memory now
  data.replace(5 * kChunkSize + 100, a.size(), a);
  EXPECT_TRUE(ReadAt(f, 20 * kChunkSize, 4096) == data.substr(20 * kChunkSize, 4096));  // cached
  gated_->SetOpen(false);
  const auto start = std::chrono::steady_clock::now();
  // In the local cache: read, and changed in part.
  auto cached = fs_->TryRead(Root(), f, 20 * kChunkSize + 8, 1000, 0);
  ASSERT_FS_OK(cached);
  EXPECT_TRUE(cached->data == data.substr(20 * kChunkSize + 8, 1000));
  const std::string e = Pattern(300, 38);
  ASSERT_FS_OK(fs_->TryWrite(Root(), f, 20 * kChunkSize + 50, e, 0));
  data.replace(20 * kChunkSize + 50, e.size(), e);
  auto in_memory = fs_->TryRead(Root(), f, 5 * kChunkSize, kChunkSize, 0);
  ASSERT_FS_OK(in_memory);
  EXPECT_TRUE(in_memory->data == data.substr(5 * kChunkSize, kChunkSize));
  const std::string b = Pattern(1000, 33);
  auto written = fs_->TryWrite(Root(), f, 5 * kChunkSize + 50, b, 0);
  ASSERT_FS_OK(written);
  EXPECT_EQ(written->written, b.size());
  data.replace(5 * kChunkSize + 50, b.size(), b);
  // Whole blocks over a stored chunk become an overlay: nothing is read.
  const std::string c = Pattern(kPieceBlockBytes, 34);
  ASSERT_FS_OK(fs_->TryWrite(Root(), f, 12 * kChunkSize + kPieceBlockBytes, c, 0));
  data.replace(12 * kChunkSize + kPieceBlockBytes, c.size(), c);
  // Bytes only a segment holds: refused.
  EXPECT_ERRNO(fs_->TryRead(Root(), f, 10 * kChunkSize, 4096, 0), EWOULDBLOCK);
  EXPECT_ERRNO(fs_->TryRead(Root(), f, 12 * kChunkSize, kChunkSize, 0), EWOULDBLOCK);
  EXPECT_ERRNO(fs_->TryWrite(Root(), f, 10 * kChunkSize + 100, Pattern(100, 35), 0), EWOULDBLOCK);
  // Part of the overlay's chunk: its base would have to be read.
  EXPECT_ERRNO(fs_->TryWrite(Root(), f, 12 * kChunkSize + 100, Pattern(100, 36), 0), EWOULDBLOCK);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(gated_->waiting(), 0);
  EXPECT_EQ(Stat(f).size, data.size());
  gated_->SetOpen(true);
  EXPECT_TRUE(ReadAt(f, 0, 1 << 20) == data);  // the refused writes left no trace
  // What a refused call asked for, done the waiting way.
  const std::string d = Pattern(100, 37);
  WriteAt(f, 10 * kChunkSize + 100, d);
  data.replace(10 * kChunkSize + 100, d.size(), d);
  Fsync(f);
  Remount();
  EXPECT_TRUE(ReadAt(f, 0, 1 << 20) == data);
  ExpectFsckClean();
}

// A segment this process uploaded is in memory: TryRead serves it with the
// bucket closed, and no bucket read happens.
TEST_F(GatedHeldTest, TryReadServesJustUploadedSegmentsFromMemory) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string data = Pattern(1 << 20, 46);
  WriteAt(f, 0, data);
  Fsync(f);
  gated_->SetOpen(false);
  const uint64_t hits = engine_->data_objects().memory().hits();
  const uint64_t misses = engine_->stats().disk_cache_misses;
  auto r = fs_->TryRead(Root(), f, 10 * kChunkSize + 7, 3 * kChunkSize, 0);
  ASSERT_FS_OK(r);
  EXPECT_TRUE(r->data == data.substr(10 * kChunkSize + 7, 3 * kChunkSize));
  EXPECT_GT(engine_->data_objects().memory().hits(), hits);
  EXPECT_EQ(gated_->waiting(), 0);
  EXPECT_EQ(engine_->stats().disk_cache_misses, misses);
  gated_->SetOpen(true);
  // After a restart memory is empty: the same read must go to the bucket.
  Remount();
  gated_->SetOpen(false);
  EXPECT_ERRNO(fs_->TryRead(Root(), f, 10 * kChunkSize + 7, 3 * kChunkSize, 0), EWOULDBLOCK);
  gated_->SetOpen(true);
}

// They give up, too, on a file whose lock another call holds while it
// waits on the bucket (here a write reading an overlay's base).
TEST_F(GatedHeldTest, TryCallsGiveUpOnAFileLockedAcrossABucketRead) {
  std::string data = Pattern(1 << 20, 41);
  Ino f = StoredFile(data);
  const std::string a = Pattern(kPieceBlockBytes, 42), b = Pattern(4096, 43);
  WriteAt(f, 12 * kChunkSize + kPieceBlockBytes, a);  // an overlay, nothing read
  data.replace(12 * kChunkSize + kPieceBlockBytes, a.size(), a);
  WriteAt(f, 5 * kChunkSize + 100, b);  // chunk 5 in memory
  data.replace(5 * kChunkSize + 100, b.size(), b);
  gated_->SetOpen(false);
  const std::string c = Pattern(100, 44);
  auto slow = std::async(std::launch::async, [&] { WriteAt(f, 12 * kChunkSize + 100, c); });
  ASSERT_EQ(AwaitHeldRead(), 1);
  // Chunk 5 needs no bucket, but the file is held.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_ERRNO(fs_->TryWrite(Root(), f, 5 * kChunkSize + 100, Pattern(100, 45), 0), EWOULDBLOCK);
  EXPECT_ERRNO(fs_->TryRead(Root(), f, 5 * kChunkSize, 100, 0), EWOULDBLOCK);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  gated_->SetOpen(true);
  slow.get();
  data.replace(12 * kChunkSize + 100, c.size(), c);
  // The lock free again, the same calls go through.
  auto r = fs_->TryRead(Root(), f, 5 * kChunkSize, kChunkSize, 0);
  ASSERT_FS_OK(r);
  EXPECT_TRUE(r->data == data.substr(5 * kChunkSize, kChunkSize));
  EXPECT_TRUE(ReadAt(f, 0, 1 << 20) == data);
  Fsync(f);
  Remount();
  EXPECT_TRUE(ReadAt(f, 0, 1 << 20) == data);
  ExpectFsckClean();
}

// A directory has no write-back state, so its attributes are read without
// its inode's lock: a getattr of a directory whose lock slot a file holds
// across a bucket read answers at once (it used to wait for the read).
TEST_F(GatedHeldTest, DirectoryGetattrDoesNotWaitForItsLockSlot) {
  Ino f = MakeFile(kRootIno, "f");
  std::string data = Pattern(1 << 20, 47);
  WriteAt(f, 0, data);
  Fsync(f);
  const auto slots = std::make_unique<LockTable>();
  Ino dir = 0;
  for (int i = 0; i < 20 * static_cast<int>(LockTable::kSlots) && dir == 0; ++i) {
    Ino d = MakeDir(kRootIno, "d" + std::to_string(i));
    if (slots->SlotOf(d) == slots->SlotOf(f)) dir = d;
  }
  ASSERT_NE(dir, 0u);
  Remount();
  const std::string a = Pattern(kPieceBlockBytes, 48);
  WriteAt(f, 12 * kChunkSize + kPieceBlockBytes, a);  // an overlay, nothing read
  data.replace(12 * kChunkSize + kPieceBlockBytes, a.size(), a);
  gated_->SetOpen(false);
  // A write into the overlay reads its base, holding the file's slot.
  const std::string c = Pattern(100, 49);
  auto slow = std::async(std::launch::async, [&] { WriteAt(f, 12 * kChunkSize + 100, c); });
  ASSERT_EQ(AwaitHeldRead(), 1);
  auto attr = std::async(std::launch::async, [&] { return fs_->GetAttr(Root(), dir); });
  EXPECT_EQ(attr.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  gated_->SetOpen(true);
  FsResult<Attr> got = attr.get();
  ASSERT_FS_OK(got);
  EXPECT_TRUE(got->is_dir());
  EXPECT_EQ(got->ino, dir);
  slow.get();
  data.replace(12 * kChunkSize + 100, c.size(), c);
  EXPECT_TRUE(ReadAt(f, 0, 1 << 20) == data);
  EXPECT_EQ(Stat(f).size, data.size());
  ExpectFsckClean();
}

// The uploader builds the next segment while one is in flight: with the
// first upload held back, a second segment's worth written after it goes
// out beside it rather than after it.
TEST_F(GatedHeldTest, UploaderStartsTheNextSegmentWhileOneIsInFlight) {
  Ino f = MakeFile(kRootIno, "f");
  const size_t segment = Options().segment_bytes;
  ASSERT_LE(2 * segment, Options().write_back_bytes);  // no writer waits for memory
  std::string data = Pattern(2 * segment, 47);
  gated_->SetPutsOpen(false);
  WriteAt(f, 0, std::string_view(data).substr(0, segment));
  ASSERT_TRUE(WaitFor([&] { return gated_->puts_started() == 1; }));
  WriteAt(f, segment, std::string_view(data).substr(segment));
  // Well within the gate's ten seconds, after which the first would finish.
  for (int i = 0; i < 200 && gated_->puts_started() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(gated_->puts_started(), 2) << "the second segment waited for the first";
  gated_->SetPutsOpen(true);
  Fsync(f);
  EXPECT_TRUE(ReadAt(f, 0, data.size()) == data);
  Remount();
  EXPECT_TRUE(ReadAt(f, 0, data.size()) == data);
  ExpectFsckClean();
}

}  // namespace
}  // namespace pail::fs::testing
