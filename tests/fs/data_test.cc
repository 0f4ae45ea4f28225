// File data: read/write, holes, truncate, huge offsets, write-back, quota,
// unlink while open and background reclaim.
#include <chrono>
#include <thread>
#include <vector>
#include <utility>

#include "fs_test_util.h"
#include "util/mutex.h"

namespace pail::fs::testing {
namespace {

using DataTest = FsTest;

// Waits for the background reclaimer to free `files` deleted files.
bool WaitForReclaim(FileSystem& fs, uint64_t files) {
  for (int i = 0; i < 200; ++i) {
    if (fs.counters().reclaimed_files >= files) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST_F(DataTest, WriteThenReadBack) {
  Ino f = MakeFile(kRootIno, "f");
  Attr before = Stat(f);
  std::string data = Pattern(100000, 1);
  WriteAt(f, 0, data);
  Attr after = Stat(f);
  EXPECT_EQ(after.size, data.size());
  EXPECT_TRUE(before.mtime < after.mtime);
  EXPECT_TRUE(after.mtime == after.ctime);
  EXPECT_EQ(ReadAt(f, 0, 200000), data);
  EXPECT_EQ(ReadAt(f, 70000, 10), data.substr(70000, 10));
  auto past = fs_->Read(Root(), f, 100000, 10);
  ASSERT_FS_OK(past);
  EXPECT_TRUE(past->data.empty());
  EXPECT_TRUE(past->eof);
  auto tail = fs_->Read(Root(), f, 99990, 100);
  ASSERT_FS_OK(tail);
  EXPECT_EQ(tail->data.size(), 10u);
  EXPECT_TRUE(tail->eof);
  // Overwrite across a chunk boundary, before and after a flush.
  WriteAt(f, kChunkSize - 3, "XYZXYZ");
  data.replace(kChunkSize - 3, 6, "XYZXYZ");
  EXPECT_EQ(ReadAt(f, 0, 200000), data);
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(ReadAt(f, 0, 200000), data);
  EXPECT_EQ(Stat(f).used, data.size());
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 200000), data);
  ExpectFsckClean();
}

TEST_F(DataTest, ReadAndWriteErrors) {
  Ino d = MakeDir(kRootIno, "d");
  EXPECT_ERRNO(fs_->Read(Root(), d, 0, 10), EISDIR);
  EXPECT_ERRNO(fs_->Write(Root(), d, 0, "x"), EISDIR);
  EXPECT_ERRNO(fs_->Open(Root(), d, O_WRONLY), EISDIR);
  EXPECT_ERRNO(fs_->Read(Root(), 55555, 0, 10), ESTALE);
  Ino f = MakeFile(kRootIno, "f");
  auto ro = fs_->Open(Root(), f, O_RDONLY);
  ASSERT_FS_OK(ro);
  EXPECT_ERRNO(fs_->Write(Root(), f, 0, "x", *ro), EBADF);
  EXPECT_ERRNO(fs_->Read(Root(), d, 0, 1, *ro), EBADF);  // handle of another inode
  auto wo = fs_->Open(Root(), f, O_WRONLY);
  ASSERT_FS_OK(wo);
  EXPECT_ERRNO(fs_->Read(Root(), f, 0, 1, *wo), EBADF);
  EXPECT_ERRNO(fs_->Open(Root(), f, O_ACCMODE), EINVAL);
  ASSERT_FS_OK(fs_->Release(*ro));
  ASSERT_FS_OK(fs_->Release(*wo));
  EXPECT_ERRNO(fs_->Release(987654), EBADF);
}

TEST_F(DataTest, AppendHandleWritesAtEnd) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, "abc");
  auto h = fs_->Open(Root(), f, O_WRONLY | O_APPEND);
  ASSERT_FS_OK(h);
  ASSERT_FS_OK(fs_->Write(Root(), f, 0, "def", *h));
  ASSERT_FS_OK(fs_->Write(Root(), f, 0, "ghi", *h));
  ASSERT_FS_OK(fs_->Release(*h));
  EXPECT_EQ(ReadAt(f, 0, 100), "abcdefghi");
}

