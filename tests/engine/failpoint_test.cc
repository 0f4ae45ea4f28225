// The engine stopped at each named step whose order the design depends on
// (docs/engine.md, "Failpoints"): the bucket always opens afterwards and
// keeps every synced write.
#include "util/failpoint.h"

#include <gtest/gtest.h>

#include "bucket_test_util.h"
#include "engine/bucket_layout.h"
#include "engine_test_util.h"
#include "objstore/memory_store.h"

namespace pail::engine {
namespace {

using pail::testing::FlushAll;
using pail::testing::Keys;
using pail::testing::Read;
using pail::testing::TempDir;
using pail::testing::TestEngineOptions;
using pail::testing::Write;

class FailpointTest : public ::testing::Test {
 protected:
  void TearDown() override { DisarmAllFailpoints(); }
};

// A writer with flushed tables and a synced WAL tail, as a takeover finds it.
std::unique_ptr<Engine> SyncedWriter(std::shared_ptr<ObjectStore> store, const std::string& cache) {
  auto a = Engine::Open(TestEngineOptions(std::move(store), cache));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  if (!a.ok()) return nullptr;
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(Write(**a, "meta", "k" + std::to_string(i), "flushed").ok());
  EXPECT_TRUE(FlushAll(**a).ok());
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(Write(**a, "meta", "w" + std::to_string(i), "synced").ok());
  EXPECT_TRUE((*a)->Sync().ok());
  return std::move(*a);
}

void ExpectEverySyncedWrite(Engine& e) {
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(Read(e, "meta", "k" + std::to_string(i)), "flushed") << i;
    ASSERT_EQ(Read(e, "meta", "w" + std::to_string(i)), "synced") << i;
  }
}

TEST_F(FailpointTest, OpenerStoppedAtEveryStepLosesNothing) {
  for (const char* point : {"engine/open_after_claim", "engine/open_after_seal",
                            "engine/open_after_recovery_flush", "engine/open_before_current",
                            "engine/before_manifest_upload", "engine/before_current_upload"}) {
    SCOPED_TRACE(point);
    TempDir dir;
    auto memory = std::make_shared<MemoryStore>();
    auto a = SyncedWriter(memory, dir.Sub("a"));
    ASSERT_TRUE(a);
    ArmFailpoint(point, FailAction::kError);
    auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
    EXPECT_FALSE(b.ok());
    EXPECT_EQ(FailpointFired(point), 1);
    DisarmAllFailpoints();
    // A, fenced without knowing, keeps working for a while.
    for (int i = 0; i < 200; ++i) (void)Write(*a, "meta", "late" + std::to_string(i), "x");
    (void)FlushAll(*a);
    (void)a->Close();
    for (const char* next : {"c", "d"}) {
      auto c = Engine::Open(TestEngineOptions(memory, dir.Sub(next)));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      ExpectEverySyncedWrite(**c);
      ASSERT_TRUE((*c)->Close().ok());
    }
  }
}

// Final errors, and retryable ones (an outage at that step): then RocksDB
// stops its background work until resumed, and the close that follows must
// not hang in DB::Close (docs/engine.md, "Shutdown").
TEST_F(FailpointTest, WriterStoppedBetweenUploadsLosesNothing) {
  for (FailAction action : {FailAction::kError, FailAction::kRetryable})
  for (const char* point : {"engine/after_table_upload", "engine/before_manifest_upload",
                            "engine/wal_after_publish"}) {
    SCOPED_TRACE(std::string(point) + (action == FailAction::kRetryable ? " retryable" : " final"));
    TempDir dir;
    auto memory = std::make_shared<MemoryStore>();
    auto a = SyncedWriter(memory, dir.Sub("a"));
    ASSERT_TRUE(a);
    ArmFailpoint(point, action);
    for (int i = 0; i < 200; ++i) (void)Write(*a, "meta", "more" + std::to_string(i), "x");
    (void)a->Sync();
    (void)FlushAll(*a);
    EXPECT_EQ(FailpointFired(point), 1);
    DisarmAllFailpoints();
    a.reset();  // stops without a clean close when the failpoint broke RocksDB
    auto c = Engine::Open(TestEngineOptions(memory, dir.Sub("c")));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ExpectEverySyncedWrite(**c);
    ASSERT_TRUE((*c)->Close().ok());
  }
}

// A lost acknowledgement of a WAL part is not a takeover (defect 2).
TEST_F(FailpointTest, LostWalAcknowledgementIsNotATakeover) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  auto a = SyncedWriter(memory, dir.Sub("a"));
  ASSERT_TRUE(a);
  ASSERT_TRUE(Write(*a, "meta", "lost-ack", "1").ok());
  ArmFailpoint("engine/wal_after_publish", FailAction::kError);
  EXPECT_FALSE(a->Sync().ok());
  ASSERT_TRUE(Write(*a, "meta", "after", "2").ok());
  Status s = a->Sync();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(a->Close().ok());
  auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Read(**b, "meta", "lost-ack"), "1");
  EXPECT_EQ(Read(**b, "meta", "after"), "2");
}

