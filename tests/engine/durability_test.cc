// Crash, fencing, fault-injection and confidentiality tests of the engine.
#include <gtest/gtest.h>

#include <functional>
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
#include "util/failpoint.h"

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
  o.column_families = {{"meta", false, nullptr}};
  return o;
}

// Checks that the bucket holds batches 0..N for some N >= min_durable, each
// complete, and no batch past N. Returns N (-1 for none). `tag` is the key
// prefix of one writer (PAIL_CRASH_TAG).
int64_t VerifyPrefix(Engine& engine, int64_t min_durable, int64_t first_unwritten_hint,
                     const std::string& tag = "") {
  std::string last = GetOr(engine, "meta", tag + "last");
  int64_t n = last == "<missing>" ? -1 : std::stoll(last);
  EXPECT_GE(n, min_durable) << "a synced batch was lost";
  for (int64_t b = 0; b <= n; ++b) {
    for (int k = 0; k < 3; ++k) {
      std::string key = tag + "b/" + std::to_string(b) + "/" + std::to_string(k);
      EXPECT_NE(GetOr(engine, "meta", key), "<missing>") << tag << "batch " << b << " incomplete or lost";
      if (::testing::Test::HasFailure()) return n;
    }
  }
  for (int64_t b = n + 1; b < std::max(n + 50, first_unwritten_hint); ++b) {
    EXPECT_EQ(GetOr(engine, "meta", tag + "b/" + std::to_string(b) + "/0"), "<missing>")
        << tag << "batch " << b << " survives past 'last' = " << n << ": not a prefix";
    if (::testing::Test::HasFailure()) return n;
  }
  return n;
}

// Reads lines until `want` (true) or EOF / a minute without it (false).
bool ReadUntil(ChildProcess& child, const std::string& want) {
  while (auto line = child.ReadLine(std::chrono::seconds(60))) {
    if (*line == want) return true;
  }
  return false;
}

// A writer child (fence mode: it syncs every batch) and what it reported.
struct WriterChild {
  WriterChild(const std::string& url, const std::string& cache, const std::string& tag,
              std::vector<std::string> env = {})
      : tag(tag) {
    env.push_back("PAIL_CRASH_TAG=" + tag);
    child = std::make_unique<ChildProcess>(
        std::vector<std::string>{PAIL_CRASH_CHILD, url, cache, "0", "fence"}, env);
  }
  // Reads what it printed for up to `wait`; returns early once `until`
  // holds.
  void Pump(std::chrono::milliseconds wait, const std::function<bool()>& until = [] { return false; }) {
    auto deadline = std::chrono::steady_clock::now() + wait;
    while (!until() && std::chrono::steady_clock::now() < deadline) {
      auto line = child->ReadLine(std::chrono::milliseconds(5));
      if (!line) {
        if (child->Exited()) return;
        continue;
      }
      if (*line == "opening") opening = true;
      if (*line == "ready") ready = true;
      if (line->rfind("synced ", 0) == 0) synced = std::stoll(line->substr(7));
    }
  }
  // Kills it and collects the lines still in the pipe (a reported sync
  // counts even when the test had not read it yet). Returns the exit status.
  int Stop() {
    child->Kill();
    while (auto line = child->ReadLine(std::chrono::milliseconds(1))) {
      if (line->rfind("synced ", 0) == 0) synced = std::stoll(line->substr(7));
    }
    return child->Wait();
  }
  std::unique_ptr<ChildProcess> child;
  std::string tag;
  bool opening = false, ready = false;
  int64_t synced = -1;
};

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
    ASSERT_TRUE(ReadUntil(child, "ready")) << "child did not open the engine";
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
  ASSERT_TRUE(ReadUntil(first, "ready"));
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

// The steps of an open where a takeover or a crash hurts most (failpoints
// in src/engine); "" kills the opener at a random moment of its open.
const char* const kOpenSteps[] = {"engine/open_after_claim", "engine/open_after_seal",
                                  "engine/open_after_recovery_flush", "engine/open_before_current",
                                  ""};

