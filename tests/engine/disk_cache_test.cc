#include "engine/disk_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "engine_test_util.h"
#include "objstore/counting_store.h"
#include "objstore/fault_store.h"
#include "objstore/memory_store.h"
#include "util/blocking_hint.h"
#include "util/mutex.h"

namespace pail::engine {
namespace {

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + seed * 13 + (i >> 12)) & 0xff);
  return s;
}

// MemoryStore, under a FaultStore (failures, and a hook that can hold
// requests), under a CountingStore.
struct Stores {
  Stores()
      : memory(std::make_shared<MemoryStore>()),
        fault(std::make_shared<FaultStore>(memory, FaultOptions{})),
        counting(std::make_shared<CountingStore>(fault)) {}
  uint64_t gets() const { return counting->Snapshot().requests[int(OpKind::kGetRange)]; }
  uint64_t bytes_got() const { return counting->Snapshot().bytes[int(OpKind::kGetRange)]; }
  void SetGetErrorRate(double rate) {
    FaultOptions o;
    o.error_rate[int(OpKind::kGetRange)] = rate;
    fault->SetOptions(o);
  }
  std::shared_ptr<MemoryStore> memory;
  std::shared_ptr<FaultStore> fault;
  std::shared_ptr<CountingStore> counting;
};

// Holds ranged GETs (from the FaultStore hook) until `together` of them are
// held at once or Open() is called. Never holds one longer than 5 s, so a
// cache that serializes its requests fails the test rather than hanging it.
class Gate {
 public:
  explicit Gate(int together) : together_(together) {}
  void Enter() {
    MutexLock lock(&mu_);
    ++arrived_;
    ++held_;
    max_held_ = std::max(max_held_, held_);
    changed_.SignalAll();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!open_ && held_ < together_ && std::chrono::steady_clock::now() < deadline) {
      changed_.WaitUntil(deadline);
    }
    if (held_ >= together_) open_ = true;
    --held_;
    changed_.SignalAll();
  }
  void Open() {
    MutexLock lock(&mu_);
    open_ = true;
    changed_.SignalAll();
  }
  void WaitArrivals(int n) {
    MutexLock lock(&mu_);
    while (arrived_ < n) changed_.Wait();
  }
  int max_held() {
    MutexLock lock(&mu_);
    return max_held_;
  }

 private:
  Mutex mu_;
  CondVar changed_{&mu_};
  const int together_;
  int arrived_ GUARDED_BY(mu_) = 0;
  int held_ GUARDED_BY(mu_) = 0;
  int max_held_ GUARDED_BY(mu_) = 0;
  bool open_ GUARDED_BY(mu_) = false;
};

void HoldGets(Stores& stores, Gate* gate) {
  stores.fault->SetHook([gate](OpKind op, const std::string&) {
    if (op == OpKind::kGetRange) gate->Enter();
  });
}

size_t OpenFdCount() {
  size_t n = 0;
  for (auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++n;
  }
  return n;
}

size_t FileCount(const std::string& dir) {
  size_t n = 0;
  for (auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++n;
  }
  return n;
}

TEST(DiskCache, ExtentIsOneEncryptionPage) {
  EXPECT_EQ(kCacheExtentBytes, 64u * 1024);
}