TEST_F(DataTest, OpenWithTruncate) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, Pattern(50000, 2));
  auto h = fs_->Open(Root(), f, O_RDWR | O_TRUNC);
  ASSERT_FS_OK(h);
  EXPECT_EQ(Stat(f).size, 0u);
  ASSERT_FS_OK(fs_->Release(*h));
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(CountChunks(f), 0u);
  EXPECT_EQ(Stat(f).used, 0u);
}

TEST_F(DataTest, SparseFileHolesReadZerosAndCostNothing) {
  Ino f = MakeFile(kRootIno, "sparse");
  const uint64_t far = 1ull << 30;
  WriteAt(f, far, "end");
  WriteAt(f, 5, "start");
  ASSERT_TRUE(fs_->SyncAll().ok());
  Attr a = Stat(f);
  EXPECT_EQ(a.size, far + 3);
  EXPECT_EQ(a.used, 13u);  // chunk 0 holds 5 zeros + "start", chunk 32768 holds "end"
  EXPECT_EQ(CountChunks(f), 2u);
  EXPECT_EQ(ReadAt(f, 0, 10), std::string(5, '\0') + "start");
  EXPECT_EQ(ReadAt(f, far - 100000, 100000), std::string(100000, '\0'));
  EXPECT_EQ(ReadAt(f, far - 2, 10), std::string(2, '\0') + "end");
  // Writing zeros over data makes a hole again.
  WriteAt(f, 5, std::string(5, '\0'));
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(CountChunks(f), 1u);
  EXPECT_EQ(Stat(f).used, 3u);
  // A whole chunk of zeros is never stored.
  Ino z = MakeFile(kRootIno, "zeros");
  WriteAt(z, 0, std::string(4 * kChunkSize, '\0'));
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(CountChunks(z), 0u);
  EXPECT_EQ(Stat(z).size, 4 * kChunkSize);
  ExpectFsckClean();
}

TEST_F(DataTest, TruncateDownAndUp) {
  Ino f = MakeFile(kRootIno, "f");
  std::string data = Pattern(10 * kChunkSize, 3);
  WriteAt(f, 0, data);
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(CountChunks(f), 10u);
  Attr before = Stat(f);
  SetAttrRequest shrink;
  shrink.size = 2 * kChunkSize + 100;
  auto r = fs_->SetAttr(Root(), f, shrink);
  ASSERT_FS_OK(r);
  EXPECT_EQ(r->size, 2 * kChunkSize + 100);
  EXPECT_TRUE(before.mtime < r->mtime);
  EXPECT_EQ(CountChunks(f), 3u);
  EXPECT_EQ(r->used, 2 * kChunkSize + 100);
  SetAttrRequest grow;
  grow.size = 5 * kChunkSize;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, grow));
  std::string expect = data.substr(0, 2 * kChunkSize + 100) +
                       std::string(5 * kChunkSize - (2 * kChunkSize + 100), '\0');
  EXPECT_EQ(ReadAt(f, 0, 10 * kChunkSize), expect);
  EXPECT_EQ(CountChunks(f), 3u);
  // Unflushed writes are truncated too.
  WriteAt(f, 4 * kChunkSize, "tail data");
  SetAttrRequest cut;
  cut.size = 4 * kChunkSize + 4;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, cut));
  grow.size = 4 * kChunkSize + 20;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, grow));
  EXPECT_EQ(ReadAt(f, 4 * kChunkSize, 100), std::string("tail") + std::string(16, '\0'));
  // Truncating a big file uses a range deletion.
  Ino big = MakeFile(kRootIno, "big");
  WriteAt(big, 0, Pattern(40 * kChunkSize, 4));
  SetAttrRequest small;
  small.size = 1;
  ASSERT_FS_OK(fs_->SetAttr(Root(), big, small));
  EXPECT_EQ(CountChunks(big), 1u);
  EXPECT_EQ(Stat(big).used, 1u);
  ExpectFsckClean();
}

