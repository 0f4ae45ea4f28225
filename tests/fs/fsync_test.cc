// Fsync uploads only when the inode changed since the last upload
// (fs/change_sequences.h): what it must make durable it does, and an fsync
// of a directory or file nobody changed costs no request.
#include <chrono>

#include "fs/change_sequences.h"
#include "fs/chunk_value.h"
#include "fs/key_codec.h"
#include "fs_test_util.h"
#include "../engine/small_disk.h"
#include "objstore/fault_store.h"
#include "objstore/local_store.h"
#include "objstore/memory_store.h"

namespace pail::fs::testing {
namespace {

class FsyncTest : public FsTest {
 protected:
  // Only Fsync and SyncAll upload.
  FsyncTest() { engine_flush_interval_ = std::chrono::hours(1); }
  FsOptions Options() override {
    FsOptions o = FsTest::Options();
    o.write_back_interval = std::chrono::hours(1);  // no flush but ours
    return o;
  }

  uint64_t Uploads() { return engine_->stats().syncs; }
  // Uploads the fsync of `ino` made.
  uint64_t FsyncUploads(Ino ino) {
    const uint64_t before = Uploads();
    FsStatus s = fs_->Fsync(Root(), ino);
    EXPECT_TRUE(s.ok()) << "fsync errno " << s.error();
    return Uploads() - before;
  }
};

// The tracker alone, on batches it is only shown (the engine gives the
// column families).
TEST_F(FsyncTest, ChangeSequencesNoteEveryInodeWhoseKeysABatchWrites) {
  auto* meta = engine_->column_family(kMetaColumnFamily);
  auto* data = engine_->column_family(kDataColumnFamily);
  ChangeSequences changes(meta->GetID(), data->GetID());
  for (Ino ino : {1, 2, 3, 100, 1000}) EXPECT_EQ(changes.LastChange(ino), 0u);

  rocksdb::WriteBatch batch;
  batch.Put(meta, InodeKey(10), "r");
  batch.Put(meta, DirEntryKey(11, "name"), "e");
  batch.Delete(meta, DirScanKey(12, 5));
  batch.Merge(meta, XattrKey(13, "user.a"), "v");
  batch.Put(meta, XattrTotalsKey(14), "t");
  batch.Put(meta, OrphanKey(15), "");
  batch.Put(meta, ReclaimKey(16), "c");
  batch.Put(data, ChunkKey(17, 3), "chunk");
  batch.DeleteRange(data, ChunkKey(18, 2), ChunkKey(18, 9));
  // Keys of no inode: their ids (the stats shard, a segment) name none.
  batch.Put(meta, StatsKey(20), "s");
  batch.Merge(meta, SegmentKey(21), "u");
  batch.Put(meta, SystemKey(kSystemNextInode), "n");
  changes.Note(batch, 40);
  for (Ino ino : {10, 11, 12, 13, 14, 15, 16, 17, 18}) EXPECT_EQ(changes.LastChange(ino), 40u) << ino;
  for (Ino ino : {9, 19, 20, 21, 22}) EXPECT_EQ(changes.LastChange(ino), 0u) << ino;

  // A later batch raises; an earlier sequence never lowers.
  rocksdb::WriteBatch later;
  later.Put(meta, InodeKey(10), "r2");
  changes.Note(later, 50);
  changes.Note(batch, 45);
  EXPECT_EQ(changes.LastChange(10), 50u);
  EXPECT_EQ(changes.LastChange(11), 45u);

  // A record it cannot read may have changed anything.
  rocksdb::WriteBatch unknown;
  ASSERT_TRUE(unknown.PutEntity(meta, InodeKey(30), {{"c", "v"}}).ok());
  changes.Note(unknown, 60);
  for (Ino ino : {9, 10, 22, 30}) EXPECT_EQ(changes.LastChange(ino), 60u) << ino;
}

TEST_F(FsyncTest, UploadsOnlyForAnInodeChangedSinceTheLastUpload) {
  const Ino d1 = MakeDir(kRootIno, "d1");
  const Ino d2 = MakeDir(kRootIno, "d2");
  const Ino f = MakeFile(d1, "f");
  const Ino g = MakeFile(d2, "g");
  WriteAt(g, 0, "g's data");
  ASSERT_TRUE(fs_->SyncAll().ok());
  for (Ino ino : {kRootIno, d1, d2, f, g}) EXPECT_EQ(FsyncUploads(ino), 0u) << ino;

  // A new file changes its directory, not the others.
  const Ino h = MakeFile(d1, "h");
  for (Ino ino : {kRootIno, d2, f, g}) EXPECT_EQ(FsyncUploads(ino), 0u) << ino;
  EXPECT_EQ(FsyncUploads(d1), 1u);
  EXPECT_EQ(FsyncUploads(h), 0u) << "the directory's upload carried the file";

  // Data in the write-back buffer: the file's fsync commits and uploads it.
  WriteAt(f, 0, "f's data");
  EXPECT_EQ(FsyncUploads(d1), 0u);
  EXPECT_EQ(FsyncUploads(f), 1u);

  // A rename changes both directories and the file moved (its ctime).
  ASSERT_FS_OK(fs_->Rename(Root(), d1, "h", d2, "h2"));
  EXPECT_EQ(FsyncUploads(kRootIno), 0u);
  EXPECT_EQ(FsyncUploads(h), 1u);
  ASSERT_FS_OK(fs_->Rename(Root(), d2, "h2", d1, "h"));
  EXPECT_EQ(FsyncUploads(d2), 1u);

  // Attributes, owners and modes of a file change it alone.
  ASSERT_FS_OK(fs_->SetXattr(Root(), g, "user.k", "v", 0));
  EXPECT_EQ(FsyncUploads(d2), 0u);
  EXPECT_EQ(FsyncUploads(g), 1u);
  Chmod(f, 0600);
  EXPECT_EQ(FsyncUploads(d1), 0u);
  EXPECT_EQ(FsyncUploads(f), 1u);

  // A link changes the file and the directory it appears in.
  ASSERT_FS_OK(fs_->Link(Root(), g, d1, "g2"));
  EXPECT_EQ(FsyncUploads(d2), 0u);
  EXPECT_EQ(FsyncUploads(g), 1u);
  // An unlink, the file's count of links.
  ASSERT_FS_OK(fs_->Unlink(Root(), d1, "g2"));
  EXPECT_EQ(FsyncUploads(g), 1u);
}

TEST_F(FsyncTest, WhatAnFsyncCoveredSurvivesACrash) {
  const Ino d = MakeDir(kRootIno, "d");
  const Ino f = MakeFile(d, "f");
  WriteAt(f, 0, "synced");
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  // f unchanged since: its fsync uploads nothing, and loses nothing.
  EXPECT_EQ(FsyncUploads(f), 0u);
  const Ino e = MakeFile(d, "e");
  WriteAt(e, 0, "entry and data");
  ASSERT_FS_OK(fs_->Fsync(Root(), e));
  ASSERT_FS_OK(fs_->Rename(Root(), d, "f", kRootIno, "moved"));
  ASSERT_FS_OK(fs_->Fsync(Root(), kRootIno));

  // Another process takes the bucket over without this one closing.
  std::unique_ptr<engine::Engine> old_engine = std::move(engine_);
  std::unique_ptr<FileSystem> old_fs = std::move(fs_);
  Mount();
  auto moved = fs_->Lookup(Root(), kRootIno, "moved");
  ASSERT_FS_OK(moved);
  EXPECT_EQ(moved->ino, f);
  EXPECT_EQ(ReadAt(f, 0, 100), "synced");
  EXPECT_ERRNO(fs_->Lookup(Root(), d, "f"), ENOENT);
  auto found = fs_->Lookup(Root(), d, "e");
  ASSERT_FS_OK(found);
  EXPECT_EQ(ReadAt(e, 0, 100), "entry and data");
  old_fs.reset();  // fenced: its final flush may fail
  old_engine.reset();
  ExpectFsckClean();
}

// A few blocks written into a big file's stored chunks and fsynced: the
// engine's log is the only upload (their chunks go inline, no segment is
// put first); the next flush moves them to a segment, and what the fsync
// covered survives a crash before that flush as after it.
TEST_F(FsyncTest, SmallWritesToABigFileSyncWithoutASegmentAndReachOneLater) {
  const Ino f = MakeFile(kRootIno, "big");
  std::string model = Pattern(1 << 20, 1);
  WriteAt(f, 0, model);
  ASSERT_TRUE(fs_->SyncAll().ok());
  auto stored_inline = [&](uint64_t index) {
    std::string raw;
    auto* cf = engine_->column_family(kDataColumnFamily);
    EXPECT_TRUE(engine_->db()->Get(rocksdb::ReadOptions(), cf, ChunkKey(f, index), &raw).ok());
    return !raw.empty() && static_cast<uint8_t>(raw[0]) == kChunkInline;
  };
  EXPECT_FALSE(stored_inline(3));
  auto write = [&](uint64_t off, const std::string& bytes) {
    WriteAt(f, off, bytes);
    model.replace(off, bytes.size(), bytes);
  };
  // A whole block (kept as an overlay until the fsync), unaligned bytes,
  // and a block of a chunk an earlier fsync already put inline.
  const uint64_t segments = fs_->counters().segment_puts;
  write(3 * kChunkSize + kPieceBlockBytes, Pattern(kPieceBlockBytes, 2));
  write(7 * kChunkSize + 100, "a few bytes");
  EXPECT_EQ(FsyncUploads(f), 1u);
  write(3 * kChunkSize, Pattern(kPieceBlockBytes, 3));
  EXPECT_EQ(FsyncUploads(f), 1u);
  // An fsync with nothing new moves nothing either.
  EXPECT_EQ(FsyncUploads(f), 0u);
  EXPECT_EQ(fs_->counters().segment_puts, segments);
  EXPECT_TRUE(stored_inline(3));
  EXPECT_TRUE(stored_inline(7));
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);