// Writer A runs and syncs; opener B starts, slowed down, and is crashed
// during its open (at a named step, or at a random moment); opener C
// starts while B is still opening. Every batch any of them reported as
// synced survives, each writer's batches form a prefix, and the bucket
// always opens.
TEST_P(Durability, TakeoverDuringOpenKeepsEverySyncedBatch) {
  // Every step on file://; the slower cloud stores the first three (CI time).
  const int rounds = EnvInt("PAIL_TAKEOVER_ROUNDS", GetParam() == "file" ? 5 : 3);
  std::mt19937_64 rng(EnvInt("PAIL_CRASH_SEED", 4242));
  const std::string latency = GetParam() == "file" ? "25" : "10";
  int crashed_at_step = 0;
  for (int round = 0; round < rounds; ++round) {
    const std::string step = kOpenSteps[round % std::size(kOpenSteps)];
    const std::string r = "r" + std::to_string(round);
    SCOPED_TRACE("round " + std::to_string(round) + ", opener crashes at " +
                 (step.empty() ? "a random moment" : step));
    WriterChild a(url_, dir_.Sub(r + "-a"), r + "a/");
    a.Pump(std::chrono::seconds(60), [&] { return a.ready; });
    ASSERT_TRUE(a.ready) << "writer A did not open";
    const int64_t a_goal = static_cast<int64_t>(rng() % 15) + 3;
    a.Pump(std::chrono::seconds(30), [&] { return a.synced >= a_goal; });

    std::vector<std::string> env{"PAIL_CRASH_LATENCY_MS=" + latency};
    if (!step.empty()) env.push_back("PAIL_FAILPOINTS=" + step + "=exit");
    WriterChild b(url_, dir_.Sub(r + "-b"), r + "b/", env);
    b.Pump(std::chrono::seconds(60), [&] { return b.opening; });
    // C opens while B is somewhere in its (slowed) open.
    a.Pump(std::chrono::milliseconds(rng() % 400));
    auto c = std::make_unique<WriterChild>(url_, dir_.Sub(r + "-c"), r + "c/");
    if (step.empty()) {
      b.Pump(std::chrono::milliseconds(rng() % 300), [&] { return b.ready; });
      b.Stop();
    }
    // C may lose the race to B (B claims a newer epoch and fences C's open);
    // then C is started again, as an operator would restart a server.
    for (int attempt = 1;; ++attempt) {
      c->Pump(std::chrono::seconds(60), [&] { return c->ready; });
      if (c->ready || attempt == 3) break;
      c->Stop();
      c = std::make_unique<WriterChild>(url_, dir_.Sub(r + "-c" + std::to_string(attempt)), r + "c/");
    }
    ASSERT_TRUE(c->ready) << "opener C did not open, three times";
    const int64_t c_goal = static_cast<int64_t>(rng() % 10) + 2;
    for (int i = 0; i < 400 && c->synced < c_goal; ++i) {
      c->Pump(std::chrono::milliseconds(20));
      a.Pump(std::chrono::milliseconds(5));
      b.Pump(std::chrono::milliseconds(5));
    }
    a.Stop();
    int b_status = b.Stop();
    c->Stop();
    if (WIFEXITED(b_status) && WEXITSTATUS(b_status) == kFailpointExitCode) ++crashed_at_step;

    auto store = pail::testing::OpenDurabilityStore(url_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto engine = Engine::Open(ChildEngineOptions(*store, dir_.Sub(r + "-check")));
    ASSERT_TRUE(engine.ok()) << "the bucket no longer opens: " << engine.status().ToString();
    for (auto* w : {&a, &b, c.get()}) VerifyPrefix(**engine, w->synced, w->synced + 1, w->tag);
    ASSERT_FALSE(HasFailure()) << "synced: A " << a.synced << ", B " << b.synced << ", C " << c->synced;
    ASSERT_TRUE((*engine)->Close().ok());
  }
  // The named steps were reached: the test crashed openers where it meant to.
  if (rounds >= 4) {
    EXPECT_GT(crashed_at_step, 0);
  }
}

// Two writers open the same bucket at nearly the same moment and sync
// every batch: the newer fences the older, and every batch either reported
// as synced survives.
TEST_P(Durability, RacingWritersKeepEverySyncedBatch) {
  const int rounds = EnvInt("PAIL_RACE_ROUNDS", GetParam() == "file" ? 4 : 2);
  std::mt19937_64 rng(EnvInt("PAIL_CRASH_SEED", 777));
  for (int round = 0; round < rounds; ++round) {
    const std::string r = "race" + std::to_string(round);
    SCOPED_TRACE(r);
    WriterChild a(url_, dir_.Sub(r + "-a"), r + "a/");
    a.Pump(std::chrono::milliseconds(rng() % 150));
    WriterChild b(url_, dir_.Sub(r + "-b"), r + "b/");
    for (int i = 0; i < 3000 && !(a.ready && b.ready); ++i) {
      a.Pump(std::chrono::milliseconds(10));
      b.Pump(std::chrono::milliseconds(10));
      if (a.child->Exited() || b.child->Exited()) break;
    }
    // Both race on; the older learns of the newer at its next sync.
    for (int i = 0; i < 40 + static_cast<int>(rng() % 60); ++i) {
      a.Pump(std::chrono::milliseconds(10));
      b.Pump(std::chrono::milliseconds(10));
    }
    const bool a_gone = a.child->Exited(), b_gone = b.child->Exited();
    int a_status = a.Stop(), b_status = b.Stop();
    if (a.ready && b.ready) {
      // One of them was fenced and stopped (exit 3) by now.
      bool fenced = (a_gone && WIFEXITED(a_status) && WEXITSTATUS(a_status) == 3) ||
                    (b_gone && WIFEXITED(b_status) && WEXITSTATUS(b_status) == 3);
      EXPECT_TRUE(fenced) << "two writers kept writing to one bucket";
    }
    auto store = pail::testing::OpenDurabilityStore(url_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto engine = Engine::Open(ChildEngineOptions(*store, dir_.Sub(r + "-check")));
    ASSERT_TRUE(engine.ok()) << "the bucket no longer opens: " << engine.status().ToString();
    for (auto* w : {&a, &b}) VerifyPrefix(**engine, w->synced, w->synced + 1, w->tag);
    ASSERT_FALSE(HasFailure()) << "synced: A " << a.synced << ", B " << b.synced;
    ASSERT_TRUE((*engine)->Close().ok());
  }
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
