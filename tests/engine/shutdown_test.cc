// Shutting down while the bucket is unreachable: Close() gives the shutdown
// flush a bounded effort, returns in bounded time with an error naming the
// writes it could not make durable, and loses nothing that was synced.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "bucket_test_util.h"
#include "engine_test_util.h"
#include "objstore/fault_store.h"
#include "objstore/memory_store.h"
#include "objstore/retrying_store.h"

namespace pail::engine {
namespace {

using pail::testing::FlushAll;
using pail::testing::Read;
using pail::testing::TempDir;
using pail::testing::TestEngineOptions;
using pail::testing::Write;
using Clock = std::chrono::steady_clock;

// How long the tests' Close() keeps retrying its final sync.
constexpr auto kShutdownSyncTimeout = std::chrono::milliseconds(1500);
// Longer than any bounded shutdown may take on a loaded machine, far shorter
// than a hang.
constexpr auto kCloseLimit = std::chrono::seconds(20);

// Runs Close() on its own thread. A Close() still running after kCloseLimit
// is the hang under test: the process cannot join that thread, so it reports
// and exits instead of hanging the test run.
Status CloseWithin(Engine& engine, std::chrono::milliseconds* took) {
  const auto start = Clock::now();
  auto closing = std::async(std::launch::async, [&engine] { return engine.Close(); });
  if (closing.wait_for(kCloseLimit) != std::future_status::ready) {
    std::fprintf(stderr, "FATAL: Engine::Close() still running after %lld s: it hangs\n",
                 static_cast<long long>(kCloseLimit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  *took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return closing.get();
}

// A small RetryingStore, as in production, over a FaultStore the test
// switches off: every request then fails retryably, as when the bucket's
// endpoint stops answering.
struct OutageStores {
  std::shared_ptr<MemoryStore> memory = std::make_shared<MemoryStore>();
  std::shared_ptr<FaultStore> faults = std::make_shared<FaultStore>(memory, FaultOptions{});
  std::shared_ptr<RetryingStore> store;
  OutageStores() {
    RetryOptions retry;
    retry.initial_backoff = std::chrono::milliseconds(5);
    retry.max_backoff = std::chrono::milliseconds(50);
    retry.deadline = std::chrono::milliseconds(300);
    store = std::make_shared<RetryingStore>(faults, retry);
  }
};

void WriteKeys(Engine& e, const std::string& prefix, const std::string& value, int n = 200) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(Write(e, "meta", prefix + std::to_string(i), value).ok());
}

void ExpectKeys(Engine& e, const std::string& prefix, const std::string& value, int n = 200) {
  for (int i = 0; i < n; ++i) ASSERT_EQ(Read(e, "meta", prefix + std::to_string(i)), value) << prefix << i;
}

// The bucket reopens once it heals, with every synced write.
void ExpectReopensWithSyncedWrites(std::shared_ptr<ObjectStore> store, const std::string& cache) {
  auto b = Engine::Open(TestEngineOptions(std::move(store), cache));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectKeys(**b, "flushed", "1");
  ExpectKeys(**b, "synced", "2");
  ASSERT_TRUE((*b)->Close().ok());
}

// A writer with flushed tables and a synced WAL tail.
std::unique_ptr<Engine> SyncedWriter(std::shared_ptr<ObjectStore> store, const std::string& cache) {
  auto options = TestEngineOptions(std::move(store), cache);
  options.shutdown_sync_timeout = kShutdownSyncTimeout;
  auto a = Engine::Open(options);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  if (!a.ok()) return nullptr;
  WriteKeys(**a, "flushed", "1");
  EXPECT_TRUE(FlushAll(**a).ok());
  WriteKeys(**a, "synced", "2");
  EXPECT_TRUE((*a)->Sync().ok());
  return std::move(*a);
}

TEST(Shutdown, UnreachableBucketWithUnsyncedWritesClosesPromptlyAndSaysSo) {
  TempDir dir;
  OutageStores stores;
  auto a = SyncedWriter(stores.store, dir.Sub("a"));
  ASSERT_TRUE(a);
  WriteKeys(*a, "unsynced", "3");
  stores.faults->SetErrorRateAll(1.0);
  std::chrono::milliseconds took;
  Status s = CloseWithin(*a, &took);
  EXPECT_FALSE(s.ok()) << "unpublished writes were reported durable";
  EXPECT_NE(s.ToString().find("could not be made durable"), std::string::npos) << s.ToString();
  // The final sync was retried for its budget, and not much longer.
  EXPECT_GE(took, kShutdownSyncTimeout / 2);
  EXPECT_LT(took, kShutdownSyncTimeout + std::chrono::seconds(5));
  std::printf("close with the bucket down took %lld ms: %s\n", static_cast<long long>(took.count()),
              s.ToString().c_str());
  a.reset();
  stores.faults->SetErrorRateAll(0.0);
  ExpectReopensWithSyncedWrites(stores.memory, dir.Sub("b"));
}

// The bucket comes back while Close() is still retrying: nothing is lost.
TEST(Shutdown, BucketHealingWithinTheShutdownBudgetLosesNothing) {
  TempDir dir;
  OutageStores stores;
  auto a = SyncedWriter(stores.store, dir.Sub("a"));
  ASSERT_TRUE(a);
  WriteKeys(*a, "unsynced", "3");
  stores.faults->SetErrorRateAll(1.0);
  std::thread heal([&] {
    std::this_thread::sleep_for(kShutdownSyncTimeout / 3);
    stores.faults->SetErrorRateAll(0.0);
  });
  std::chrono::milliseconds took;
  Status s = CloseWithin(*a, &took);
  heal.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  a.reset();
  auto b = Engine::Open(TestEngineOptions(stores.memory, dir.Sub("b")));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ExpectKeys(**b, "synced", "2");
  ExpectKeys(**b, "unsynced", "3");
}

// Every WAL byte is in the bucket, but the memtable flush at shutdown cannot
// upload its table: RocksDB's background error recovery must not keep Close
// waiting.
TEST(Shutdown, TableUploadFailingAtShutdownFlushDoesNotHangClose) {
  TempDir dir;
  OutageStores stores;
  auto a = SyncedWriter(stores.store, dir.Sub("a"));
  ASSERT_TRUE(a);
  FaultOptions tables_fail;
  tables_fail.error_rate[static_cast<int>(OpKind::kPut)] = 1.0;
  stores.faults->SetOptions(tables_fail);
  std::chrono::milliseconds took;
  Status s = CloseWithin(*a, &took);
  std::printf("close with table uploads failing took %lld ms: %s\n",
              static_cast<long long>(took.count()), s.ToString().c_str());
  EXPECT_TRUE(s.ok()) << "every write was in a published WAL part: " << s.ToString();
  a.reset();
  stores.faults->SetOptions(FaultOptions{});
  ExpectReopensWithSyncedWrites(stores.memory, dir.Sub("b"));
}

// The store goes down after the writer's background flush has already hit
// a retryable error and RocksDB is busy resuming.
TEST(Shutdown, CloseDuringBackgroundErrorRecoveryReturns) {
  TempDir dir;
  OutageStores stores;
  auto a = SyncedWriter(stores.store, dir.Sub("a"));
  ASSERT_TRUE(a);
  WriteKeys(*a, "unsynced", "3");
  stores.faults->SetErrorRateAll(1.0);
  EXPECT_FALSE(FlushAll(*a).ok());  // a hard background error: RocksDB starts resuming
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::chrono::milliseconds took;
  Status s = CloseWithin(*a, &took);
  EXPECT_FALSE(s.ok());
  std::printf("close during error recovery took %lld ms: %s\n", static_cast<long long>(took.count()),
              s.ToString().c_str());
  a.reset();
  stores.faults->SetErrorRateAll(0.0);
  ExpectReopensWithSyncedWrites(stores.memory, dir.Sub("b"));
}

}  // namespace
}  // namespace pail::engine