  // More chunks than an fsync puts inline take the segment way.
  for (uint64_t index = 10; index < 16; ++index) {
    write(index * kChunkSize, Pattern(kPieceBlockBytes, static_cast<uint32_t>(index)));
  }
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  EXPECT_EQ(fs_->counters().segment_puts, segments + 1);
  EXPECT_FALSE(stored_inline(10));

  // A crash (another process takes the bucket over) keeps every fsynced
  // byte, the chunks still inline included.
  std::unique_ptr<engine::Engine> old_engine = std::move(engine_);
  std::unique_ptr<FileSystem> old_fs = std::move(fs_);
  Mount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  old_fs.reset();  // fenced: its final flush may fail
  old_engine.reset();
  ExpectFsckClean();

  // Here the flush comes: the inline chunks go to a segment.
  write(5 * kChunkSize + 3 * kPieceBlockBytes, Pattern(kPieceBlockBytes, 4));
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  EXPECT_TRUE(stored_inline(5));
  ASSERT_TRUE(fs_->SyncAll().ok());
  for (uint64_t index : {3, 5, 7}) EXPECT_FALSE(stored_inline(index)) << "chunk " << index;
  // A read that moves atime changes the buffered record of a file whose
  // chunks an fsync put inline: the next fsync commits it.
  SetAttrRequest old_atime;
  old_atime.atime = TimeChange::At(timespec{1000, 0});
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, old_atime));
  write(3 * kChunkSize + 2 * kPieceBlockBytes, Pattern(kPieceBlockBytes, 5));
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  EXPECT_TRUE(stored_inline(3));
  EXPECT_EQ(ReadAt(f, 0, 1), model.substr(0, 1));
  EXPECT_EQ(FsyncUploads(f), 1u);
  EXPECT_EQ(FsyncUploads(f), 0u);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  ExpectFsckClean();
}