TEST_F(DataTest, OffsetsNear2To63) {
  Ino f = MakeFile(kRootIno, "huge");
  const uint64_t last = kMaxFileSize - 10;
  WriteAt(f, last, "0123456789");
  EXPECT_EQ(Stat(f).size, kMaxFileSize);
  EXPECT_EQ(ReadAt(f, last, 100), "0123456789");
  EXPECT_EQ(ReadAt(f, last - 5, 5), std::string(5, '\0'));
  EXPECT_ERRNO(fs_->Write(Root(), f, last, "01234567890"), EFBIG);
  EXPECT_ERRNO(fs_->Write(Root(), f, kMaxFileSize + 1, "x"), EFBIG);
  EXPECT_ERRNO(fs_->Write(Root(), f, UINT64_MAX, "x"), EFBIG);
  SetAttrRequest too_big;
  too_big.size = kMaxFileSize + 1;
  EXPECT_ERRNO(fs_->SetAttr(Root(), f, too_big), EFBIG);
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(CountChunks(f), 1u);
  SetAttrRequest shrink;
  shrink.size = 1000;
  ASSERT_FS_OK(fs_->SetAttr(Root(), f, shrink));
  EXPECT_EQ(CountChunks(f), 0u);
  ExpectFsckClean();
}

TEST_F(DataTest, SmallAppendsAreCoalesced) {
  Ino f = MakeFile(kRootIno, "log");
  ASSERT_TRUE(fs_->SyncAll().ok());
  uint64_t seq_before = engine_->db()->GetLatestSequenceNumber();
  FsCounters before = fs_->counters();
  std::string block = Pattern(4096, 5);
  constexpr int kAppends = 10000;
  for (int i = 0; i < kAppends; ++i) {
    block[0] = static_cast<char>('A' + i % 26);
    auto r = fs_->Write(Root(), f, static_cast<uint64_t>(i) * 4096, block);
    ASSERT_TRUE(r.ok()) << i;
  }
  ASSERT_TRUE(fs_->SyncAll().ok());
  FsCounters after = fs_->counters();
  uint64_t keys_written = engine_->db()->GetLatestSequenceNumber() - seq_before;
  const uint64_t chunks = uint64_t{kAppends} * 4096 / kChunkSize;  // 1250
  // Each chunk reaches the engine about once (a flush may split one chunk
  // in two puts), never once per append.
  EXPECT_LE(after.chunk_puts - before.chunk_puts, chunks + chunks / 4);
  EXPECT_GE(after.chunk_puts - before.chunk_puts, chunks);
  EXPECT_LT(after.engine_writes - before.engine_writes, 200u);
  EXPECT_LT(keys_written, 2 * chunks);
  EXPECT_EQ(CountChunks(f), chunks);
  Attr a = Stat(f);
  EXPECT_EQ(a.size, uint64_t{kAppends} * 4096);
  EXPECT_EQ(a.used, a.size);
  for (int i : {0, 1, 7, 4999, 9999}) {
    block[0] = static_cast<char>('A' + i % 26);
    EXPECT_EQ(ReadAt(f, static_cast<uint64_t>(i) * 4096, 4096), block) << i;
  }
}

TEST_F(DataTest, ReadsSeeUnflushedWritesAndFsyncMakesThemDurable) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, "not yet flushed");
  EXPECT_GT(fs_->counters().write_back_bytes, 0u);
  EXPECT_EQ(CountChunks(f), 0u);
  EXPECT_EQ(ReadAt(f, 0, 100), "not yet flushed");
  EXPECT_EQ(Stat(f).size, 15u);
  uint64_t syncs = engine_->stats().syncs;
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  EXPECT_GT(engine_->stats().syncs, syncs);
  EXPECT_EQ(CountChunks(f), 1u);
  EXPECT_EQ(fs_->counters().write_back_bytes, 0u);
  // A metadata change carries unflushed data along in its batch.
  WriteAt(f, 100, "more");
  Chmod(f, 0600);
  EXPECT_EQ(fs_->counters().write_back_bytes, 0u);
  // The background flusher empties the buffer on its own.
  WriteAt(f, 200, "background");
  for (int i = 0; i < 200 && fs_->counters().write_back_bytes > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(fs_->counters().write_back_bytes, 0u);
  ExpectFsckClean();
}

