// Crash, fencing, fault-injection and confidentiality tests of the engine.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>

#include "child_process.h"
#include "durability_store.h"
#include "engine/bucket_layout.h"
#include "engine/engine.h"
#include "engine_test_util.h"
#include "objstore/counting_store.h"
#include "objstore/fault_store.h"
#include "objstore/memory_store.h"

namespace pail::engine {
namespace {

using pail::testing::ChildProcess;
using pail::testing::TempDir;
using pail::testing::TestEngineOptions;

std::string GetOr(Engine& e, const std::string& cf, const std::string& key) {
  std::string value;
  rocksdb::Status s = e.db()->Get(rocksdb::ReadOptions(), e.column_family(cf), key, &value);
  if (s.IsNotFound()) return "<missing>";
  return s.ok() ? value : "<error " + s.ToString() + ">";
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

EngineOptions ChildEngineOptions(std::shared_ptr<ObjectStore> store, const std::string& cache) {
  EngineOptions o;
  o.store = std::move(store);
  o.cache_dir = cache;
  o.flush_interval = std::chrono::milliseconds(50);
  o.column_families = {{"meta", false}};
  return o;
}

// Checks that the bucket holds batches 0..N for some N >= min_durable, each
// complete, and no batch past N. Returns N (-1 for none).
int64_t VerifyPrefix(Engine& engine, int64_t min_durable, int64_t first_unwritten_hint) {
  std::string last = GetOr(engine, "meta", "last");
  int64_t n = last == "<missing>" ? -1 : std::stoll(last);
  EXPECT_GE(n, min_durable) << "a synced batch was lost";
  for (int64_t b = 0; b <= n; ++b) {
    for (int k = 0; k < 3; ++k) {
      std::string key = "b/" + std::to_string(b) + "/" + std::to_string(k);
      EXPECT_NE(GetOr(engine, "meta", key), "<missing>") << "batch " << b << " incomplete or lost";
      if (::testing::Test::HasFailure()) return n;
    }
  }
  for (int64_t b = n + 1; b < std::max(n + 50, first_unwritten_hint); ++b) {
    EXPECT_EQ(GetOr(engine, "meta", "b/" + std::to_string(b) + "/0"), "<missing>")
        << "batch " << b << " survives past 'last' = " << n << ": not a prefix";
    if (::testing::Test::HasFailure()) return n;
  }
  return n;
}

class Durability : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    url_ = pail::testing::FreshBucketUrl(GetParam(), dir_.path());
    if (url_.empty()) PAIL_SKIP_UNLESS_REQUIRED("no " + GetParam() + " server configured");
  }
  TempDir dir_;
  std::string url_;
};

TEST_P(Durability, KilledWriterKeepsEverySyncedBatchAndAPrefix) {
  const int rounds = EnvInt("PAIL_CRASH_ROUNDS", GetParam() == "file" ? 50 : 8);
  std::mt19937_64 rng(EnvInt("PAIL_CRASH_SEED", 12345));
  int64_t next_batch = 0;
  for (int round = 0; round < rounds; ++round) {
    std::string cache = dir_.Sub("cache-child-" + std::to_string(round));
    ChildProcess child({PAIL_CRASH_CHILD, url_, cache, std::to_string(next_batch)});
    ASSERT_TRUE(child.started());
    auto ready = child.ReadLine(std::chrono::seconds(60));
    ASSERT_TRUE(ready && *ready == "ready") << "child did not open the engine";
    // Let it run for a random while, noting what it reported as durable.
    int64_t synced = next_batch - 1;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(rng() % 400 + 20);
    while (std::chrono::steady_clock::now() < deadline) {
      auto line = child.ReadLine(std::chrono::milliseconds(5));
      if (line && line->rfind("synced ", 0) == 0) synced = std::stoll(line->substr(7));
    }
    child.Kill();
    // A reported sync whose line was still in the pipe counts too.
    while (auto line = child.ReadLine(std::chrono::milliseconds(1))) {
      if (line->rfind("synced ", 0) == 0) synced = std::stoll(line->substr(7));
    }
    auto store = pail::testing::OpenDurabilityStore(url_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto engine = Engine::Open(ChildEngineOptions(*store, dir_.Sub("cache-check-" + std::to_string(round))));
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    int64_t n = VerifyPrefix(**engine, synced, synced + 1);
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round << ": synced " << synced << ", recovered " << n;
      return;
    }
    ASSERT_TRUE((*engine)->Close().ok());
    next_batch = n + 1;
  }
}

TEST_P(Durability, SecondWriterFencesTheFirst) {
  ChildProcess first({PAIL_CRASH_CHILD, url_, dir_.Sub("cache-first"), "0", "fence"});
  ASSERT_TRUE(first.started());
  auto ready = first.ReadLine(std::chrono::seconds(60));
  ASSERT_TRUE(ready && *ready == "ready");
  int64_t synced = -1;
  while (synced < 30) {
    auto line = first.ReadLine(std::chrono::seconds(30));
    ASSERT_TRUE(line.has_value()) << "first writer stopped";
    if (line->rfind("synced ", 0) == 0) synced = std::stoll(line->substr(7));
  }
  // Take over while the first keeps writing.
  auto store = pail::testing::OpenDurabilityStore(url_);
  ASSERT_TRUE(store.ok());
  auto second = Engine::Open(ChildEngineOptions(*store, dir_.Sub("cache-second")));
  ASSERT_TRUE(second.ok()) << second.status().ToString();

  // The first learns at its next durable write, and refuses writes after.
  bool fenced = false, refused = false;
  int64_t synced_before_fence = synced;
  while (auto line = first.ReadLine(std::chrono::seconds(30))) {
    if (line->rfind("synced ", 0) == 0) synced_before_fence = std::stoll(line->substr(7));
    if (*line == "fenced") fenced = true;
    if (*line == "write refused") refused = true;
    if (*line == "write accepted") break;
  }
  int status = first.Wait();
  EXPECT_TRUE(fenced);
  EXPECT_TRUE(refused);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3);