// The chunks an fsync puts inline need their stored bytes; those the cache
// lacks (here: after a restart) are read from the bucket together, not one
// after another under the file's lock.
class SlowBucketFsyncTest : public FsyncTest {
 protected:
  std::shared_ptr<ObjectStore> MakeStore() override {
    slow_ = std::make_shared<FaultStore>(std::make_shared<MemoryStore>(), FaultOptions{});
    return slow_;
  }
  void SetLatency(std::chrono::milliseconds latency) {
    FaultOptions o;
    o.latency = latency;
    slow_->SetOptions(o);
  }
  std::shared_ptr<FaultStore> slow_;
};

TEST_F(SlowBucketFsyncTest, ColdChunksOfAnInlineFsyncAreReadTogether) {
  const Ino f = MakeFile(kRootIno, "big");
  std::string model = Pattern(1 << 20, 1);
  WriteAt(f, 0, model);
  ASSERT_TRUE(fs_->SyncAll().ok());
  // Each chunk in a segment of its own, so that each needs a read.
  for (uint64_t index : {2, 9, 17, 25}) {
    const std::string bytes = Pattern(kChunkSize, static_cast<uint32_t>(index));
    WriteAt(f, index * kChunkSize, bytes);
    model.replace(index * kChunkSize, kChunkSize, bytes);
    ASSERT_TRUE(fs_->SyncAll().ok());
  }
  Remount();  // empty caches (no read here: its read-ahead would fill them)
  const uint64_t segments = fs_->counters().segment_puts;
  for (uint64_t index : {2, 9, 17, 25}) {
    const std::string block = Pattern(kPieceBlockBytes, static_cast<uint32_t>(100 + index));
    WriteAt(f, index * kChunkSize + kPieceBlockBytes, block);
    model.replace(index * kChunkSize + kPieceBlockBytes, kPieceBlockBytes, block);
  }
  constexpr auto kLatency = std::chrono::milliseconds(150);
  SetLatency(kLatency);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  const auto took = std::chrono::steady_clock::now() - start;
  SetLatency(std::chrono::milliseconds(0));
  EXPECT_EQ(fs_->counters().segment_puts, segments);  // inline
  // Four reads one after another and the log's put would take five
  // latencies; together, two.
  EXPECT_LT(took, 4 * kLatency) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 1 << 20), model);
  ExpectFsckClean();
}

