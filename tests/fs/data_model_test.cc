// Every data operation of the core in a random sequence against a model:
// writes (byte and block sized, zeros included), truncates both ways,
// fallocate in each mode, copy_file_range within and across files, reads,
// SEEK_DATA / SEEK_HOLE and extent maps, with fsyncs, restarts and the
// segment collector running in between. After each step the sizes must
// match, and every few steps the whole contents; fsck must be clean at the
// end. The model is a std::string per file. DataModelQuotaTest runs the same
// under a quota the files outgrow: an operation refused with ENOSPC must
// change nothing, a copy cut short by it only what it reports, and fsck
// checks the space charged (reservations included) along the way.
#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "fs/chunk_value.h"
#include "fs_test_util.h"
#include "random_data_ops.h"

namespace pail::fs::testing {
namespace {

using pail::testing::RandomBytes;
using pail::testing::RandomLength;
using pail::testing::RandomOffset;
static_assert(pail::testing::kModelChunkBytes == kChunkSize);
static_assert(pail::testing::kModelBlockBytes == kPieceBlockBytes);

constexpr int kFiles = 3;
// Files stay within this size (most operations start below it), so
// operations collide with each other's chunks.
constexpr uint64_t kSpan = 48 * kChunkSize;
constexpr int kSteps = 1200;

// Small buffers and segments: uploads, pieces and segment rewrites happen
// within a few steps, not only at the end.
FsOptions BusyWriteBack(FsOptions o) {
  o.write_back_bytes = 512ull << 10;
  o.write_back_file_bytes = 128ull << 10;
  o.segment_bytes = 256ull << 10;
  o.write_back_interval = std::chrono::milliseconds(20);
  o.dead_segment_grace = std::chrono::milliseconds(0);
  o.collect_interval = std::chrono::milliseconds(20);
  return o;
}

class DataModelTest : public FsTest, public ::testing::WithParamInterface<uint32_t> {
 protected:
  FsOptions Options() override { return BusyWriteBack(FsTest::Options()); }

  static void Resize(std::string& m, uint64_t size) { m.resize(size, '\0'); }

  // Whether the files outgrow the quota (DataModelQuotaTest).
  virtual bool UnderQuota() { return false; }

  // Whether `status` is a refusal for want of room, which only a quota
  // allows; anything else must have succeeded.
  bool Refused(const FsStatus& status) {
    if (status.ok()) return false;
    EXPECT_TRUE(UnderQuota() && status.error() == ENOSPC)
        << "errno " << status.error();
    refusals_++;
    return true;
  }

  static bool Zeros(const std::string& m, uint64_t from, uint64_t to) {
    to = std::min<uint64_t>(to, m.size());
    return from >= to ||
           std::all_of(m.begin() + from, m.begin() + to, [](char c) { return c == 0; });
  }

  void CheckSize(int f, const char* step) {
    Attr a = Stat(ino_[f]);
    ASSERT_EQ(a.size, model_[f].size()) << step << " on file " << f;
  }

  // Reads [off, off + len) and compares it with the model, naming the first
  // byte that differs (the strings themselves are too long to print).
  void CheckRange(int f, uint64_t off, uint64_t len, const std::string& when) {
    const std::string& m = model_[f];
    std::string got = ReadAt(ino_[f], off, static_cast<uint32_t>(len));
    std::string want = off < m.size() ? m.substr(off, len) : std::string();
    if (got == want) return;
    size_t i = 0;
    while (i < got.size() && i < want.size() && got[i] == want[i]) i++;
    FAIL() << when << ": file " << f << ", read of " << len << " at " << off << " differs at byte "
           << off + i << " (got " << got.size() << " bytes, want " << want.size() << ")";
  }

  void CheckContents(int f, const std::string& when) {
    CheckRange(f, 0, model_[f].size() + kChunkSize, when);
  }

  void CheckAll(const std::string& when) {
    for (int f = 0; f < kFiles; ++f) {
      CheckSize(f, when.c_str());
      CheckContents(f, when);
    }
  }