TEST(DiskCache, ReadsFetchMissingExtentsOnceAndStayWithinBudget) {
  pail::testing::TempDir dir;
  auto counting = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  const size_t kSize = 5 * kCacheExtentBytes + 123;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(counting->Put("o" + std::to_string(i), Pattern(kSize, i)).ok());
  DiskCache cache(counting, dir.Sub("cache"), 8 * kCacheExtentBytes);

  std::string buf(3 * kCacheExtentBytes, '\0');
  auto before = counting->Snapshot().requests[int(OpKind::kGetRange)];
  // Spans extents 0..2: one ranged GET.
  auto n = cache.Read("o0", kSize, kCacheExtentBytes - 10, 2 * kCacheExtentBytes, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buf.data(), *n), Pattern(kSize, 0).substr(kCacheExtentBytes - 10, 2 * kCacheExtentBytes));
  EXPECT_EQ(counting->Snapshot().requests[int(OpKind::kGetRange)], before + 1);
  // Cached now: no request.
  n = cache.Read("o0", kSize, kCacheExtentBytes, 100, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(counting->Snapshot().requests[int(OpKind::kGetRange)], before + 1);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
  // The tail is short.
  n = cache.Read("o0", kSize, kSize - 23, 1000, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 23u);
  EXPECT_EQ(std::string(buf.data(), 23), Pattern(kSize, 0).substr(kSize - 23));
  // Extents 0..2 and 5 are present; reading everything fetches 3..4 in one GET.
  before = counting->Snapshot().requests[int(OpKind::kGetRange)];
  std::string whole(kSize, '\0');
  ASSERT_TRUE(cache.Read("o0", kSize, 0, kSize, whole.data()).ok());
  EXPECT_EQ(whole, Pattern(kSize, 0));
  EXPECT_EQ(counting->Snapshot().requests[int(OpKind::kGetRange)], before + 1);

  // Reading everything keeps the cache within its budget, and correct.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 4; ++i) {
      auto r = cache.Read("o" + std::to_string(i), kSize, 0, kSize, whole.data());
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(whole, Pattern(kSize, i));
      EXPECT_LE(cache.cached_bytes(), 8 * kCacheExtentBytes);
    }
  }
  // Evicted objects leave neither files nor descriptors behind.
  EXPECT_EQ(FileCount(dir.Sub("cache")), 1u);
  EXPECT_EQ(cache.open_files(), 1u);
}

// The FUSE request loop relies on a miss saying it will wait before it
// does (util/blocking_hint.h); a hit must not, or every read would hand
// the loop to another thread.
TEST(DiskCache, MissAnnouncesItsWaitBeforeFetchingAndHitDoesNot) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 3 * kCacheExtentBytes;
  ASSERT_TRUE(stores.memory->Put("seg", Pattern(kSize, 4)).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  struct Seen {
    Stores* stores;
    int hints = 0;
    uint64_t gets_at_hint = 0;
  } seen{&stores};
  BlockingHint::Listen(
      [](void* arg) {
        auto* s = static_cast<Seen*>(arg);
        ++s->hints;
        s->gets_at_hint = s->stores->gets();
      },
      &seen);
  std::string buf(4096, '\0');
  ASSERT_TRUE(cache.Read("seg", kSize, 100, buf.size(), buf.data()).ok());
  EXPECT_EQ(seen.hints, 1);
  EXPECT_EQ(seen.gets_at_hint, 0u);  // before the GET, not after
  EXPECT_EQ(stores.gets(), 1u);
  ASSERT_TRUE(cache.Read("seg", kSize, 200, buf.size(), buf.data()).ok());
  EXPECT_EQ(seen.hints, 1);  // a hit
  ASSERT_TRUE(cache.Prefetch("seg", kSize, kCacheExtentBytes, kCacheExtentBytes).ok());
  EXPECT_EQ(seen.hints, 2);  // a prefetch on this thread fetches here too
  // Another thread's listener is its own.
  std::thread other([&] {
    std::string b(4096, '\0');
    ASSERT_TRUE(cache.Read("seg", kSize, 2 * kCacheExtentBytes, b.size(), b.data()).ok());
  });
  other.join();
  EXPECT_EQ(seen.hints, 2);
  BlockingHint::Listen(nullptr, nullptr);
}

// ReadCached serves what is present and nothing else: no request, no
// wait, no file made for an object never read.
TEST(DiskCache, ReadCachedReadsOnlyWhatIsPresent) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 3 * kCacheExtentBytes;
  const std::string data = Pattern(kSize, 5);
  ASSERT_TRUE(stores.memory->Put("seg", data).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  std::string buf(4096, '\0');
  auto r = cache.ReadCached("seg", kSize, 100, buf.size(), buf.data());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(FileCount(dir.Sub("cache")), 0u);
  ASSERT_TRUE(cache.Read("seg", kSize, 100, buf.size(), buf.data()).ok());  // extent 0
  EXPECT_EQ(stores.gets(), 1u);
  r = cache.ReadCached("seg", kSize, 200, buf.size(), buf.data());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r, buf.size());
  EXPECT_EQ(buf, data.substr(200, buf.size()));
  // Reaching into extent 1, which is absent: nothing.
  r = cache.ReadCached("seg", kSize, kCacheExtentBytes - 10, 100, buf.data());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  // Past the end: nothing to read, and that is an answer.
  r = cache.ReadCached("seg", kSize, kSize, 100, buf.data());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r, 0u);
  EXPECT_EQ(stores.gets(), 1u);
}