  // Nothing the first synced is lost: the second sees every such batch,
  // including any it acknowledged while the takeover was under way.
  ASSERT_TRUE((*second)->Close().ok());
  auto third = Engine::Open(ChildEngineOptions(*store, dir_.Sub("cache-third")));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  VerifyPrefix(**third, synced_before_fence, 0);
  EXPECT_EQ(GetOr(**third, "meta", "after-fence"), "<missing>");
}

INSTANTIATE_TEST_SUITE_P(Stores, Durability, ::testing::Values("file", "s3", "azure"),
                         [](const auto& info) { return info.param; });

// Faults on every operation kind: no corruption, and the engine works again
// once the store heals, without a restart.
TEST(EngineFaults, InjectedFaultsNeverCorruptAndTheEngineRecovers) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  FaultOptions faults;
  faults.error_rate.fill(0.15);
  faults.ambiguous_rate.fill(0.1);
  faults.latency = std::chrono::microseconds(200);
  auto faulty = std::make_shared<FaultStore>(memory, faults);
  RetryOptions retry;
  retry.initial_backoff = std::chrono::milliseconds(1);
  retry.max_backoff = std::chrono::milliseconds(20);
  retry.deadline = std::chrono::milliseconds(3000);
  retry.max_attempts = 40;
  auto store = std::make_shared<RetryingStore>(faulty, retry);

  auto engine = Engine::Open(TestEngineOptions(store, dir.Sub("cache1")));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::map<std::string, std::string> expected;
  auto write_some = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      rocksdb::WriteBatch batch;
      std::string key = "k" + std::to_string(i), value(100 + i % 3000, char('a' + i % 26));
      batch.Put((*engine)->column_family(i % 2 ? "meta" : "data"), key, value);
      Status w = (*engine)->Write(&batch);
      ASSERT_TRUE(w.ok()) << w.ToString();
      expected[key] = value;
      if (i % 50 == 0) {
        Status s = (*engine)->Sync();
        ASSERT_TRUE(s.ok()) << s.ToString();
      }
    }
  };
  write_some(0, 2000);
  ASSERT_TRUE((*engine)->db()->Flush(rocksdb::FlushOptions(), (*engine)->column_family("data")).ok());
  ASSERT_TRUE((*engine)->Sync().ok());
  EXPECT_GT(faulty->injected_failures(), 0u);

  // The store goes down completely: durable writes fail, with a clear error.
  faulty->SetErrorRateAll(1.0);
  rocksdb::WriteBatch during;
  during.Put((*engine)->column_family("meta"), "during-outage", "1");
  // Acknowledged from memory or refused; the Sync below must report the outage.
  (void)(*engine)->Write(&during);
  Status down = (*engine)->Sync();
  EXPECT_FALSE(down.ok());
  // ...and it heals: the same engine works again.
  faulty->SetErrorRateAll(0.0);
  Status healed = (*engine)->Sync();
  for (int i = 0; i < 20 && !healed.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    healed = (*engine)->Sync();
  }
  ASSERT_TRUE(healed.ok()) << healed.ToString();
  write_some(2000, 2200);
  ASSERT_TRUE((*engine)->Sync().ok());
  ASSERT_TRUE((*engine)->Close().ok());

  // Everything reads back from the bucket, through faults again.
  faults.ambiguous_rate.fill(0.0);
  faulty->SetOptions(faults);
  auto reopened = Engine::Open(TestEngineOptions(store, dir.Sub("cache2")));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  for (auto& [key, value] : expected) {
    int i = std::stoi(key.substr(1));
    ASSERT_EQ(GetOr(**reopened, i % 2 ? "meta" : "data", key), value) << key;
  }
}