  // SEEK_DATA / SEEK_HOLE at a random offset, and the extent map of a
  // random range: holes read as zeros, data and hole answers agree with
  // the runs, and the runs tile the range.
  void CheckHoles(int f) {
    const std::string& m = model_[f];
    const uint64_t size = m.size();
    const uint64_t at = RandomOffset(rng_, size + kChunkSize);
    auto data = fs_->Seek(Root(), ino_[f], at, SeekFor::kData);
    auto hole = fs_->Seek(Root(), ino_[f], at, SeekFor::kHole);
    if (at >= size) {
      EXPECT_EQ(data.error(), ENXIO) << "SEEK_DATA at " << at << " of " << size;
      EXPECT_EQ(hole.error(), ENXIO) << "SEEK_HOLE at " << at << " of " << size;
      return;
    }
    if (data.ok()) {
      ASSERT_GE(*data, at);
      ASSERT_LT(*data, size);
      EXPECT_TRUE(Zeros(m, at, *data)) << "SEEK_DATA skipped data: " << at << " -> " << *data;
    } else {
      EXPECT_EQ(data.error(), ENXIO);
      EXPECT_TRUE(Zeros(m, at, size)) << "SEEK_DATA found no data after " << at;
    }
    ASSERT_TRUE(hole.ok()) << "SEEK_HOLE errno " << hole.error();
    ASSERT_GE(*hole, at);
    ASSERT_LE(*hole, size);
    auto runs = fs_->MapExtents(Root(), ino_[f], at, size - at, 64);
    ASSERT_TRUE(runs.ok()) << "MapExtents errno " << runs.error();
    uint64_t next = at;
    for (const Extent& e : *runs) {
      ASSERT_EQ(e.offset, next) << "extent runs do not tile the range";
      ASSERT_GT(e.length, 0u);
      if (!e.data) {
        EXPECT_TRUE(Zeros(m, e.offset, e.offset + e.length)) << "a hole holds data";
      }
      next = e.offset + e.length;
    }
    ASSERT_LE(next, size);
    if (!runs->empty() && runs->size() < 64) {
      EXPECT_EQ(next, size);
    }
    if (!runs->empty()) {
      // The first run decides both seeks.
      const Extent& first = runs->front();
      if (first.data) {
        EXPECT_EQ(data.ok() ? *data : ~0ull, at);
      } else {
        EXPECT_EQ(*hole, at);
      }
    }
  }

