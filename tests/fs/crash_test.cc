// A process doing random filesystem work is killed with SIGKILL; whatever
// prefix of its operations reached the bucket must be a consistent
// filesystem (fsck clean) that opens and works, on a fresh cache directory.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "fs/chunk_value.h"
#include "fs_test_util.h"
#include "objstore/local_store.h"
#include "util/failpoint.h"

namespace pail::fs::testing {
namespace {

constexpr const char* kBucketVar = "PAIL_FS_CRASH_BUCKET";
constexpr const char* kCacheVar = "PAIL_FS_CRASH_CACHE";
constexpr const char* kSeedVar = "PAIL_FS_CRASH_SEED";
// The child creates <cache><kReadySuffix> once its filesystem is open.
constexpr const char* kReadySuffix = ".ready";

std::string TempPath(const std::string& tag) {
  std::random_device rd;
  return (std::filesystem::temp_directory_path() /
          ("pailfs-crash-" + tag + "-" + std::to_string(rd()) + std::to_string(rd())))
      .string();
}

engine::EngineOptions CrashEngineOptions(std::shared_ptr<ObjectStore> store,
                                         const std::string& cache) {
  engine::EngineOptions eo;
  eo.store = std::move(store);
  eo.cache_dir = cache;
  eo.disk_cache_bytes = 256 << 20;
  eo.memory_cache_bytes = 16 << 20;
  eo.compression = "lz4";
  eo.flush_interval = std::chrono::milliseconds(50);
  eo.column_families = FileSystem::ColumnFamilies();
  return eo;
}

FsOptions CrashFsOptions() {
  FsOptions o;
  o.write_back_file_bytes = 256 * 1024;
  o.write_back_interval = std::chrono::milliseconds(50);
  // Small segments, collected at once: uploads, relocations and deletions
  // all happen within the child's short life.
  o.segment_bytes = 256 * 1024;
  o.dead_segment_grace = std::chrono::milliseconds(0);
  o.collect_interval = std::chrono::milliseconds(100);
  return o;
}

// Runs in the child until killed.
[[noreturn]] void Churn(const std::string& bucket, const std::string& cache, uint32_t seed) {
  auto store = LocalStore::Open(bucket);
  if (!store.ok()) _exit(2);
  auto engine = engine::Engine::Open(
      CrashEngineOptions(std::shared_ptr<ObjectStore>(std::move(store).value()), cache));
  if (!engine.ok()) _exit(3);
  auto fs = FileSystem::Open(**engine, CrashFsOptions());
  if (!fs.ok()) _exit(4);
  FileSystem& f = **fs;
  // Tell the parent the filesystem is initialised and durable, so that its
  // timed kill falls in the churn even when a sanitizer build on a loaded
  // machine takes seconds to get here.
  if (!f.SyncAll().ok()) _exit(6);
  std::ofstream(cache + kReadySuffix).put('1');
  Credentials root;
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  std::vector<Ino> dirs{kRootIno};
  std::vector<uint64_t> handles;
  std::string block(20000, 'c');
  for (size_t i = 0; i < block.size(); i += 7) block[i] = static_cast<char>('a' + i % 26);
  for (uint64_t i = 0;; ++i) {
    Ino dir = dirs[pick(static_cast<int>(dirs.size()))];
    Ino other = dirs[pick(static_cast<int>(dirs.size()))];
    std::string name = "n" + std::to_string(pick(30));
    std::string name2 = "n" + std::to_string(pick(30));
    switch (pick(15)) {
      case 0: (void)f.Create(root, dir, name, 0644, {}); break;
      case 1: {
        auto d = f.Mkdir(root, dir, name, 0755);
        if (d.ok() && dirs.size() < 40) dirs.push_back(d->ino);
        break;
      }
      case 2: (void)f.Unlink(root, dir, name); break;
      case 3: (void)f.Rmdir(root, dir, name); break;
      case 4: (void)f.Rename(root, dir, name, other, name2); break;
      case 5: {
        auto e = f.Lookup(root, dir, name);
        if (e.ok()) (void)f.Link(root, e->ino, other, name2);
        break;
      }
      case 6:
      case 7: {
        auto e = f.Lookup(root, dir, name);
        if (e.ok() && e->is_reg()) {
          if (pick(2) == 0) {
            (void)f.Write(root, e->ino, static_cast<uint64_t>(pick(300)) * 1000, block);
          } else {
            // Whole blocks, mostly into the file's stored chunks: kept as
            // pieces.
            const size_t blocks = 1 + static_cast<size_t>(pick(3));
            const int in_file = static_cast<int>(e->size / kPieceBlockBytes);
            const int at = in_file > 0 && pick(4) != 0 ? pick(in_file) : pick(75);
            (void)f.Write(root, e->ino, static_cast<uint64_t>(at) * kPieceBlockBytes,
                          std::string_view(block).substr(0, blocks * kPieceBlockBytes));
          }
        }
        break;
      }
      case 8: {
        auto e = f.Lookup(root, dir, name);
        if (e.ok() && e->is_reg()) {
          SetAttrRequest req;
          req.size = static_cast<uint64_t>(pick(200000));
          (void)f.SetAttr(root, e->ino, req);
        }
        break;
      }
      case 9: {
        auto e = f.Lookup(root, dir, name);
        if (e.ok()) {
          (void)f.SetXattr(root, e->ino, "user.k" + std::to_string(pick(3)),
                           std::string(static_cast<size_t>(pick(100)), 'v'), 0);
        }
        break;
      }
      case 10: {
        // Keep some files open so unlinks leave orphans behind.
        auto e = f.Lookup(root, dir, name);
        if (e.ok() && e->is_reg()) {
          if (handles.size() >= 16) {
            (void)f.Release(handles.front());
            handles.erase(handles.begin());
          }
          auto h = f.Open(root, e->ino, O_RDWR);
          if (h.ok()) handles.push_back(*h);
        }
        break;
      }
      case 11: {
        if (pick(20) == 0) {
          (void)f.SyncAll();
          break;
        }
        // A file's fsync: its few changed chunks go inline (CommitInline).
        auto e = f.Lookup(root, dir, name);
        if (e.ok() && e->is_reg() && pick(3) == 0) (void)f.Fsync(root, e->ino);
        break;
      }
      case 12: {
        auto e = f.Lookup(root, dir, name);
        if (e.ok()) (void)f.RemoveXattr(root, e->ino, "user.k" + std::to_string(pick(3)));
        break;
      }
      case 13: {
        // Every fallocate mode, punching and zeroing across stored data.
        static constexpr int kModes[] = {0, kFallocKeepSize, kFallocPunchHole | kFallocKeepSize,
                                         kFallocZeroRange, kFallocZeroRange | kFallocKeepSize};
        auto e = f.Lookup(root, dir, name);
        if (e.ok() && e->is_reg()) {
          uint64_t offset = static_cast<uint64_t>(pick(300)) * 1000;
          (void)f.Fallocate(root, e->ino, kModes[pick(5)], offset,
                            static_cast<uint64_t>(pick(100000)) + 1);
        }
        break;
      }
      case 14: {
        auto from = f.Lookup(root, dir, name);
        auto to = f.Lookup(root, other, name2);
        if (from.ok() && to.ok() && from->is_reg() && to->is_reg()) {
          CopyRangeRequest req;
          req.in = from->ino;
          req.in_offset = static_cast<uint64_t>(pick(200)) * 1000;
          req.out = to->ino;
          req.out_offset = static_cast<uint64_t>(pick(200)) * 1000;
          req.length = static_cast<uint64_t>(pick(200000));
          (void)f.CopyFileRange(root, req);
        }
        break;
      }
    }
  }
}

TEST(CrashChild, Churn) {
  const char* bucket = getenv(kBucketVar);
  if (bucket == nullptr) GTEST_SKIP() << "runs only as the child of CrashTest";
  Churn(bucket, getenv(kCacheVar), static_cast<uint32_t>(std::stoul(getenv(kSeedVar))));
}

// How a round's child dies: SIGKILL after a while, or _exit at a named step
// of the data path (PAIL_FAILPOINTS, util/failpoint.h).
struct Death {
  const char* failpoint;  // nullptr: SIGKILL
};
constexpr Death kDeaths[] = {
    {nullptr},
    {"data/before_upload=exit@4"},          // while a segment is being uploaded
    {"data/after_upload=exit@3"},           // between upload and the values naming it
    {nullptr},
    {"data/delete=exit@2"},                 // while the collector deletes segments
};

TEST(CrashTest, KilledWriterLeavesConsistentFilesystem) {
  std::string bucket = TempPath("bucket");
  std::filesystem::create_directories(bucket);
  for (uint32_t round = 0; round < std::size(kDeaths); ++round) {
    const Death& death = kDeaths[round];
    std::string cache = TempPath("cache");
    std::cout.flush();
    // The child is a fresh exec of this binary: forking a process that ran
    // RocksDB before would copy locks held by threads that do not follow.
    std::string seed = std::to_string(round + 1);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      setenv(kBucketVar, bucket.c_str(), 1);
      setenv(kCacheVar, cache.c_str(), 1);
      setenv(kSeedVar, seed.c_str(), 1);
      if (death.failpoint != nullptr) setenv("PAIL_FAILPOINTS", death.failpoint, 1);
      execl("/proc/self/exe", "fs_test", "--gtest_filter=CrashChild.Churn", nullptr);
      _exit(5);
    }
    int status = 0;
    if (death.failpoint == nullptr) {
      for (int waited = 0; waited < 1200 && !std::filesystem::exists(cache + kReadySuffix); ++waited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1200 + 300 * round));
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
    } else {
      // The failpoint ends it; a child that never reaches it is killed
      // (the round still checks consistency) and reported.
      bool exited = false;
      for (int waited = 0; waited < 300 && !exited; ++waited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        exited = waitpid(child, &status, WNOHANG) == child;
      }
      if (!exited) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        ADD_FAILURE() << "failpoint " << death.failpoint << " never fired";
      } else {
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kFailpointExitCode)
            << death.failpoint << ": child ended with status " << status;
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(cache, ec);
    std::filesystem::remove(cache + kReadySuffix, ec);