TEST(DiskCache, MissingObjectIsAnErrorAndLeavesNothingBehind) {
  pail::testing::TempDir dir;
  DiskCache cache(std::make_shared<MemoryStore>(), dir.Sub("cache"), 1 << 20);
  char buf[10];
  auto r = cache.Read("nope", 100, 0, 10, buf);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(cache.Prefetch("nope", 100, 0, 10).ok());
  EXPECT_EQ(cache.cached_bytes(), 0u);
  EXPECT_EQ(cache.open_files(), 0u);
  EXPECT_EQ(FileCount(dir.Sub("cache")), 0u);
}

TEST(DiskCache, ReadersOfDistinctExtentsFetchInParallel) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 8 * kCacheExtentBytes;
  ASSERT_TRUE(stores.memory->Put("seg", Pattern(kSize, 1)).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  Gate gate(8);  // every GET waits until all 8 are in flight at once
  HoldGets(stores, &gate);

  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::string buf(4096, '\0');
      auto r = cache.Read("seg", kSize, t * kCacheExtentBytes + 1000, buf.size(), buf.data());
      if (r.ok()) got[t] = buf.substr(0, *r);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(gate.max_held(), 8);
  EXPECT_EQ(stores.gets(), 8u);
  EXPECT_EQ(cache.misses(), 8u);
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[t], Pattern(kSize, 1).substr(t * kCacheExtentBytes + 1000, 4096));
}

TEST(DiskCache, ReadersOfOneExtentShareOneFetch) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 4 * kCacheExtentBytes;
  ASSERT_TRUE(stores.memory->Put("seg", Pattern(kSize, 2)).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  Gate gate(1000);  // held until opened
  HoldGets(stores, &gate);

  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::string buf(4096, '\0');
      auto r = cache.Read("seg", kSize, kCacheExtentBytes + 512 * t, buf.size(), buf.data());
      if (r.ok()) got[t] = buf.substr(0, *r);
    });
  }
  gate.WaitArrivals(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let the others queue up
  gate.Open();
  for (auto& th : threads) th.join();
  EXPECT_EQ(stores.gets(), 1u);
  EXPECT_EQ(stores.bytes_got(), kCacheExtentBytes);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 7u);
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[t], Pattern(kSize, 2).substr(kCacheExtentBytes + 512 * t, 4096));
}