class SmallBufferTest : public FsTest {
 protected:
  FsOptions Options() override {
    FsOptions o = FsTest::Options();
    o.write_back_bytes = 256 * 1024;
    o.write_back_file_bytes = 128 * 1024;
    o.write_back_interval = std::chrono::milliseconds(10000);
    return o;
  }
};

TEST_F(SmallBufferTest, BufferStaysBounded) {
  std::vector<Ino> files;
  for (int i = 0; i < 20; ++i) files.push_back(MakeFile(kRootIno, "f" + std::to_string(i)));
  std::string block = Pattern(kChunkSize, 6);
  uint64_t peak = 0;
  for (int round = 0; round < 4; ++round) {
    for (Ino f : files) {
      WriteAt(f, round * kChunkSize, block);
      peak = std::max(peak, fs_->counters().write_back_bytes);
    }
  }
  EXPECT_LE(peak, 256u * 1024 + kChunkSize);
  for (Ino f : files) EXPECT_EQ(ReadAt(f, 3 * kChunkSize, kChunkSize), block);
}

TEST_F(SmallBufferTest, HugeSingleWriteIsSplitAndFlushed) {
  Ino f = MakeFile(kRootIno, "big");
  std::string data = Pattern(10 << 20, 13);
  auto r = fs_->Write(Root(), f, 12345, data);
  ASSERT_FS_OK(r);
  EXPECT_EQ(r->written, data.size());
  EXPECT_EQ(r->attr.size, 12345 + data.size());
  EXPECT_LE(fs_->counters().write_back_bytes, 256u * 1024 + kChunkSize);
  EXPECT_EQ(ReadAt(f, 12345, 11 << 20), data);
  EXPECT_EQ(ReadAt(f, 0, 12345), std::string(12345, '\0'));
}

class QuotaTest : public FsTest {
 protected:
  FsOptions Options() override {
    FsOptions o = FsTest::Options();
    o.max_size_bytes = 1 << 20;
    return o;
  }
};

TEST_F(QuotaTest, NoSpacePastMaxSize) {
  Ino f = MakeFile(kRootIno, "f");
  std::string mib = Pattern(1 << 20, 7);
  WriteAt(f, 0, mib.substr(0, (1 << 20) - 100));
  Ino g = MakeFile(kRootIno, "g");
  EXPECT_ERRNO(fs_->Write(Root(), g, 0, mib.substr(0, 200)), ENOSPC);
  EXPECT_EQ(Stat(g).size, 0u);  // a refused write changes nothing
  ASSERT_FS_OK(fs_->Write(Root(), g, 0, mib.substr(0, 100)));
  EXPECT_ERRNO(fs_->Write(Root(), g, 100, "x"), ENOSPC);
  // Holes and overwrites cost nothing.
  SetAttrRequest sparse;
  sparse.size = 10ull << 30;
  ASSERT_FS_OK(fs_->SetAttr(Root(), g, sparse));
  ASSERT_FS_OK(fs_->Write(Root(), f, 0, mib.substr(0, 1000)));
  ASSERT_FS_OK(fs_->Write(Root(), g, 5ull << 30, std::string(1000, '\0')));
  auto st = fs_->StatFs(Root(), kRootIno);
  ASSERT_FS_OK(st);
  EXPECT_EQ(st->total_blocks, (1u << 20) / kBlockSize);
  EXPECT_EQ(st->free_blocks, 0u);
  EXPECT_EQ(st->name_max, kNameMax);
  EXPECT_EQ(st->total_files - st->free_files, 3u);
  // Deleting frees the space at once.
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
  ASSERT_FS_OK(fs_->Write(Root(), g, 0, mib.substr(0, 500000)));
  st = fs_->StatFs(Root(), kRootIno);
  ASSERT_FS_OK(st);
  EXPECT_GT(st->free_blocks, 100u);
  ExpectFsckClean();
}