TEST(EngineConfidentiality, MarkerNeverReachesTheBucketAndTamperingIsCaught) {
  TempDir dir;
  auto raw = std::make_shared<MemoryStore>();
  auto key = crypto::LoadOrCreateDataKey(*raw, "pw", {1, 8 * 1024, 1});
  ASSERT_TRUE(key.ok());
  auto store = std::make_shared<crypto::EncryptedStore>(raw, *key);
  const std::string marker = "MARKER-c0ffee-5e1f";
  {
    auto engine = Engine::Open(TestEngineOptions(store, dir.Sub("cache1")));
    ASSERT_TRUE(engine.ok());
    for (int i = 0; i < 3000; ++i) {
      rocksdb::WriteBatch batch;
      batch.Put((*engine)->column_family(i % 2 ? "meta" : "data"), marker + std::to_string(i),
                marker + std::string(i % 5000, 'x') + marker);
      ASSERT_TRUE((*engine)->Write(&batch).ok());
    }
    ASSERT_TRUE((*engine)->db()->Flush(rocksdb::FlushOptions(), (*engine)->column_family("data")).ok());
    ASSERT_TRUE((*engine)->db()->Flush(rocksdb::FlushOptions(), (*engine)->column_family("meta")).ok());
    ASSERT_TRUE((*engine)->Close().ok());
  }
  auto objects = ListAll(*raw, "");
  ASSERT_TRUE(objects.ok());
  size_t ssts = 0;
  for (auto& meta : *objects) {
    std::string body = *raw->Get(meta.key);
    EXPECT_EQ(body.find(marker), std::string::npos) << meta.key;
    EXPECT_EQ(body.find("MARKER"), std::string::npos) << meta.key;
    if (meta.key.size() > 4 && meta.key.substr(meta.key.size() - 4) == ".sst") ++ssts;
  }
  ASSERT_GT(ssts, 0u);

  // Flip one byte in every SST: reads fail with corruption, never wrong data.
  for (auto& meta : *objects) {
    if (meta.key.size() < 4 || meta.key.substr(meta.key.size() - 4) != ".sst") continue;
    std::string body = *raw->Get(meta.key);
    body[body.size() / 2] ^= 1;
    ASSERT_TRUE(raw->Put(meta.key, body).ok());
  }
  auto engine = Engine::Open(TestEngineOptions(store, dir.Sub("cache2")));
  if (!engine.ok()) {
    EXPECT_EQ(engine.status().code(), Status::Code::kCorruption) << engine.status().ToString();
    return;
  }
  int errors = 0;
  for (int i = 0; i < 3000; i += 37) {
    std::string value;
    rocksdb::Status s = (*engine)->db()->Get(rocksdb::ReadOptions(),
                                             (*engine)->column_family(i % 2 ? "meta" : "data"),
                                             marker + std::to_string(i), &value);
    if (s.ok()) {
      EXPECT_EQ(value, marker + std::string(i % 5000, 'x') + marker);
    } else {
      ++errors;
      EXPECT_NE(s.ToString().find("failed authentication"), std::string::npos) << s.ToString();
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace pail::engine
