// Regression tests of issue 8: takeovers and outages that lost data or
// locked the bucket (defects 1, 2, 7 and 8).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "bucket_test_util.h"
#include "engine/bucket_layout.h"
#include "engine_test_util.h"
#include "objstore/fault_store.h"
#include "objstore/memory_store.h"

namespace pail::engine {
namespace {

using pail::testing::FlushAll;
using pail::testing::HasSuffix;
using pail::testing::Keys;
using pail::testing::Read;
using pail::testing::RefusingStore;
using pail::testing::TempDir;
using pail::testing::TestEngineOptions;
using pail::testing::Write;

std::string Key(int i) { return "k" + std::to_string(i); }

// Defect 1. A runs; B seals it, flushes the replayed WAL into SSTs of its
// own and dies before its CURRENT; A, not yet aware, flushes under the same
// file numbers. The next opener must use A's files, never B's.
TEST(Takeover, OpenerThatDiedBeforeCurrentDoesNotShadowLiveFiles) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  auto a = Engine::Open(TestEngineOptions(memory, dir.Sub("a")));
  ASSERT_TRUE(a.ok());
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(Write(**a, "meta", Key(i), "a" + std::to_string(i)).ok());
    ASSERT_TRUE(Write(**a, "default", Key(i), "d" + std::to_string(i)).ok());
    if (i % 10 == 0) {
      ASSERT_TRUE(Write(**a, "data", Key(i), std::string(5000, 'x')).ok());
    }
  }
  // A flush makes A's manifest record its next file number; the WAL after
  // it is what B replays, so B's tables take exactly A's next numbers.
  ASSERT_TRUE(FlushAll(**a).ok());
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(Write(**a, "meta", Key(i), "a" + std::to_string(i)).ok());
    ASSERT_TRUE(Write(**a, "default", Key(i), "d" + std::to_string(i)).ok());
  }
  ASSERT_TRUE((*a)->Sync().ok());
  {
    auto dies = std::make_shared<RefusingStore>(
        memory, [](const std::string& k) { return HasSuffix(k, "/CURRENT"); });
    auto b = Engine::Open(TestEngineOptions(dies, dir.Sub("b")));
    ASSERT_FALSE(b.ok());
  }
  // B's recovery flush left tables of epoch 2 behind.
  size_t b_tables = 0;
  for (auto& k : Keys(*memory, FileKey(2, ""))) b_tables += HasSuffix(k, ".sst");
  ASSERT_GT(b_tables, 0u);
  // A does not know yet: it flushes twice, reaching B's file numbers.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 300; ++i) {
      (void)Write(**a, "meta", "late" + std::to_string(round) + Key(i), "x");
      (void)Write(**a, "default", "late" + std::to_string(round) + Key(i), "x");
    }
    (void)FlushAll(**a);
  }
  (void)(*a)->Close();

  auto c = Engine::Open(TestEngineOptions(memory, dir.Sub("c")));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (int i = 0; i < 300; ++i) {
    ASSERT_EQ(Read(**c, "meta", Key(i)), "a" + std::to_string(i));
    ASSERT_EQ(Read(**c, "default", Key(i)), "d" + std::to_string(i));
    if (i % 10 == 0) {
      ASSERT_EQ(Read(**c, "data", Key(i)), std::string(5000, 'x'));
    }
  }
  ASSERT_TRUE((*c)->Close().ok());
  auto d = Engine::Open(TestEngineOptions(memory, dir.Sub("d")));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(Read(**d, "meta", Key(7)), "a7");
}

// Defect 1, the rule itself: an object of an epoch outside the pinned
// CURRENT's lineage is never used, whether it landed before the opener
// (an unfinished epoch above the CURRENT) or after (a late upload of a
// writer that was already fenced), and it is collected.
TEST(Takeover, ObjectsOutsideThePinnedLineageAreIgnoredAndCollected) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  std::vector<std::string> tables;
  {
    auto a = Engine::Open(TestEngineOptions(memory, dir.Sub("a")));
    ASSERT_TRUE(a.ok());
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(Write(**a, "meta", Key(i), "v" + std::to_string(i)).ok());
    ASSERT_TRUE((*a)->Close().ok());
  }
  for (auto& k : Keys(*memory, FileKey(1, ""))) {
    if (HasSuffix(k, ".sst")) tables.push_back(k.substr(k.rfind('/') + 1));
  }
  ASSERT_FALSE(tables.empty());
  // Epoch 2 claimed the bucket and uploaded files, then died.
  ASSERT_TRUE(memory->PutIfAbsent(FenceKey(2), "died").ok());
  for (auto& t : tables) ASSERT_TRUE(memory->Put(FileKey(2, t), "not a table").ok());
  {
    auto c = Engine::Open(TestEngineOptions(memory, dir.Sub("c")));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    for (int i = 0; i < 200; ++i) ASSERT_EQ(Read(**c, "meta", Key(i)), "v" + std::to_string(i));
    ASSERT_TRUE((*c)->Close().ok());
  }
  for (auto& t : tables) EXPECT_FALSE(memory->Head(FileKey(2, t)).ok()) << t << " not collected";
  // Epoch 2, fenced but still running, lands an upload late.
  for (auto& t : tables) ASSERT_TRUE(memory->Put(FileKey(2, t), "not a table either").ok());
  auto d = Engine::Open(TestEngineOptions(memory, dir.Sub("d")));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  for (int i = 0; i < 200; ++i) ASSERT_EQ(Read(**d, "meta", Key(i)), "v" + std::to_string(i));
}