// Chunks a write covers whole are not read first. A write refused for
// room must leave them as they were, and rewriting stored chunks whole
// needs no room at all.
TEST_F(QuotaTest, WholeChunkWritesRefusedOrNotKeepTheFileRight) {
  Ino f = MakeFile(kRootIno, "f");
  const std::string old = Pattern(4 * kChunkSize, 3);
  WriteAt(f, 0, old);
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  Remount();  // the chunks are the engine's alone now, none in memory
  Ino g = MakeFile(kRootIno, "g");
  WriteAt(g, 0, Pattern((1 << 20) - 4 * kChunkSize - 100, 4));  // 100 bytes left
  EXPECT_ERRNO(fs_->Write(Root(), f, 0, Pattern(4 * kChunkSize + 8192, 5)), ENOSPC);
  EXPECT_EQ(ReadAt(f, 0, 5 * kChunkSize), old);
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 5 * kChunkSize), old);
  // The same bytes' worth again, all of it replaced: no growth, no refusal.
  const std::string next = Pattern(4 * kChunkSize, 6);
  WriteAt(f, 0, next);
  EXPECT_EQ(ReadAt(f, 0, 5 * kChunkSize), next);
  EXPECT_EQ(Stat(f).used, 4 * kChunkSize);
  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  Remount();
  EXPECT_EQ(ReadAt(f, 0, 5 * kChunkSize), next);
  ExpectFsckClean();
}

class NoQuotaTest : public FsTest {
 protected:
  FsOptions Options() override {
    FsOptions o = FsTest::Options();
    o.max_size_bytes = 0;
    return o;
  }
};

TEST_F(NoQuotaTest, ZeroMeansUnlimited) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, Pattern(3 * kChunkSize, 12));
  auto st = fs_->StatFs(Root(), kRootIno);
  ASSERT_FS_OK(st);
  EXPECT_EQ(st->total_blocks, kMaxFileSize / kBlockSize);
  EXPECT_EQ(st->total_blocks - st->free_blocks, 3 * kChunkSize / kBlockSize);
}

TEST_F(DataTest, UnlinkedFileStaysReadableWhileOpen) {
  Ino f = MakeFile(kRootIno, "f");
  std::string data = Pattern(3 * kChunkSize, 8);
  WriteAt(f, 0, data);
  auto h = fs_->Open(Root(), f, O_RDWR);
  ASSERT_FS_OK(h);
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
  EXPECT_ERRNO(fs_->Lookup(Root(), kRootIno, "f"), ENOENT);
  EXPECT_EQ(Stat(f).nlink, 0u);
  auto r = fs_->Read(Root(), f, 0, 4 * kChunkSize, *h);
  ASSERT_FS_OK(r);
  EXPECT_EQ(r->data, data);
  ASSERT_FS_OK(fs_->Write(Root(), f, 0, "still writable", *h));
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_ERRNO(fs_->Link(Root(), f, kRootIno, "resurrect"), ENOENT);
  {
    FsckReport mid = RunFsck();  // reopening reclaims the orphan (no handle survives)
    EXPECT_TRUE(mid.clean());
    EXPECT_EQ(mid.orphans, 1u);
  }
  EXPECT_ERRNO(fs_->GetAttr(Root(), f), ESTALE);
  EXPECT_TRUE(WaitForReclaim(*fs_, 1));
  EXPECT_EQ(CountChunks(f), 0u);
  ExpectFsckClean();
}