  void Step(int step) {
    const int f = static_cast<int>(rng_() % kFiles);
    std::string& m = model_[f];
    const Ino ino = ino_[f];
    const int kind = static_cast<int>(rng_() % 100);
    if (kind < 35) {  // write
      const uint64_t off = RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunkSize, kSpan));
      std::string data = RandomBytes(rng_, RandomLength(rng_));
      auto written = fs_->Write(Root(), ino, off, data);
      if (Refused(written.status())) return;
      // Under a quota a write may stop short where the room ran out.
      if (UnderQuota() && written->written < data.size()) {
        data.resize(written->written);
        refusals_++;
      }
      ASSERT_EQ(written->written, data.size());
      if (m.size() < off + data.size()) Resize(m, off + data.size());
      m.replace(off, data.size(), data);
    } else if (kind < 45) {  // read
      CheckRange(f, RandomOffset(rng_, m.size() + 100), RandomLength(rng_),
                 "step " + std::to_string(step));
    } else if (kind < 53) {  // truncate
      SetAttrRequest req;
      req.size = rng_() % 3 == 0 ? RandomOffset(rng_, kSpan) : RandomOffset(rng_, m.size());
      ASSERT_FS_OK(fs_->SetAttr(Root(), ino, req));
      Resize(m, *req.size);
    } else if (kind < 60) {  // punch a hole
      const uint64_t off = RandomOffset(rng_, m.size() + kChunkSize);
      const uint64_t len = RandomLength(rng_);
      ASSERT_FS_OK(fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocKeepSize, off, len));
      if (off < m.size()) {
        const uint64_t end = std::min<uint64_t>(m.size(), off + len);
        std::fill(m.begin() + off, m.begin() + end, '\0');
      }
    } else if (kind < 66) {  // zero a range, extending the size or not
      const bool keep = rng_() % 2 == 0;
      const uint64_t off = RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunkSize, kSpan));
      const uint64_t len = RandomLength(rng_);
      if (Refused(fs_->Fallocate(Root(), ino, kFallocZeroRange | (keep ? kFallocKeepSize : 0), off,
                                 len)
                      .status())) {
        return;
      }
      if (!keep && m.size() < off + len) Resize(m, off + len);
      if (off < m.size()) {
        const uint64_t end = std::min<uint64_t>(m.size(), off + len);
        std::fill(m.begin() + off, m.begin() + end, '\0');
      }
    } else if (kind < 70) {  // allocate, extending the size or not
      const bool keep = rng_() % 2 == 0;
      const uint64_t off = RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunkSize, kSpan));
      const uint64_t len = RandomLength(rng_);
      if (Refused(fs_->Fallocate(Root(), ino, keep ? kFallocKeepSize : 0, off, len).status())) {
        return;
      }
      if (!keep && m.size() < off + len) Resize(m, off + len);
    } else if (kind < 80) {  // copy_file_range
      const int from = static_cast<int>(rng_() % kFiles);
      CopyRangeRequest req;
      req.in = ino_[from];
      req.out = ino;
      req.in_offset = RandomOffset(rng_, model_[from].size() + 100);
      req.out_offset = RandomOffset(rng_, std::min<uint64_t>(m.size() + kChunkSize, kSpan));
      req.length = RandomLength(rng_);
      const std::string& src = model_[from];
      // As Linux: the length is cut at the source's end first, and only
      // the ranges that remain must not overlap.
      uint64_t want = req.in_offset >= src.size()
                          ? 0
                          : std::min<uint64_t>(req.length, src.size() - req.in_offset);
      const bool overlap = from == f && req.in_offset < req.out_offset + want &&
                           req.out_offset < req.in_offset + want;
      auto copied = fs_->CopyFileRange(Root(), req);
      if (overlap) {
        EXPECT_EQ(copied.error(), EINVAL) << "overlapping copy within one file";
        return;
      }
      if (Refused(copied.status())) return;
      // Under a quota a copy may stop short where the room ran out.
      if (UnderQuota()) {
        ASSERT_LE(*copied, want) << "bytes copied";
        want = *copied;
      }
      ASSERT_EQ(*copied, want) << "bytes copied";
      std::string bytes = src.substr(std::min<uint64_t>(req.in_offset, src.size()), want);
      if (want > 0) {
        if (m.size() < req.out_offset + want) Resize(m, req.out_offset + want);
        m.replace(req.out_offset, want, bytes);
      }
    } else if (kind < 88) {
      CheckHoles(f);
    } else if (kind < 93) {
      ASSERT_FS_OK(fs_->Fsync(Root(), ino));
    } else if (kind < 96) {
      CheckContents(f, "step " + std::to_string(step));
    } else if (kind < 98) {
      // Let the uploader and the collector run between steps.
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    } else {
      Remount();
      CheckAll("after a restart at step " + std::to_string(step));
    }
    if (!HasFatalFailure()) CheckSize(f, "after the step");
  }

  // The whole test: kSteps random steps, then the files checked before and
  // after a restart, and fsck. Under a quota fsck also checks every 300
  // steps, and the quota must have refused something.
  void Run() {
    rng_.seed(GetParam());
    const bool quota = UnderQuota();
    for (int f = 0; f < kFiles; ++f) ino_[f] = MakeFile(kRootIno, "f" + std::to_string(f));
    for (int step = 0; step < kSteps; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      Step(step);
      if (HasFatalFailure()) return;
      if (quota && step % 300 == 299) ExpectFsckClean();
    }
    if (quota) EXPECT_GT(refusals_, 0) << "the quota never filled: the test checks nothing of it";
    CheckAll("at the end");
    for (int f = 0; f < kFiles; ++f) ASSERT_FS_OK(fs_->Fsync(Root(), ino_[f]));
    Remount();
    CheckAll("after the last restart");
    ExpectFsckClean();
  }

  std::mt19937_64 rng_;
  int refusals_ = 0;
  Ino ino_[kFiles] = {};
  std::string model_[kFiles];
};

