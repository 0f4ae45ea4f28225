#include "engine/engine.h"

#include <gtest/gtest.h>

#include "engine/bucket_layout.h"
#include "engine_test_util.h"
#include "objstore/counting_store.h"
#include "objstore/local_store.h"
#include "objstore/memory_store.h"

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

INSTANTIATE_TEST_SUITE_P(Stores, EngineRoundTrip, ::testing::Values("memory", "file"));

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

TEST(Engine, ConcurrentSyncsAreGrouped) {
  TempDir dir;
  auto counting = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
  auto options = TestEngineOptions(counting, dir.Sub("cache"));
  options.flush_interval = std::chrono::hours(1);
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok());
  uint64_t before = counting->Snapshot().requests[int(OpKind::kPutIfAbsent)];
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        Put(**engine, "meta", std::to_string(t) + "-" + std::to_string(i), "v");
        ASSERT_TRUE((*engine)->Sync().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  uint64_t parts = counting->Snapshot().requests[int(OpKind::kPutIfAbsent)] - before;
  EXPECT_LE(parts, 160u);  // never more than one per Sync call
  EXPECT_GT(parts, 0u);
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