TEST_F(DataTest, LastReleaseOfUnlinkedFileFreesIt) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, Pattern(2 * kChunkSize, 9));
  ASSERT_TRUE(fs_->SyncAll().ok());
  auto h1 = fs_->Open(Root(), f, O_RDONLY);
  auto h2 = fs_->Open(Root(), f, O_RDONLY);
  ASSERT_FS_OK(h1);
  ASSERT_FS_OK(h2);
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "f"));
  ASSERT_FS_OK(fs_->Release(*h1));
  EXPECT_EQ(ReadAt(f, 0, 10).size(), 10u);
  ASSERT_FS_OK(fs_->Release(*h2));
  EXPECT_ERRNO(fs_->GetAttr(Root(), f), ESTALE);
  EXPECT_TRUE(WaitForReclaim(*fs_, 1));
  EXPECT_EQ(CountChunks(f), 0u);
  EXPECT_EQ(fs_->counters().used_bytes, 0u);
  ExpectFsckClean();
}

// Records the size of every batch written from the thread that created it,
// so a test measures its own operation's batch and not the background
// work (reclaim, collection) racing with it.
class BatchWatchingEngine final : public ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  Status Write(rocksdb::WriteBatch* batch) override {
    if (std::this_thread::get_id() == owner_) {
      MutexLock g(&mu_);
      counts_.push_back(batch->Count());
    }
    return ForwardingEngine::Write(batch);
  }
  std::vector<uint32_t> TakeCounts() {
    MutexLock g(&mu_);
    return std::exchange(counts_, {});
  }

 private:
  const std::thread::id owner_ = std::this_thread::get_id();
  Mutex mu_;
  std::vector<uint32_t> counts_ GUARDED_BY(mu_);
};

class BatchWatchTest : public FsTest {
 protected:
  engine::Engine& FsEngine() override {
    watcher_ = std::make_unique<BatchWatchingEngine>(*engine_);
    return *watcher_;
  }
  std::unique_ptr<BatchWatchingEngine> watcher_;
};

TEST_F(BatchWatchTest, DeletingHugeFileReturnsAtOnce) {
  Ino f = MakeFile(kRootIno, "huge");
  std::string block = Pattern(kChunkSize, 10);
  constexpr int kChunks = 600;
  for (int i = 0; i < kChunks; ++i) WriteAt(f, uint64_t(i) * kChunkSize, block);
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(CountChunks(f), static_cast<size_t>(kChunks));
  uint64_t reclaimed = fs_->counters().reclaimed_files;
  (void)watcher_->TakeCounts();
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "huge"));
  // The unlink batch is a handful of keys, whatever the file's size.
  std::vector<uint32_t> batches = watcher_->TakeCounts();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_LT(batches[0], 10u);
  EXPECT_EQ(fs_->counters().used_bytes, 0u);
  EXPECT_TRUE(WaitForReclaim(*fs_, reclaimed + 1));
  EXPECT_EQ(CountChunks(f), 0u);
  ExpectFsckClean();
}

TEST_F(DataTest, UnflushedFileDeletedWithoutWritingItsData) {
  Ino f = MakeFile(kRootIno, "tmp");
  WriteAt(f, 0, Pattern(100, 11));
  uint64_t puts = fs_->counters().chunk_puts;
  ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, "tmp"));
  ASSERT_TRUE(fs_->SyncAll().ok());
  EXPECT_EQ(fs_->counters().chunk_puts, puts);
  EXPECT_EQ(fs_->counters().write_back_bytes, 0u);
  EXPECT_EQ(fs_->counters().used_bytes, 0u);
  ExpectFsckClean();
}

TEST_F(DataTest, RelatimeUpdatesAtimeOnRead) {
  Ino f = MakeFile(kRootIno, "f");
  WriteAt(f, 0, "x");
  ASSERT_TRUE(fs_->SyncAll().ok());
  Attr before = Stat(f);
  ReadAt(f, 0, 1);
  Attr after = Stat(f);
  EXPECT_TRUE(before.mtime < after.atime);
  ReadAt(f, 0, 1);
  EXPECT_TRUE(Stat(f).atime == after.atime);  // already newer than mtime
}

}  // namespace
}  // namespace pail::fs::testing