TEST_P(DataModelTest, RandomDataOperationsMatchAModel) { Run(); }

INSTANTIATE_TEST_SUITE_P(Seeds, DataModelTest, ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u));

class DataModelQuotaTest : public DataModelTest {
 protected:
  bool UnderQuota() override { return true; }
  FsOptions Options() override {
    FsOptions o = DataModelTest::Options();
    // Half a file at its largest: the files, sparse on average, reach it
    // now and then.
    o.max_size_bytes = kSpan / 2;
    return o;
  }
};

TEST_P(DataModelQuotaTest, RefusalsChangeNothingAndTheChargeAddsUp) { Run(); }

INSTANTIATE_TEST_SUITE_P(Seeds, DataModelQuotaTest, ::testing::Values(1u, 2u, 3u, 4u));

// Three writers at once, each on a file of its own, share a quota they
// outgrow, with the uploader and the collector running all the while: each
// file must hold what its writer's model says (refused writes changed
// nothing, short ones what they reported), before and after a restart, and
// fsck must find the space charged right.
class ConcurrentQuotaTest : public FsTest {
 protected:
  static constexpr uint64_t kQuotaChunks = 40;  // the three model files reach about 60
  FsOptions Options() override {
    FsOptions o = BusyWriteBack(FsTest::Options());
    o.max_size_bytes = kQuotaChunks * kChunkSize;
    return o;
  }

  // A file of its own in the root for each of `writers` writers of a round.
  struct WriterFiles {
    std::vector<std::string> names;
    std::vector<Ino> inos;
  };
  WriterFiles MakeWriterFiles(uint64_t round, int writers) {
    WriterFiles files;
    for (int t = 0; t < writers; ++t) {
      files.names.push_back("r" + std::to_string(round) + "w" + std::to_string(t));
      files.inos.push_back(MakeFile(kRootIno, files.names.back()));
    }
    return files;
  }
  // The next round starts with room again.
  void RemoveWriterFiles(const WriterFiles& files) {
    for (const std::string& name : files.names) ASSERT_FS_OK(fs_->Unlink(Root(), kRootIno, name));
  }

  // One writer's steps on `ino`; returns the first unexpected result, or
  // "" when every step went as the model says.
  std::string RunWriter(uint64_t seed, Ino ino, std::string& m, std::atomic<int>& refusals) {
    std::mt19937_64 rng(seed);
    for (int step = 0; step < 1500; ++step) {
      const std::string at = "step " + std::to_string(step) + ": ";
      const int kind = static_cast<int>(rng() % 10);
      const uint64_t off =
          RandomOffset(rng, std::min<uint64_t>(m.size() + kChunkSize, 24 * kChunkSize));
      if (kind < 5) {
        std::string data = RandomBytes(rng, RandomLength(rng));
        auto w = fs_->Write(Root(), ino, off, data);
        if (!w.ok() && w.error() == ENOSPC) {
          refusals++;
          continue;
        }
        if (!w.ok()) return at + "write errno " + std::to_string(w.error());
        data.resize(w->written);
        if (m.size() < off + data.size()) m.resize(off + data.size(), '\0');
        m.replace(off, data.size(), data);
      } else if (kind < 6) {
        const uint64_t len = RandomLength(rng);
        auto p = fs_->Fallocate(Root(), ino, kFallocPunchHole | kFallocKeepSize, off, len);
        if (!p.ok()) return at + "punch errno " + std::to_string(p.error());
        if (off < m.size()) {
          std::fill(m.begin() + off, m.begin() + std::min<uint64_t>(m.size(), off + len), '\0');
        }
      } else if (kind < 7) {
        auto a = fs_->Fallocate(Root(), ino, rng() % 2 ? kFallocKeepSize : 0, off, RandomLength(rng));
        if (!a.ok() && a.error() == ENOSPC) {
          refusals++;
          continue;
        }
        if (!a.ok()) return at + "allocate errno " + std::to_string(a.error());
        if (a->size > m.size()) m.resize(a->size, '\0');
      } else if (kind < 8) {
        SetAttrRequest req;
        req.size = RandomOffset(rng, m.size());
        if (!fs_->SetAttr(Root(), ino, req).ok()) return at + "truncate failed";
        m.resize(*req.size, '\0');
      } else if (kind < 9) {
        if (!fs_->Fsync(Root(), ino).ok()) return at + "fsync failed";
      } else if (ReadAll(ino, m.size()) != m) {
        return at + "the file differs from its model";
      }
    }
    return "";
  }