// Stopped between the writer check and its deletes, the collector deletes
// nothing and tries again later.
TEST_F(FailpointTest, CollectorStoppedAfterItsCheckRetries) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  auto a = SyncedWriter(memory, dir.Sub("a"));
  ASSERT_TRUE(a);
  ArmFailpoint("engine/gc_after_check", FailAction::kError);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(Write(*a, "meta", "k" + std::to_string(i), "flushed").ok());
    ASSERT_TRUE(FlushAll(*a).ok());
  }
  ASSERT_TRUE(a->db()->CompactRange(rocksdb::CompactRangeOptions(), a->column_family("meta"), nullptr,
                                    nullptr).ok());
  for (int i = 0; i < 50 && FailpointFired("engine/gc_after_check") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(FailpointFired("engine/gc_after_check"), 1);
  ASSERT_TRUE(a->Close().ok());
  std::vector<rocksdb::LiveFileMetaData> live;
  auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_TRUE(b.ok());
  (*b)->db()->GetLiveFilesMetaData(&live);
  ExpectEverySyncedWrite(**b);
  size_t tables = 0;
  for (auto& k : Keys(*memory, kDbPrefix)) tables += pail::testing::HasSuffix(k, ".sst");
  EXPECT_EQ(tables, live.size()) << "compaction inputs were not collected after the retry";
}

}  // namespace
}  // namespace pail::engine

#include <sys/wait.h>

#include "child_process.h"
#include "durability_store.h"

namespace pail::engine {
namespace {

// Through the environment, in a child process: it exits at exactly the
// armed step (a crash there), first while writing, then twice while opening.
TEST(FailpointProcess, ChildCrashedAtNamedStepsLosesNoSyncedBatch) {
  TempDir dir;
  const std::string url = pail::testing::FreshBucketUrl("file", dir.path());
  int64_t synced = -1;
  int run = 0;
  for (const char* spec : {"engine/wal_after_publish=exit@5", "engine/open_after_recovery_flush=exit",
                           "engine/open_before_current=exit"}) {
    SCOPED_TRACE(spec);
    ::setenv("PAIL_FAILPOINTS", spec, 1);
    pail::testing::ChildProcess child(
        {PAIL_CRASH_CHILD, url, dir.Sub("cache" + std::to_string(run++)), std::to_string(synced + 1)});
    ::unsetenv("PAIL_FAILPOINTS");
    ASSERT_TRUE(child.started());
    while (auto line = child.ReadLine(std::chrono::seconds(60))) {
      if (line->rfind("synced ", 0) == 0) synced = std::max<int64_t>(synced, std::stoll(line->substr(7)));
    }
    int status = child.Wait();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), kFailpointExitCode);
  }
  ASSERT_GE(synced, 0);
  auto store = pail::testing::OpenDurabilityStore(url);
  ASSERT_TRUE(store.ok());
  EngineOptions options;
  options.store = *store;
  options.cache_dir = dir.Sub("check");
  options.column_families = {{"meta", false, nullptr}};
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::string last = Read(**engine, "meta", "last");
  ASSERT_NE(last, "<missing>");
  EXPECT_GE(std::stoll(last), synced) << "a synced batch was lost";
  for (int64_t b = 0; b <= std::stoll(last); ++b) {
    ASSERT_NE(Read(**engine, "meta", "b/" + std::to_string(b) + "/0"), "<missing>") << b;
  }
}

}  // namespace
}  // namespace pail::engine