// Defect 1, the old writer's side: once fenced it uploads no manifest.
TEST(Takeover, FencedWriterUploadsNoManifest) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  // No background sync: it could learn of the takeover before the write
  // below, which must reach the memtable so the flush has a manifest to try.
  auto options = TestEngineOptions(memory, dir.Sub("a"));
  options.flush_interval = std::chrono::hours(1);
  auto a = Engine::Open(options);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(Write(**a, "meta", "x", "1").ok());
  ASSERT_TRUE((*a)->Sync().ok());
  auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_TRUE(b.ok());
  auto manifests = [&] {  // key and etag of each of A's manifests
    std::set<std::string> out;
    auto listed = ListAll(*memory, FileKey(1, "MANIFEST"));
    if (listed.ok()) {
      for (const auto& meta : *listed) out.insert(meta.key + " " + meta.etag);
    }
    return out;
  };
  std::set<std::string> before = manifests();
  ASSERT_TRUE(Write(**a, "meta", "y", "2").ok());
  EXPECT_FALSE(FlushAll(**a).ok());
  EXPECT_EQ(before, manifests()) << "a fenced writer changed its manifest";
  EXPECT_TRUE((*a)->fenced());
}

// Defect 2. A WAL part lands but its response is lost, and the next sync
// (with more bytes) meets put-if-absent at the same number: not a takeover.
TEST(Takeover, LostWalPartResponseDoesNotFenceTheWriter) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  auto faults = std::make_shared<FaultStore>(memory, FaultOptions{});
  auto options = TestEngineOptions(faults, dir.Sub("a"));
  options.flush_interval = std::chrono::hours(1);
  auto a = Engine::Open(options);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(Write(**a, "meta", "first", "1").ok());
  FaultOptions lose;
  lose.ambiguous_rate[int(OpKind::kPutIfAbsent)] = 1.0;
  faults->SetOptions(lose);
  EXPECT_FALSE((*a)->Sync().ok());  // landed, but the writer cannot know
  faults->SetOptions(FaultOptions{});
  ASSERT_TRUE(Write(**a, "meta", "second", "2").ok());
  Status s = (*a)->Sync();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE((*a)->fenced());
  // The same again with nothing new to send: the retry is byte-identical.
  faults->SetOptions(lose);
  ASSERT_TRUE(Write(**a, "meta", "third", "3").ok());
  EXPECT_FALSE((*a)->Sync().ok());
  faults->SetOptions(FaultOptions{});
  s = (*a)->Sync();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(Write(**a, "meta", "fourth", "4").ok());
  ASSERT_TRUE((*a)->Sync().ok());

  auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(Read(**b, "meta", "first"), "1");
  EXPECT_EQ(Read(**b, "meta", "second"), "2");
  EXPECT_EQ(Read(**b, "meta", "third"), "3");
  EXPECT_EQ(Read(**b, "meta", "fourth"), "4");
}

// Defect 7. Clean restarts leave neither fences nor seals behind.
TEST(Takeover, CleanRestartsLeaveNoFencesOrSealsBehind) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  for (int run = 0; run < 6; ++run) {
    auto e = Engine::Open(TestEngineOptions(memory, dir.Sub("c" + std::to_string(run))));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ASSERT_TRUE(Write(**e, "meta", "run", std::to_string(run)).ok());
    ASSERT_TRUE((*e)->Sync().ok());
    ASSERT_TRUE((*e)->Close().ok());
  }
  // The last writer's fence and closing seal remain; the next open takes them.
  EXPECT_LE(Keys(*memory, kFencePrefix).size(), 2u);
  size_t wal_objects = 0;
  for (auto& k : Keys(*memory, kDbPrefix)) wal_objects += k.find("/wal/") != std::string::npos;
  EXPECT_LE(wal_objects, 2u);
  auto last = Engine::Open(TestEngineOptions(memory, dir.Sub("last")));
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(Read(**last, "meta", "run"), "5");
}

// Defect 8. RocksDB drops a WAL while a part of it is being published: the
// part must still be collected, not left in the bucket.
TEST(Takeover, WalDroppedDuringItsPublicationLeavesNoPart) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  auto faults = std::make_shared<FaultStore>(memory, FaultOptions{});
  auto options = TestEngineOptions(faults, dir.Sub("a"));
  options.flush_interval = std::chrono::hours(1);
  auto a = Engine::Open(options);
  ASSERT_TRUE(a.ok());
  Engine* engine = a->get();
  std::atomic<bool> armed{true};
  faults->SetHook([&](OpKind op, const std::string& key) {
    if (op != OpKind::kPutIfAbsent || key.find("/wal/") == std::string::npos) return;
    if (!armed.exchange(false)) return;
    // While this part is on its way, its log is flushed and dropped.
    rocksdb::VectorLogPtr before;
    engine->db()->GetSortedWalFiles(before);
    (void)FlushAll(*engine);
    for (int i = 0; i < 500; ++i) {
      rocksdb::VectorLogPtr now;
      engine->db()->GetSortedWalFiles(now);
      if (now.empty() || before.empty() || now.front()->LogNumber() != before.front()->LogNumber()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  ASSERT_TRUE(Write(**a, "meta", "x", "1").ok());
  ASSERT_TRUE((*a)->Sync().ok());
  faults->SetHook(nullptr);
  ASSERT_TRUE(Write(**a, "meta", "y", "2").ok());
  ASSERT_TRUE((*a)->Sync().ok());
  ASSERT_TRUE((*a)->Close().ok());
  // Only the closing seal of epoch 1 may remain.
  std::vector<std::string> data_parts;
  auto wal = ListAll(*memory, FileKey(1, "wal/"));
  ASSERT_TRUE(wal.ok());
  for (const auto& meta : *wal) {
    if (meta.size > 17) data_parts.push_back(meta.key);
  }
  EXPECT_TRUE(data_parts.empty()) << data_parts.size() << " WAL part(s) leaked, first " << data_parts[0];
}

}  // namespace
}  // namespace pail::engine