  std::string ReadAll(Ino ino, uint64_t size) {
    auto r = fs_->Read(Root(), ino, 0, static_cast<uint32_t>(size + kChunkSize));
    return r.ok() ? std::string(r->data.view()) : "(read errno " + std::to_string(r.error()) + ")";
  }
};

TEST_F(ConcurrentQuotaTest, WritersSharingAFullQuotaKeepTheirFilesRight) {
  constexpr int kWriters = 3;
  for (uint64_t round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const WriterFiles files = MakeWriterFiles(round, kWriters);
    const std::vector<Ino>& inos = files.inos;
    std::string models[kWriters], failures[kWriters];
    std::atomic<int> refusals{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < kWriters; ++t) {
      writers.emplace_back([&, t] {
        failures[t] = RunWriter(round * kWriters + t, inos[t], models[t], refusals);
      });
    }
    for (std::thread& w : writers) w.join();
    for (int t = 0; t < kWriters; ++t) EXPECT_EQ(failures[t], "") << "writer " << t;
    EXPECT_GT(refusals.load(), 0) << "the quota never filled";
    for (int t = 0; t < kWriters; ++t) ASSERT_FS_OK(fs_->Fsync(Root(), inos[t]));
    Remount();
    for (int t = 0; t < kWriters; ++t) {
      EXPECT_TRUE(ReadAll(inos[t], models[t].size()) == models[t])
          << "writer " << t << " after a restart";
    }
    ExpectFsckClean();
    RemoveWriterFiles(files);
  }
}

// Writers and allocations on files of their own, all at once, each going
// on until the quota refuses it: together they must never be charged more
// than the quota. A check of the room apart from the charge lets two of
// them take the same last bytes.
TEST_F(ConcurrentQuotaTest, WritersAtOnceNeverPassTheQuota) {
  constexpr int kWriters = 6;
  constexpr uint64_t kStepBytes = 2 * kChunkSize;
  for (uint64_t round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const WriterFiles files = MakeWriterFiles(round, kWriters);
    const std::vector<Ino>& inos = files.inos;
    std::string failures[kWriters];
    std::atomic<int> ready{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < kWriters; ++t) {
      writers.emplace_back([&, t] {
        const std::string data(kStepBytes, static_cast<char>('a' + t));  // no zeros: all charged
        ready++;
        while (ready.load() < kWriters) std::this_thread::yield();
        // Odd writers allocate, even ones write; each until refused.
        for (uint64_t off = 0;; off += kStepBytes) {
          FsStatus s = t % 2 == 0
                           ? FsStatus(fs_->Write(Root(), inos[t], off, data).status())
                           : FsStatus(fs_->Fallocate(Root(), inos[t], kFallocKeepSize, off, kStepBytes)
                                          .status());
          if (s.ok()) continue;
          if (s.error() != ENOSPC) failures[t] = "errno " + std::to_string(s.error());
          return;
        }
      });
    }
    for (std::thread& w : writers) w.join();
    uint64_t used = 0;
    for (int t = 0; t < kWriters; ++t) {
      EXPECT_EQ(failures[t], "") << "writer " << t;
      ASSERT_FS_OK(fs_->Fsync(Root(), inos[t]));
      used += Stat(inos[t]).used;
    }
    EXPECT_LE(used, kQuotaChunks * kChunkSize);
    EXPECT_GT(used, (kQuotaChunks - kWriters * 2) * kChunkSize) << "the quota never filled";
    ExpectFsckClean();
    RemoveWriterFiles(files);
  }
}

}  // namespace
}  // namespace pail::fs::testing