// A file:// bucket whose disk fills (a tmpfs filled by another file): the
// fsync says ENOSPC, which tells the user what to do, not EIO; nothing is
// lost, and once there is room the same fsync succeeds.
class FullBucketDiskTest : public FsyncTest {
 protected:
  std::shared_ptr<ObjectStore> MakeStore() override {
    if (!disk_.error().empty()) return std::make_shared<MemoryStore>();  // the test skips
    auto store = LocalStore::Open(disk_.Sub("bucket"));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::shared_ptr<ObjectStore>(std::move(*store));
  }
  pail::testing::SmallDisk disk_{64 << 20};
};

TEST_F(FullBucketDiskTest, FsyncSaysNoSpaceAndSucceedsOnceThereIsRoom) {
  if (!disk_.error().empty()) GTEST_SKIP() << disk_.error();
  const Ino f = MakeFile(kRootIno, "f");
  const std::string model = Pattern(4 << 20, 3);
  disk_.FillLeaving(0);
  WriteAt(f, 0, model);
  EXPECT_ERRNO(fs_->Fsync(Root(), f), ENOSPC);
  EXPECT_EQ(ReadAt(f, 0, model.size()), model);
  disk_.Empty();
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  Remount();
  EXPECT_EQ(ReadAt(f, 0, model.size()), model);
  ExpectFsckClean();
}

}  // namespace
}  // namespace pail::fs::testing