TEST(DiskCache, RandomConcurrentReadsFetchEachExtentOnce) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 64 * kCacheExtentBytes - 777;
  const std::string data = Pattern(kSize, 3);
  ASSERT_TRUE(stores.memory->Put("seg", data).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 128 * kCacheExtentBytes);

  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::string buf(3 * kCacheExtentBytes, '\0');
      for (int i = 0; i < 200; ++i) {
        uint64_t offset = rng() % kSize;
        size_t n = i % 10 == 0 ? buf.size() : 4096;  // mostly 4 KiB, some spanning extents
        auto r = cache.Read("seg", kSize, offset, n, buf.data());
        if (!r.ok() || std::string_view(buf.data(), *r) != std::string_view(data).substr(offset, n)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  std::string whole(kSize, '\0');
  ASSERT_TRUE(cache.Read("seg", kSize, 0, kSize, whole.data()).ok());
  EXPECT_EQ(whole, data);
  // Every extent came from the bucket exactly once.
  EXPECT_EQ(stores.bytes_got(), kSize);
  EXPECT_EQ(cache.cached_bytes(), kSize);
}

TEST(DiskCache, FailedFetchWakesWaitersWhoFetchThemselves) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 2 * kCacheExtentBytes;
  ASSERT_TRUE(stores.memory->Put("seg", Pattern(kSize, 4)).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  Gate gate(1000);
  std::atomic<int> calls{0};
  stores.fault->SetHook([&](OpKind op, const std::string&) {
    if (op == OpKind::kGetRange && calls++ == 0) gate.Enter();  // hold the first only
  });
  stores.SetGetErrorRate(1.0);  // the first GET is decided to fail

  Status first_status;
  std::thread first([&] {
    char buf[100];
    first_status = cache.Read("seg", kSize, 10, sizeof(buf), buf).status();
  });
  gate.WaitArrivals(1);
  std::vector<std::string> got(4);
  std::vector<std::thread> waiters;
  for (int t = 0; t < 4; ++t) {
    waiters.emplace_back([&, t] {
      std::string buf(100, '\0');
      auto r = cache.Read("seg", kSize, 20 + t, buf.size(), buf.data());
      if (r.ok()) got[t] = buf.substr(0, *r);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // let them wait on the fetch
  stores.SetGetErrorRate(0);
  gate.Open();
  first.join();
  for (auto& th : waiters) th.join();
  EXPECT_FALSE(first_status.ok());
  for (int t = 0; t < 4; ++t) EXPECT_EQ(got[t], Pattern(kSize, 4).substr(20 + t, 100));
  // The failed GET, then one more by whichever waiter claimed the extent.
  EXPECT_EQ(stores.gets(), 2u);
  EXPECT_EQ(cache.cached_bytes(), kCacheExtentBytes);
}

TEST(DiskCache, FailingStoreNeverHangsReaders) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 16 * kCacheExtentBytes + 5;
  const std::string data = Pattern(kSize, 5);
  ASSERT_TRUE(stores.memory->Put("seg", data).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  FaultOptions o;
  o.error_rate[int(OpKind::kGetRange)] = 0.5;
  o.latency = std::chrono::microseconds(500);
  stores.fault->SetOptions(o);

  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      std::string buf(2 * kCacheExtentBytes, '\0');
      for (int i = 0; i < 40; ++i) {
        uint64_t offset = rng() % kSize;
        size_t n = 1 + rng() % buf.size();
        if (i % 4 == 0) {
          (void)cache.Prefetch("seg", kSize, offset, n);  // may fail too
          continue;
        }
        auto r = cache.Read("seg", kSize, offset, n, buf.data());
        if (!r.ok()) {
          ++failed;
        } else if (std::string_view(buf.data(), *r) != std::string_view(data).substr(offset, n)) {
          ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(failed.load(), 0);
  // Healed, everything reads back right.
  stores.SetGetErrorRate(0);
  std::string whole(kSize, '\0');
  ASSERT_TRUE(cache.Read("seg", kSize, 0, kSize, whole.data()).ok());
  EXPECT_EQ(whole, data);
  EXPECT_EQ(cache.cached_bytes(), kSize);
}

TEST(DiskCache, PrefetchedExtentsAreHits) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 16 * kCacheExtentBytes;
  const std::string data = Pattern(kSize, 6);
  ASSERT_TRUE(stores.memory->Put("seg", data).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);

  // Extent 5 present: prefetching 4..7 fetches 4 and 6..7, in two GETs.
  char buf[4096];
  ASSERT_TRUE(cache.Read("seg", kSize, 5 * kCacheExtentBytes, sizeof(buf), buf).ok());
  ASSERT_TRUE(cache.Prefetch("seg", kSize, 4 * kCacheExtentBytes, 4 * kCacheExtentBytes).ok());
  EXPECT_EQ(stores.gets(), 3u);
  EXPECT_EQ(cache.prefetch_requests(), 2u);
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_EQ(cache.misses(), 1u);
  // Prefetching what is present sends nothing.
  ASSERT_TRUE(cache.Prefetch("seg", kSize, 4 * kCacheExtentBytes, 4 * kCacheExtentBytes).ok());
  EXPECT_EQ(stores.gets(), 3u);
  // Reading the prefetched range is a hit.
  std::string got(4 * kCacheExtentBytes, '\0');
  auto r = cache.Read("seg", kSize, 4 * kCacheExtentBytes, got.size(), got.data());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(got, data.substr(4 * kCacheExtentBytes, got.size()));
  EXPECT_EQ(stores.gets(), 3u);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.cached_bytes(), 4 * kCacheExtentBytes);
  // Past the end: nothing to do.
  EXPECT_TRUE(cache.Prefetch("seg", kSize, kSize, 100).ok());
  EXPECT_EQ(stores.gets(), 3u);
}

// A read with a fetch window takes, in its one GET, the absent extents next
// to its own within the aligned window: never one present or being
// fetched, never past the object's end.
TEST(DiskCache, MissFetchesTheAbsentExtentsOfItsWindow) {
  pail::testing::TempDir dir;
  Stores stores;
  const uint64_t kExtent = kCacheExtentBytes;
  const uint64_t kWindow = 8 * kExtent;
  const size_t kSize = 20 * kExtent + 100;  // extents 0..20, the last short
  const std::string data = Pattern(kSize, 9);
  ASSERT_TRUE(stores.memory->Put("sst", data).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kExtent);
  char buf[100];
  auto read = [&](uint64_t offset, uint64_t window) {
    auto r = cache.Read("sst", kSize, offset, sizeof(buf), buf, window);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(std::string(buf, *r), data.substr(offset, sizeof(buf)));
  };

  // A miss in extent 3: its window is extents 0..7, all fetched at once.
  read(3 * kExtent + 10, kWindow);
  EXPECT_EQ(stores.gets(), 1u);
  EXPECT_EQ(stores.bytes_got(), kWindow);
  read(0, kWindow);
  read(7 * kExtent + 500, kWindow);
  EXPECT_EQ(stores.gets(), 1u);

  // Extent 12 present: a miss in extent 10 takes 8..11 and stops there.
  read(12 * kExtent, 0);
  EXPECT_EQ(stores.gets(), 2u);
  read(10 * kExtent, kWindow);
  EXPECT_EQ(stores.gets(), 3u);
  EXPECT_EQ(stores.bytes_got(), kWindow + kExtent + 4 * kExtent);
  read(8 * kExtent, 0);
  read(11 * kExtent, 0);
  EXPECT_EQ(stores.gets(), 3u);

  // The last window (16..23) ends with the object: 16..20 in one GET.
  read(20 * kExtent, kWindow);
  EXPECT_EQ(stores.gets(), 4u);
  EXPECT_EQ(stores.bytes_got(), kWindow + 5 * kExtent + 4 * kExtent + 100);

  // Only 13..15 are absent now; without a window they come in one GET.
  std::string whole(kSize, '\0');
  ASSERT_TRUE(cache.Read("sst", kSize, 0, kSize, whole.data()).ok());
  EXPECT_EQ(whole, data);
  EXPECT_EQ(stores.gets(), 5u);
  EXPECT_EQ(cache.cached_bytes(), kSize);
}

TEST(DiskCache, ReadWaitsForPrefetchInFlight) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 16 * kCacheExtentBytes;
  const std::string data = Pattern(kSize, 7);
  ASSERT_TRUE(stores.memory->Put("seg", data).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  Gate gate(1000);
  HoldGets(stores, &gate);

  Status prefetch;
  std::thread ahead([&] { prefetch = cache.Prefetch("seg", kSize, 0, 8 * kCacheExtentBytes); });
  gate.WaitArrivals(1);
  std::string got(4096, '\0');
  Result<size_t> r = size_t{0};
  std::thread reader([&] { r = cache.Read("seg", kSize, 3 * kCacheExtentBytes, got.size(), got.data()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  gate.Open();
  ahead.join();
  reader.join();
  ASSERT_TRUE(prefetch.ok());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(got, data.substr(3 * kCacheExtentBytes, 4096));
  EXPECT_EQ(stores.gets(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 0u);
}

TEST(DiskCache, EvictionUnderConcurrentReadsKeepsBytesRight) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 6 * kCacheExtentBytes + 99;
  std::vector<std::string> data;
  for (int i = 0; i < 6; ++i) {
    data.push_back(Pattern(kSize, 10 + i));
    ASSERT_TRUE(stores.memory->Put("o" + std::to_string(i), data.back()).ok());
  }
  // Smaller than one object: nearly every read ends with an eviction.
  DiskCache cache(stores.counting, dir.Sub("cache"), 2 * kCacheExtentBytes);

  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(200 + t);
      std::string buf(3 * kCacheExtentBytes, '\0');
      for (int i = 0; i < 100; ++i) {
        int o = static_cast<int>(rng() % 6);
        uint64_t offset = rng() % kSize;
        size_t n = 1 + rng() % buf.size();
        if (i % 5 == 0) (void)cache.Prefetch("o" + std::to_string(o), kSize, offset, n);
        auto r = cache.Read("o" + std::to_string(o), kSize, offset, n, buf.data());
        if (!r.ok() || std::string_view(buf.data(), *r) != std::string_view(data[o]).substr(offset, n)) {
          ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(cache.cached_bytes(), 2 * kCacheExtentBytes);
  EXPECT_LE(FileCount(dir.Sub("cache")), 2u);
}

TEST(DiskCache, OpenFilesAreBounded) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 2 * kCacheExtentBytes;
  const int kObjects = 40;
  std::vector<std::string> data;
  for (int i = 0; i < kObjects; ++i) {
    data.push_back(Pattern(kSize, i));
    ASSERT_TRUE(stores.memory->Put("o" + std::to_string(i), data.back()).ok());
  }
  size_t fds_before = OpenFdCount();
  DiskCache cache(stores.counting, dir.Sub("cache"), 1 << 30, /*max_open_files=*/4);
  std::string buf(kSize, '\0');
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE(cache.Read("o" + std::to_string(i), kSize, 0, kSize, buf.data()).ok());
    EXPECT_LE(cache.open_files(), 4u);
  }
  EXPECT_LE(OpenFdCount(), fds_before + 4);
  EXPECT_EQ(cache.cached_bytes(), kObjects * kSize);
  // Closed files are reopened, their extents still present: no request.
  uint64_t gets = stores.gets();
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_TRUE(cache.Read("o" + std::to_string(i), kSize, 0, kSize, buf.data()).ok());
    EXPECT_EQ(buf, data[i]);
  }
  EXPECT_EQ(stores.gets(), gets);
  EXPECT_LE(OpenFdCount(), fds_before + 4);

  // Concurrent readers, more than the bound: descriptors in use are never
  // closed under them.
  DiskCache tight(stores.counting, dir.Sub("tight"), 1 << 30, /*max_open_files=*/1);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(400 + t);
      std::string got(kSize, '\0');
      for (int i = 0; i < 100; ++i) {
        int o = static_cast<int>(rng() % kObjects);
        uint64_t offset = rng() % kSize;
        auto r = tight.Read("o" + std::to_string(o), kSize, offset, kSize, got.data());
        if (!r.ok() || std::string_view(got.data(), *r) != std::string_view(data[o]).substr(offset)) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(tight.open_files(), 1u);
  EXPECT_LE(OpenFdCount(), fds_before + 4 + 1);
}

TEST(DiskCache, RemoveIsSafeWithConcurrentReaders) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 8 * kCacheExtentBytes;
  const std::string data = Pattern(kSize, 8);
  ASSERT_TRUE(stores.memory->Put("seg", data).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);

  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(300 + t);
      std::string buf(2 * kCacheExtentBytes, '\0');
      while (!stop) {
        uint64_t offset = rng() % kSize;
        size_t n = 1 + rng() % buf.size();
        auto r = cache.Read("seg", kSize, offset, n, buf.data());
        if (!r.ok() || std::string_view(buf.data(), *r) != std::string_view(data).substr(offset, n)) ++wrong;
      }
    });
  }
  for (int i = 0; i < 50; ++i) {
    cache.Remove("seg");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  stop = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  cache.Remove("seg");
  EXPECT_EQ(cache.cached_bytes(), 0u);
  EXPECT_EQ(cache.open_files(), 0u);
  EXPECT_EQ(FileCount(dir.Sub("cache")), 0u);
}

TEST(DiskCache, CompleteFilesAreServedLocally) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 3 * kCacheExtentBytes + 10;
  const std::string data = Pattern(kSize, 9);
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  std::ofstream(cache.PathFor("sst/1"), std::ios::binary) << data;
  cache.AddComplete("sst/1", kSize);
  EXPECT_EQ(cache.cached_bytes(), kSize);
  std::string got(kSize, '\0');
  auto r = cache.Read("sst/1", kSize, 0, kSize, got.data());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(got, data);
  // A caller claiming a larger size reads no further than the object.
  r = cache.Read("sst/1", kSize + 5 * kCacheExtentBytes, kSize - 10, 100, got.data());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 10u);
  r = cache.Read("sst/1", kSize + 5 * kCacheExtentBytes, kSize + 1, 100, got.data());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 0u);
  EXPECT_EQ(stores.gets(), 0u);
  EXPECT_EQ(cache.hits(), 2u);
  // A registered file that does not exist is simply not cached.
  cache.AddComplete("sst/2", 100);
  EXPECT_EQ(cache.cached_bytes(), kSize);
  cache.Remove("sst/1");
  EXPECT_EQ(cache.cached_bytes(), 0u);
  EXPECT_FALSE(std::filesystem::exists(cache.PathFor("sst/1")));
}

// The cache holds copies only: a disk that fills (here a tmpfs, by another
// file) must not fail reads. Nor does a budget larger than the disk.
TEST(DiskCache, FullDiskServesReadsFromTheBucketAndGivesWay) {
  pail::testing::SmallDisk disk(2 << 20);
  if (!disk.error().empty()) GTEST_SKIP() << disk.error();
  Stores stores;
  const size_t kSize = 8 * kCacheExtentBytes;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(stores.memory->Put("o" + std::to_string(i), Pattern(kSize, i)).ok());
  DiskCache cache(stores.counting, disk.Sub("cache"), 1 << 30, kCacheMaxOpenFiles,
                  std::chrono::milliseconds(300));
  // Capped at three quarters of the 2 MiB free at start.
  EXPECT_LE(cache.budget(), (2u << 20) * 3 / 4);
  EXPECT_GE(cache.budget(), (2u << 20) / 2);
  std::string got(kSize, '\0');
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(cache.Read("o" + std::to_string(i), kSize, 0, kSize, got.data()).ok());
  }
  const uint64_t held = cache.cached_bytes();
  EXPECT_EQ(held, 2 * kSize);

  // Another file takes the disk: fetches into the cache now fail locally.
  disk.FillLeaving(0);
  for (int i = 0; i < 6; ++i) {
    const std::string key = "o" + std::to_string(i);
    auto r = cache.Read(key, kSize, 100, kSize - 200, got.data());
    ASSERT_TRUE(r.ok()) << key << ": " << r.status().ToString();
    ASSERT_EQ(std::string(got.data(), *r), Pattern(kSize, i).substr(100, kSize - 200)) << key;
  }
  EXPECT_EQ(cache.local_failures(), 1u);  // the first miss; the rest went straight to the bucket
  EXPECT_TRUE(cache.paused());
  // It gave a quarter back.
  EXPECT_LE(cache.cached_bytes(), held - held / 4);
  // Paused: a miss keeps nothing, a prefetch fetches nothing.
  const uint64_t gets = stores.gets();
  ASSERT_TRUE(cache.Prefetch("o5", kSize, 0, kSize).ok());
  EXPECT_EQ(stores.gets(), gets);

  // Room again, and the pause over: the cache keeps what it fetches.
  disk.Empty();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_FALSE(cache.paused());
  ASSERT_TRUE(cache.Read("o5", kSize, 0, kSize, got.data()).ok());
  EXPECT_EQ(got, Pattern(kSize, 5));
  const uint64_t hits = cache.hits();
  ASSERT_TRUE(cache.Read("o5", kSize, 0, kSize, got.data()).ok());
  EXPECT_EQ(cache.hits(), hits + 1);
  EXPECT_EQ(cache.local_failures(), 1u);
}

// A cache file that cannot even be created (the disk's inodes, or the
// process's descriptors, are used up) is a local failure too.
TEST(DiskCache, CacheFileThatCannotBeCreatedIsALocalFailure) {
  pail::testing::TempDir dir;
  Stores stores;
  const size_t kSize = 2 * kCacheExtentBytes;
  ASSERT_TRUE(stores.memory->Put("o", Pattern(kSize, 1)).ok());
  DiskCache cache(stores.counting, dir.Sub("cache"), 64 * kCacheExtentBytes);
  // The directory is gone (as if removed by hand): creating a file fails.
  std::filesystem::remove_all(dir.Sub("cache"));
  std::string got(kSize, '\0');
  auto r = cache.Read("o", kSize, 0, kSize, got.data());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(got, Pattern(kSize, 1));
  EXPECT_EQ(cache.local_failures(), 1u);
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

}  // namespace
}  // namespace pail::engine
