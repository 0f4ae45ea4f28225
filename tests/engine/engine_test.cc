#include "engine/engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <thread>

#include <rocksdb/metadata.h>

#include "engine/bucket_layout.h"
#include "engine/data_objects.h"
#include "engine_test_util.h"
#include "objstore/counting_store.h"
#include "objstore/local_store.h"
#include "objstore/memory_store.h"
#include "util/blocking_hint.h"

namespace pail::engine {
namespace {

using pail::testing::TempDir;
using pail::testing::TestEngineOptions;

std::string Get(Engine& e, const std::string& cf, const std::string& key) {
  std::string value;
  rocksdb::Status s = e.db()->Get(rocksdb::ReadOptions(), e.column_family(cf), key, &value);
  return s.ok() ? value : "<" + s.ToString() + ">";
}

void Put(Engine& e, const std::string& cf, const std::string& key, const std::string& value) {
  rocksdb::WriteBatch batch;
  batch.Put(e.column_family(cf), key, value);
  ASSERT_TRUE(e.Write(&batch).ok());
}

// `n` incompressible bytes, the same for the same seed: tables and objects
// made of them are as big as what they hold.
std::string RandomBytes(size_t n, uint32_t seed) {
  std::string bytes(n, '\0');
  std::mt19937 random(seed);
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

// Keys "k<first>".. of 1000 random bytes each into "meta", in one batch.
Status PutRandomKeys(Engine& e, int first, int count) {
  rocksdb::WriteBatch batch;
  for (int i = first; i < first + count; ++i) {
    batch.Put(e.column_family("meta"), "k" + std::to_string(i), RandomBytes(1000, i));
  }
  return e.Write(&batch);
}

// Flushes "meta", again every 50 ms while it fails (the engine's flusher
// resumes RocksDB after a background error), for at most 5 s.
rocksdb::Status FlushOnceItCan(Engine& e) {
  rocksdb::Status flushed;
  for (int attempt = 0; attempt < 100; ++attempt) {
    flushed = e.db()->Flush(rocksdb::FlushOptions(), e.column_family("meta"));
    if (flushed.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return flushed;
}

class EngineRoundTrip : public ::testing::TestWithParam<std::string> {
 protected:
  std::shared_ptr<ObjectStore> MakeStore() {
    if (GetParam() == "memory") return std::make_shared<MemoryStore>();
    auto s = LocalStore::Open(dir_.Sub("bucket"));
    return std::shared_ptr<ObjectStore>(std::move(*s));
  }
  TempDir dir_;
};

TEST_P(EngineRoundTrip, ReopenWithEmptyCacheReturnsEveryKey) {
  auto store = MakeStore();
  const int kKeys = 3000;
  {
    auto engine = Engine::Open(TestEngineOptions(store, dir_.Sub("cache1")));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    for (int i = 0; i < kKeys; ++i) {
      Put(**engine, "meta", "k" + std::to_string(i), "v" + std::to_string(i));
      if (i % 7 == 0) Put(**engine, "data", "d" + std::to_string(i), std::string(40000, char('a' + i % 26)));
    }
    // Force SSTs and blob files too, not only WAL parts.
    ASSERT_TRUE((*engine)->db()->Flush(rocksdb::FlushOptions(), (*engine)->column_family("data")).ok());
    for (int i = 0; i < 100; ++i) Put(**engine, "meta", "late" + std::to_string(i), "x");
    ASSERT_TRUE((*engine)->Close().ok());
  }
  auto engine = Engine::Open(TestEngineOptions(store, dir_.Sub("cache2")));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(Get(**engine, "meta", "k" + std::to_string(i)), "v" + std::to_string(i));
    if (i % 7 == 0) {
      ASSERT_EQ(Get(**engine, "data", "d" + std::to_string(i)), std::string(40000, char('a' + i % 26)));
    }
  }
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Get(**engine, "meta", "late" + std::to_string(i)), "x");
  // A third open, again from nothing, after the second wrote its own state.
  Put(**engine, "meta", "second", "yes");
  ASSERT_TRUE((*engine)->Close().ok());
  auto third = Engine::Open(TestEngineOptions(store, dir_.Sub("cache3")));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(Get(**third, "meta", "second"), "yes");
  EXPECT_EQ(Get(**third, "meta", "k42"), "v42");
}

TEST_P(EngineRoundTrip, SyncMakesWritesDurableWithoutClose) {
  auto store = MakeStore();
  auto engine = Engine::Open(TestEngineOptions(store, dir_.Sub("cache1")));
  ASSERT_TRUE(engine.ok());
  Put(**engine, "meta", "a", "1");
  ASSERT_TRUE((*engine)->Sync().ok());
  // A second process takes over without the first closing (as after a crash).
  auto second = Engine::Open(TestEngineOptions(store, dir_.Sub("cache2")));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(Get(**second, "meta", "a"), "1");
}

INSTANTIATE_TEST_SUITE_P(Stores, EngineRoundTrip, ::testing::Values("memory", "file"),
                         [](const auto& info) { return info.param; });

TEST(Engine, IdleEngineMakesNoRequests) {
  TempDir dir;
  auto counting = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  auto engine = Engine::Open(TestEngineOptions(counting, dir.Sub("cache")));
  ASSERT_TRUE(engine.ok());
  Put(**engine, "meta", "a", "1");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // periodic flush runs
  uint64_t before = counting->Snapshot().total_requests();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // ten idle flush intervals
  EXPECT_EQ(counting->Snapshot().total_requests(), before);
}

// An engine that uploads only when synced, over a store counting requests.
struct SyncOnlyEngine {
  TempDir dir;
  std::shared_ptr<CountingStore> counting =
      std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  std::unique_ptr<Engine> engine;

  SyncOnlyEngine() {
    auto options = TestEngineOptions(counting, dir.Sub("cache"));
    options.flush_interval = std::chrono::hours(1);
    auto opened = Engine::Open(options);
    EXPECT_TRUE(opened.ok());
    if (opened.ok()) engine = std::move(*opened);
  }
  // WAL parts (and other put-if-absent objects) uploaded so far.
  uint64_t Parts() { return counting->Snapshot().requests[int(OpKind::kPutIfAbsent)]; }
};

TEST(Engine, ConcurrentSyncsAreGrouped) {
  SyncOnlyEngine e;
  ASSERT_NE(e.engine, nullptr);
  const uint64_t before = e.Parts();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        Put(*e.engine, "meta", std::to_string(t) + "-" + std::to_string(i), "v");
        ASSERT_TRUE(e.engine->Sync().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  const uint64_t parts = e.Parts() - before;
  EXPECT_LE(parts, 160u);  // never more than one per Sync call
  EXPECT_GT(parts, 0u);
}

// SyncThrough(n) uploads only writes up to n that no upload carried yet:
// a caller noting the sequence of each file's last change pays nothing to
// sync a file that has not changed since.
TEST(Engine, SyncThroughUploadsOnlyWhatNoUploadCarried) {
  SyncOnlyEngine e;
  ASSERT_NE(e.engine, nullptr);
  rocksdb::DB* db = e.engine->db();
  Put(*e.engine, "meta", "a", "1");
  const uint64_t after_a = db->GetLatestSequenceNumber();
  Put(*e.engine, "meta", "b", "2");
  const uint64_t after_b = db->GetLatestSequenceNumber();

  uint64_t parts = e.Parts();
  ASSERT_TRUE(e.engine->SyncThrough(after_a).ok());
  EXPECT_EQ(e.Parts(), parts + 1) << "a was not in the bucket yet";
  parts = e.Parts();
  // That upload carried b as well (it publishes everything written).
  ASSERT_TRUE(e.engine->SyncThrough(after_b).ok());
  ASSERT_TRUE(e.engine->SyncThrough(after_a).ok());
  ASSERT_TRUE(e.engine->SyncThrough(0).ok());
  EXPECT_EQ(e.Parts(), parts);

  Put(*e.engine, "meta", "c", "3");
  ASSERT_TRUE(e.engine->SyncThrough(after_b).ok());
  EXPECT_EQ(e.Parts(), parts) << "c is not asked for";
  ASSERT_TRUE(e.engine->Sync().ok());
  EXPECT_EQ(e.Parts(), parts + 1);
  ASSERT_TRUE(e.engine->Sync().ok());
  EXPECT_EQ(e.Parts(), parts + 1) << "nothing written since the last upload";
}

// A sync says nothing to the FUSE request loop: handing the loop on at
// the start of every sync made fsync 3-4x slower and concurrent renames up
// to half as fast under stress-ng (docs/benchmarks.md); the loop's watchdog
// hands a long sync on instead.
TEST(Engine, SyncGivesNoBlockingHint) {
  SyncOnlyEngine e;
  ASSERT_NE(e.engine, nullptr);
  int hints = 0;
  BlockingHint::Listen([](void* arg) { ++*static_cast<int*>(arg); }, &hints);
  const uint64_t before = e.Parts();
  Put(*e.engine, "meta", "k", "v");
  ASSERT_TRUE(e.engine->Sync().ok());
  BlockingHint::Listen(nullptr, nullptr);
  // The sync did wait for the bucket (a WAL part went up), and said nothing.
  EXPECT_GT(e.Parts(), before);
  EXPECT_EQ(hints, 0);
}

TEST(Engine, BadCompressionIsRefused) {
  TempDir dir;
  auto options = TestEngineOptions(std::make_shared<MemoryStore>(), dir.Sub("cache"));
  options.compression = "brotli";
  auto engine = Engine::Open(options);
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.status().message().find("zstd-N"), std::string::npos);
}

}  // namespace
}  // namespace pail::engine

namespace pail::engine {
namespace {

size_t CountObjects(ObjectStore& store, const std::string& suffix) {
  auto all = ListAll(store, kDbPrefix);
  size_t n = 0;
  for (auto& meta : *all) {
    if (meta.key.size() >= suffix.size() && meta.key.compare(meta.key.size() - suffix.size(), suffix.size(), suffix) == 0) ++n;
  }
  return n;
}

void FillAndFlush(Engine& e, int round) {
  for (int i = 0; i < 500; ++i) {
    rocksdb::WriteBatch batch;
    batch.Put(e.column_family("meta"), "key" + std::to_string(i), "round" + std::to_string(round));
    ASSERT_TRUE(e.Write(&batch).ok());
  }
  ASSERT_TRUE(e.db()->Flush(rocksdb::FlushOptions(), e.column_family("meta")).ok());
}

TEST(EngineGarbage, ObsoleteObjectsAreDeletedFromTheBucket) {
  pail::testing::TempDir dir;
  auto store = std::make_shared<MemoryStore>();
  auto engine = Engine::Open(pail::testing::TestEngineOptions(store, dir.Sub("cache")));
  ASSERT_TRUE(engine.ok());
  for (int round = 0; round < 6; ++round) FillAndFlush(**engine, round);
  ASSERT_TRUE((*engine)->db()->CompactRange(rocksdb::CompactRangeOptions(), (*engine)->column_family("meta"),
                                            nullptr, nullptr).ok());
  ASSERT_TRUE((*engine)->Close().ok());
  std::vector<rocksdb::LiveFileMetaData> live;
  auto reopened = Engine::Open(pail::testing::TestEngineOptions(store, dir.Sub("cache2")));
  ASSERT_TRUE(reopened.ok());
  (*reopened)->db()->GetLiveFilesMetaData(&live);
  ASSERT_TRUE((*reopened)->Close().ok());
  // Every SST in the bucket is live: compaction inputs are gone.
  EXPECT_EQ(CountObjects(*store, ".sst"), live.size());
}

TEST(EngineGarbage, FencedWriterDeletesNothing) {
  pail::testing::TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  auto first_view = std::make_shared<CountingStore>(memory);
  auto first = Engine::Open(pail::testing::TestEngineOptions(first_view, dir.Sub("a")));
  ASSERT_TRUE(first.ok());
  for (int round = 0; round < 4; ++round) FillAndFlush(**first, round);
  ASSERT_TRUE((*first)->Sync().ok());

  auto second = Engine::Open(pail::testing::TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_TRUE(second.ok());
  uint64_t deletes_before = first_view->Snapshot().requests[int(OpKind::kDelete)];
  // The first, unaware, compacts: its inputs become obsolete to it.
  (*first)->db()->CompactRange(rocksdb::CompactRangeOptions(), (*first)->column_family("meta"), nullptr,
                               nullptr);
  rocksdb::WriteBatch batch;
  batch.Put((*first)->column_family("meta"), "late", "x");
  // Accepted into memory or already refused: the Sync below must fail either way.
  (void)(*first)->Write(&batch);
  EXPECT_TRUE((*first)->Sync().IsFenced());
  // A fenced engine's Close reports the fence; there is nothing more to check.
  (void)(*first)->Close();
  EXPECT_EQ(first_view->Snapshot().requests[int(OpKind::kDelete)], deletes_before);

  // The second still reads everything it took over.
  for (int i = 0; i < 500; ++i) {
    std::string value;
    ASSERT_TRUE((*second)->db()->Get(rocksdb::ReadOptions(), (*second)->column_family("meta"),
                                     "key" + std::to_string(i), &value).ok());
    EXPECT_EQ(value, "round3");
  }
  ASSERT_TRUE((*second)->Close().ok());
  auto third = Engine::Open(pail::testing::TestEngineOptions(memory, dir.Sub("c")));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  std::string value;
  EXPECT_TRUE((*third)->db()->Get(rocksdb::ReadOptions(), (*third)->column_family("meta"), "key7", &value).ok());
  EXPECT_TRUE((*third)->db()->Get(rocksdb::ReadOptions(), (*third)->column_family("meta"), "late", &value).IsNotFound());
}

TEST(BucketLayout, KeysRoundTrip) {
  auto k = ParseDbKey(FileKey(7, "000012.sst"));
  ASSERT_TRUE(k);
  EXPECT_EQ(k->epoch, 7u);
  EXPECT_FALSE(k->is_wal_part);
  EXPECT_EQ(k->file, "000012.sst");
  auto w = ParseDbKey(WalPartKey(3, 99));
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->is_wal_part);
  EXPECT_EQ(w->wal_seq, 99u);
  EXPECT_EQ(*ParseFenceKey(FenceKey(12)), 12u);
  EXPECT_FALSE(ParseDbKey("db/12/x"));
  EXPECT_FALSE(ParseDbKey("db/" + PadNumber(1) + "/wal/abc"));
  EXPECT_FALSE(ParseFenceKey("fence/1"));
  EXPECT_LT(FenceKey(9), FenceKey(10));  // byte order is numeric order
}

}  // namespace
}  // namespace pail::engine

namespace pail::engine {
namespace {

TEST(Engine, ACacheDirServesOneProcessAtATime) {
  pail::testing::TempDir dir;
  auto store = std::make_shared<MemoryStore>();
  auto first = Engine::Open(pail::testing::TestEngineOptions(store, dir.Sub("cache")));
  ASSERT_TRUE(first.ok());
  auto second = Engine::Open(pail::testing::TestEngineOptions(store, dir.Sub("cache")));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use by another pailfs process"), std::string::npos);
  ASSERT_TRUE((*first)->Close().ok());
}

}  // namespace
}  // namespace pail::engine

namespace pail::engine {
namespace {

TEST(Engine, OpenCostDoesNotGrowWithPastCleanRestarts) {
  pail::testing::TempDir dir;
  auto counting = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  std::vector<uint64_t> gets;
  for (int run = 0; run < 8; ++run) {
    auto before = counting->Snapshot();
    auto engine = Engine::Open(pail::testing::TestEngineOptions(counting, dir.Sub("c" + std::to_string(run))));
    ASSERT_TRUE(engine.ok());
    auto after = counting->Snapshot();
    gets.push_back(after.requests[int(OpKind::kGet)] - before.requests[int(OpKind::kGet)]);
    rocksdb::WriteBatch batch;
    batch.Put((*engine)->column_family("meta"), "run", std::to_string(run));
    ASSERT_TRUE((*engine)->Write(&batch).ok());
    ASSERT_TRUE((*engine)->Sync().ok());
    ASSERT_TRUE((*engine)->Close().ok());
  }
  // Each past epoch is sealed and collected: reading it again costs nothing.
  EXPECT_EQ(gets[7], gets[3]);
  EXPECT_LE(gets[7], 4u);  // CURRENT, its MANIFEST and what RocksDB reads at open
}

// An SST with more keys than its whole filter could keep in one cache
// shard (about 800 KiB here) is still looked up through the cache: index
// and filter come in small partitions, so lookups after the first few do
// not read the filter again. Whole, it was read and checksummed on every
// lookup once it left level 0.
TEST(Engine, LookupsInABigSstDoNotRereadItsFilter) {
  pail::testing::TempDir dir;
  auto engine = Engine::Open(
      pail::testing::TestEngineOptions(std::make_shared<MemoryStore>(), dir.Sub("cache")));
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  constexpr int kKeys = 800000;
  auto key = [](int i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "k%07d", i);
    return std::string(buf);
  };
  for (int i = 0; i < kKeys;) {
    rocksdb::WriteBatch batch;
    for (int end = i + 20000; i < end; ++i) batch.Put(e.column_family("meta"), key(i), "v");
    ASSERT_TRUE(e.Write(&batch).ok());
  }
  // Rewritten out of level 0, whose filters are pinned whatever their size.
  rocksdb::CompactRangeOptions rewrite;
  rewrite.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(e.db()->CompactRange(rewrite, e.column_family("meta"), nullptr, nullptr).ok());
  const int kLookups = 2000;
  const uint64_t misses = e.stats().block_cache_misses;
  for (int i = 0; i < kLookups; ++i) {
    // Absent keys between present ones: only the filter answers them.
    EXPECT_EQ(Get(e, "meta", key(i * 397 % kKeys) + "x").rfind("<NotFound", 0), 0u);
  }
  EXPECT_LT(e.stats().block_cache_misses - misses, static_cast<uint64_t>(kLookups / 2));
  EXPECT_EQ(Get(e, "meta", key(12345)), "v");
  ASSERT_TRUE(e.Close().ok());
}

// Memtables count against the memory budget: they are charged to the block
// cache and flushed within its share, so writing five times that share keeps
// them within it; the cache's usage includes them. Uncounted (the old 64 MiB
// memtables per column family), they grew past the whole budget.
TEST(Engine, MemtablesStayWithinTheBlockCacheShare) {
  pail::testing::TempDir dir;
  auto engine = Engine::Open(
      pail::testing::TestEngineOptions(std::make_shared<MemoryStore>(), dir.Sub("cache")));
  ASSERT_TRUE(engine.ok());
  Engine& e = **engine;
  const uint64_t capacity = e.stats().block_cache_capacity;
  ASSERT_GT(capacity, 0u);
  const std::string value(1000, 'v');
  uint64_t peak_memtables = 0;
  bool charged = false;
  for (uint64_t written = 0, key = 0; written < 5 * capacity;) {
    rocksdb::WriteBatch batch;
    for (int i = 0; i < 256; ++i, ++key, written += value.size()) {
      batch.Put(e.column_family("meta"), "k" + std::to_string(key), value);
    }
    ASSERT_TRUE(e.Write(&batch).ok());
    const EngineStats st = e.stats();
    peak_memtables = std::max(peak_memtables, st.memtable_bytes);
    if (st.memtable_bytes > (1u << 20) && st.block_cache_bytes >= st.memtable_bytes) charged = true;
  }
  EXPECT_LE(peak_memtables, capacity);
  EXPECT_GT(peak_memtables, capacity / 8);  // they were used, not bypassed
  EXPECT_TRUE(charged) << "the block cache's usage never included the memtables";
  EXPECT_EQ(Get(e, "meta", "k0"), value);
  ASSERT_TRUE(e.Close().ok());
}

// A column family marked warm_after_open has its tables read into the disk
// cache after open: lookups in it then send no GET, while the other column
// family's still fetch their blocks. The warm-up stays within a quarter of
// the disk cache.
TEST(Engine, WarmColumnFamilyIsReadIntoTheCacheAfterOpen) {
  pail::testing::TempDir dir;
  auto counting = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  auto options = [&](const std::string& cache, uint64_t disk_cache_bytes) {
    EngineOptions o = pail::testing::TestEngineOptions(counting, dir.Sub(cache));
    o.column_families[0].warm_after_open = true;  // "meta"; "data" is not
    o.disk_cache_bytes = disk_cache_bytes;
    return o;
  };
  constexpr int kKeys = 60000;
  auto key = [](int i) { return "k" + std::to_string(i * 7919 % kKeys); };
  // Incompressible, so the tables are bigger than what RocksDB reads of
  // each at open (its tail).
  auto value = [](int i) { return RandomBytes(100, i); };
  {
    auto engine = Engine::Open(options("c0", 64 << 20));
    ASSERT_TRUE(engine.ok());
    Engine& e = **engine;
    for (int i = 0; i < kKeys;) {
      rocksdb::WriteBatch batch;
      for (int end = i + 5000; i < end; ++i) {
        batch.Put(e.column_family("meta"), key(i), value(i));
        batch.Put(e.column_family("data"), key(i), value(i));
      }
      ASSERT_TRUE(e.Write(&batch).ok());
      if (i % 20000 == 0) {
        ASSERT_TRUE(e.db()->Flush(rocksdb::FlushOptions(), e.column_family("meta")).ok());
      }
    }
    ASSERT_TRUE(e.Close().ok());
  }
  auto gets = [&] { return counting->Snapshot().requests[int(OpKind::kGetRange)]; };
  auto wait_for_warm_up = [](Engine& e) {
    for (int i = 0; i < 1000 && e.stats().warming; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(e.stats().warming);
  };
  {
    auto engine = Engine::Open(options("c1", 64 << 20));
    ASSERT_TRUE(engine.ok());
    Engine& e = **engine;
    wait_for_warm_up(e);
    std::vector<rocksdb::LiveFileMetaData> tables;
    e.db()->GetLiveFilesMetaData(&tables);
    uint64_t meta_bytes = 0;
    for (const auto& t : tables) {
      if (t.column_family_name == "meta") meta_bytes += t.size;
    }
    ASSERT_GT(meta_bytes, 0u);
    EXPECT_EQ(e.stats().warmed_bytes, meta_bytes);
    const uint64_t before = gets();
    for (int i = 0; i < kKeys; i += 97) ASSERT_EQ(Get(e, "meta", key(i)), value(i));
    EXPECT_EQ(gets(), before);
    for (int i = 0; i < kKeys; i += 97) ASSERT_EQ(Get(e, "data", key(i)), value(i));
    EXPECT_GT(gets(), before);
    ASSERT_TRUE(e.Close().ok());
  }
  {
    // A disk cache whose quarter holds less than the tables: within it.
    const uint64_t small_cache = 1 << 20;
    auto engine = Engine::Open(options("c2", small_cache));
    ASSERT_TRUE(engine.ok());
    wait_for_warm_up(**engine);
    EXPECT_LE((*engine)->stats().warmed_bytes, small_cache / 4);
    ASSERT_TRUE((*engine)->Close().ok());
  }
}

// The disk cache shares its disk with the tables RocksDB writes before they
// are uploaded. When the disk is full (here the cache's copies of tables
// and another file fill a small tmpfs), a table write makes the cache give
// way instead of failing the flush, and what the cache gave up is read
// from the bucket again.
TEST(Engine, FullDiskMakesTheCacheGiveWayToTables) {
  pail::testing::SmallDisk disk(8 << 20);
  if (!disk.error().empty()) GTEST_SKIP() << disk.error();
  auto engine = Engine::Open(
      pail::testing::TestEngineOptions(std::make_shared<MemoryStore>(), disk.Sub("cache")));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  auto write_and_flush = [&](int first, int count) {
    ASSERT_TRUE(PutRandomKeys(e, first, count).ok());
    rocksdb::Status s = e.db()->Flush(rocksdb::FlushOptions(), e.column_family("meta"));
    ASSERT_TRUE(s.ok()) << s.ToString();
  };
  // Three tables of about 1 MiB, uploaded and kept by the cache.
  for (int t = 0; t < 3; ++t) write_and_flush(t * 1000, 1000);
  EXPECT_GT(e.stats().disk_cache_bytes, 2u << 20);
  disk.FillLeaving(0);
  write_and_flush(3000, 1000);
  EXPECT_GE(e.stats().disk_cache_local_failures, 1u);
  for (int i = 0; i < 4000; i += 97) ASSERT_EQ(Get(e, "meta", "k" + std::to_string(i)), RandomBytes(1000, i)) << i;
  ASSERT_TRUE(e.Close().ok());
}

// A file:// bucket on the cache directory's disk (the embedded default):
// when the bucket's disk fills, the disk cache gives its room back and the
// put is tried again, so it fits.
TEST(Engine, FullLocalBucketMakesTheCacheGiveWay) {
  pail::testing::SmallDisk disk(16 << 20);
  if (!disk.error().empty()) GTEST_SKIP() << disk.error();
  auto local = LocalStore::Open(disk.Sub("bucket"));
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EngineOptions options = pail::testing::TestEngineOptions(std::shared_ptr<ObjectStore>(std::move(*local)),
                                                           disk.Sub("cache"));
  options.memory_cache_bytes = 0;  // no segment memory: reads go to the disk cache
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  DataObjects& objects = (*engine)->data_objects();
  // Two objects, read back: the disk cache keeps a copy of each.
  constexpr size_t kObject = 2 << 20;
  std::string got(kObject, '\0');
  for (uint32_t i = 0; i < 2; ++i) {
    const uint64_t id = objects.NewId();
    const std::string body = RandomBytes(kObject, i);
    ASSERT_TRUE(objects.Put(id, std::string(body), /*keep_in_memory=*/false).ok());
    auto r = objects.Read(id, kObject, 0, kObject, got.data());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(got, body);
  }
  const uint64_t cached = (*engine)->stats().disk_cache_bytes;
  ASSERT_GE(cached, 2 * kObject);
  disk.FillLeaving(kObject / 2);
  // The bucket's disk refuses the next object at first; the cache gives way
  // and the put's second try fits.
  const uint64_t id = objects.NewId();
  const std::string body = RandomBytes(kObject, 7);
  Status put = objects.Put(id, std::string(body), false);
  EXPECT_TRUE(put.ok()) << put.ToString();
  EXPECT_EQ((*engine)->stats().disk_cache_local_failures, 1u);
  EXPECT_LT((*engine)->stats().disk_cache_bytes, cached);
  auto r = objects.Read(id, kObject, 0, kObject, got.data());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(got, body);
  disk.Empty();
  ASSERT_TRUE((*engine)->Close().ok());
}

// A cache disk full of another program's files, with nothing of ours left
// to evict: a flush fails, and once the disk has room again the engine's
// flusher resumes RocksDB and the flush goes through, every write there.
// The table writer reports a full disk as a retryable IOError: a plain one
// is fatal to RocksDB 7.8 during a flush (Resume() fails until a restart),
// and NoSpace hands recovery to an SstFileManager that answers Resume()
// with Busy; this test failed both ways.
TEST(Engine, FullDiskWithNothingToEvictFailsFlushesUntilThereIsRoom) {
  pail::testing::SmallDisk disk(8 << 20);
  if (!disk.error().empty()) GTEST_SKIP() << disk.error();
  EngineOptions options =
      pail::testing::TestEngineOptions(std::make_shared<MemoryStore>(), disk.Sub("cache"));
  options.disk_cache_bytes = 0;  // the cache keeps nothing that could give way
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  ASSERT_TRUE(PutRandomKeys(e, 0, 1000).ok());
  disk.FillLeaving(0);
  ASSERT_TRUE(PutRandomKeys(e, 1000, 1000).ok());  // into the memtable
  EXPECT_FALSE(e.db()->Flush(rocksdb::FlushOptions(), e.column_family("meta")).ok());
  disk.Empty();
  rocksdb::Status flushed = FlushOnceItCan(e);
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  ASSERT_TRUE(PutRandomKeys(e, 2000, 10).ok());
  for (int i = 0; i < 2010; i += 67) ASSERT_EQ(Get(e, "meta", "k" + std::to_string(i)), RandomBytes(1000, i)) << i;
  ASSERT_TRUE(e.Close().ok());
}

// The same with a full file:// bucket (its puts are NoSpace): the table's
// upload fails, and the flush goes through once the bucket's disk has room.
TEST(Engine, FullLocalBucketFailsFlushesUntilThereIsRoom) {
  pail::testing::SmallDisk disk(8 << 20);
  if (!disk.error().empty()) GTEST_SKIP() << disk.error();
  pail::testing::TempDir dir;
  auto local = LocalStore::Open(disk.Sub("bucket"));
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  auto engine = Engine::Open(pail::testing::TestEngineOptions(
      std::shared_ptr<ObjectStore>(std::move(*local)), dir.Sub("cache")));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  Engine& e = **engine;
  ASSERT_TRUE(PutRandomKeys(e, 0, 1000).ok());
  disk.FillLeaving(0);
  EXPECT_FALSE(e.db()->Flush(rocksdb::FlushOptions(), e.column_family("meta")).ok());
  disk.Empty();
  rocksdb::Status flushed = FlushOnceItCan(e);
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  EXPECT_EQ(Get(e, "meta", "k999"), RandomBytes(1000, 999));
  ASSERT_TRUE(e.Close().ok());
}

}  // namespace
}  // namespace pail::engine
