// The write-back buffer when the engine refuses writes (store down,
// credentials expired): memory stays bounded, and a write reported as
// failed never reaches the bucket later.
#include <atomic>
#include <chrono>
#include <map>
#include <utility>

#include "fs_test_util.h"

namespace pail::fs::testing {
namespace {

// Write fails while `failing` is set.
class FlakyEngine final : public ForwardingEngine {
 public:
  using ForwardingEngine::ForwardingEngine;
  Status Write(rocksdb::WriteBatch* batch) override {
    if (failing) return Status::Retryable("injected: the bucket is unreachable");
    return ForwardingEngine::Write(batch);
  }
  std::atomic<bool> failing{false};
};

constexpr uint64_t kBufferBytes = 512 * 1024;
constexpr uint64_t kFileShareBytes = 128 * 1024;

class WriteBackFailureTest : public FsTest {
 protected:
  FsOptions Options() override {
    FsOptions o = FsTest::Options();
    o.write_back_bytes = kBufferBytes;
    o.write_back_file_bytes = kFileShareBytes;
    o.write_back_interval = std::chrono::milliseconds(10000);
    return o;
  }
  engine::Engine& FsEngine() override {
    flaky_ = std::make_unique<FlakyEngine>(*engine_);
    return *flaky_;
  }
  void TearDown() override {
    if (flaky_) flaky_->failing = false;
    FsTest::TearDown();
  }

  std::string Block(uint32_t seed, size_t n = kChunkSize) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (seed * 7 + i) % 26);
    return s;
  }

  std::unique_ptr<FlakyEngine> flaky_;
};

TEST_F(WriteBackFailureTest, WriteAcceptedDuringAnOutageIsKeptAndFlushedAfter) {
  Ino f = MakeFile(kRootIno, "f");
  std::string acked = Block(1, 2 * kChunkSize);
  WriteAt(f, 0, acked);

  flaky_->failing = true;
  // Past the file's share of the buffer: its full chunks head for a
  // segment, whose registration fails; the write itself is buffered and
  // acknowledged, and must neither be lost nor half applied.
  const std::string more = Block(2, 3 * kChunkSize);
  WriteAt(f, acked.size(), more);
  EXPECT_FALSE(fs_->Fsync(Root(), f).ok());
  EXPECT_TRUE(ReadAt(f, 0, 1 << 20) == acked + more);
  flaky_->failing = false;

  ASSERT_FS_OK(fs_->Fsync(Root(), f));
  Remount();
  EXPECT_EQ(Stat(f).size, acked.size() + more.size());
  EXPECT_TRUE(ReadAt(f, 0, 1 << 20) == acked + more);
  ExpectFsckClean();
}

TEST_F(WriteBackFailureTest, BufferStaysBoundedAndRefusedWritesStayOut) {
  constexpr int kFiles = 32, kRounds = 4;
  std::vector<Ino> files;
  for (int i = 0; i < kFiles; ++i) files.push_back(MakeFile(kRootIno, "f" + std::to_string(i)));

  flaky_->failing = true;
  std::map<std::pair<int, int>, bool> accepted;  // (file, round) -> acknowledged
  uint64_t peak = 0;
  int refused = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kFiles; ++i) {
      auto w = fs_->Write(Root(), files[i], round * kChunkSize, Block(i * kRounds + round));
      accepted[{i, round}] = w.ok();
      if (!w.ok()) {
        EXPECT_EQ(w.error(), EIO);
        refused++;
      }
      peak = std::max(peak, fs_->counters().write_back_bytes);
    }
  }
  EXPECT_LE(peak, kBufferBytes);
  EXPECT_GT(refused, 0);

  flaky_->failing = false;
  ASSERT_TRUE(fs_->SyncAll().ok());
  Remount();
  for (int i = 0; i < kFiles; ++i) {
    std::string data = ReadAt(files[i], 0, kRounds * kChunkSize);
    for (int round = 0; round < kRounds; ++round) {
      std::string got = data.size() > round * kChunkSize ? data.substr(round * kChunkSize, kChunkSize)
                                                          : std::string();
      if (accepted[{i, round}]) {
        EXPECT_TRUE(got == Block(i * kRounds + round)) << "file " << i << " round " << round;
      } else {
        EXPECT_TRUE(got.find_first_not_of('\0') == std::string::npos)
            << "refused write of file " << i << " round " << round << " reached the bucket";
      }
    }
  }
}

// A write that may not wait gives up when the buffer has no room for it,
// changing nothing, while reads of buffered data still go through.
TEST_F(WriteBackFailureTest, TryWriteGivesUpWhenTheBufferIsFull) {
  constexpr int kFiles = 32;
  std::vector<Ino> files;
  for (int i = 0; i < kFiles; ++i) files.push_back(MakeFile(kRootIno, "f" + std::to_string(i)));
  Ino probe = MakeFile(kRootIno, "probe");
  flaky_->failing = true;  // nothing leaves the buffer
  // One chunk per file, until the buffer cannot promise a one-chunk write
  // what it may take (the chunk, loaded whole, and two more).
  int filled = 0;
  while (filled < kFiles && fs_->counters().write_back_bytes + 3 * kChunkSize <= kBufferBytes) {
    WriteAt(files[filled], 0, Block(filled));
    filled++;
  }
  ASSERT_LT(filled, kFiles);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_ERRNO(fs_->TryWrite(Root(), probe, 0, Block(99), 0), EWOULDBLOCK);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(Stat(probe).size, 0u);
  auto buffered = fs_->TryRead(Root(), files[0], 0, kChunkSize, 0);
  ASSERT_FS_OK(buffered);
  EXPECT_TRUE(buffered->data == Block(0));

  flaky_->failing = false;
  ASSERT_TRUE(fs_->SyncAll().ok());
  auto w = fs_->TryWrite(Root(), probe, 0, Block(99), 0);
  ASSERT_FS_OK(w);
  EXPECT_EQ(w->written, kChunkSize);
  Remount();
  EXPECT_TRUE(ReadAt(probe, 0, kChunkSize) == Block(99));
  for (int i = 0; i < filled; ++i) EXPECT_TRUE(ReadAt(files[i], 0, kChunkSize) == Block(i)) << i;
}

}  // namespace
}  // namespace pail::fs::testing