    // A new machine: empty cache, everything from the bucket.
    std::string fresh = TempPath("fresh");
    auto store = LocalStore::Open(bucket);
    ASSERT_TRUE(store.ok());
    auto engine = engine::Engine::Open(
        CrashEngineOptions(std::shared_ptr<ObjectStore>(std::move(store).value()), fresh));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    auto report = Fsck(**engine);
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->clean()) << "round " << round;
    for (const auto& p : report->problems) ADD_FAILURE() << "fsck after crash: " << p;
    // The child got far enough to leave real work behind.
    EXPECT_GT(report->inodes, 1u);
    std::cout << "round " << round << " (" << (death.failpoint ? death.failpoint : "SIGKILL")
              << "): " << report->inodes << " inodes, " << report->entries
              << " entries, " << report->chunks << " chunks (" << report->pieces_chunks
              << " as pieces), " << report->orphans
              << " orphans, " << report->pending_reclaims << " pending reclaims" << std::endl;
    {
      auto fs = FileSystem::Open(**engine, CrashFsOptions());
      ASSERT_TRUE(fs.ok()) << fs.status().ToString();
      auto listing = (*fs)->ReadDir(Root(), kRootIno, 0, 0, true);
      EXPECT_TRUE(listing.ok());
      // Long enough for the collector's first round, which deletes the
      // objects the crash left unnamed.
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
      ASSERT_TRUE((*fs)->Close().ok());
    }
    // Opening reclaimed the crash's orphans; wait for nothing: fsck accepts
    // pending reclaims.
    auto after = Fsck(**engine);
    ASSERT_TRUE(after.ok());
    EXPECT_TRUE(after->clean());
    EXPECT_EQ(after->orphans, 0u);
    EXPECT_EQ(after->unregistered_objects, 0u) << "data objects the crash left were not collected";
    for (const auto& p : after->problems) ADD_FAILURE() << "fsck after reopen: " << p;
    ASSERT_TRUE((*engine)->Close().ok());
    std::filesystem::remove_all(fresh, ec);
  }
  std::error_code ec;
  std::filesystem::remove_all(bucket, ec);
}

}  // namespace
}  // namespace pail::fs::testing
