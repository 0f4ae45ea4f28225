// Regression tests of issue 8: a damaged or foreign-touched bucket gets a
// clear refusal or is read around, never an open that deletes data
// (defects 3, 6 and 8's offset mismatch).
#include <gtest/gtest.h>

#include <thread>

#include "bucket_test_util.h"
#include "crypto/encrypted_store.h"
#include "crypto/key_file.h"
#include "engine/bucket_layout.h"
#include "engine/current_object.h"
#include "engine/wal_part.h"
#include "engine_test_util.h"
#include "objstore/fault_store.h"
#include "objstore/memory_store.h"

namespace pail::engine {
namespace {

using pail::testing::FlushAll;
using pail::testing::HasSuffix;
using pail::testing::Keys;
using pail::testing::Read;
using pail::testing::TempDir;
using pail::testing::TestEngineOptions;
using pail::testing::Write;

void Fill(ObjectStore* store, const std::string& cache, int keys) {
  auto e = Engine::Open(TestEngineOptions(std::shared_ptr<ObjectStore>(store, [](ObjectStore*) {}), cache));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  for (int i = 0; i < keys; ++i) ASSERT_TRUE(Write(**e, "meta", "k" + std::to_string(i), "v").ok());
  ASSERT_TRUE(FlushAll(**e).ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Write(**e, "meta", "tail" + std::to_string(i), "t").ok());
  ASSERT_TRUE((*e)->Close().ok());
}

// Everything under db/ that was there must still be there.
void ExpectNothingDeleted(ObjectStore& store, const std::set<std::string>& before) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a collector would have run
  auto after = Keys(store, kDbPrefix);
  for (auto& k : before) EXPECT_TRUE(after.count(k)) << k << " was deleted";
}

// Defect 3: with no CURRENT, RocksDB would create an empty database and
// delete every old file.
TEST(DamagedBucket, MissingCurrentRefusesToOpenAndDeletesNothing) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  Fill(memory.get(), dir.Sub("a"), 300);
  for (auto& k : Keys(*memory, kDbPrefix)) {
    if (HasSuffix(k, "/CURRENT")) {
      ASSERT_TRUE(memory->Delete(k).ok());
    }
  }
  auto before = Keys(*memory, kDbPrefix);
  auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_FALSE(b.ok()) << "opened a bucket whose CURRENT is missing";
  EXPECT_NE(b.status().message().find("no CURRENT"), std::string::npos) << b.status().ToString();
  b = Status::NotFound("closed");
  ExpectNothingDeleted(*memory, before);
  // Still refused the second time, and still nothing deleted.
  auto c = Engine::Open(TestEngineOptions(memory, dir.Sub("c")));
  EXPECT_FALSE(c.ok());
  ExpectNothingDeleted(*memory, before);
}

TEST(DamagedBucket, CurrentNamingAMissingManifestRefusesClearly) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  Fill(memory.get(), dir.Sub("a"), 100);
  for (auto& k : Keys(*memory, kDbPrefix)) {
    if (k.find("/MANIFEST-") != std::string::npos) {
      ASSERT_TRUE(memory->Delete(k).ok());
    }
  }
  auto before = Keys(*memory, kDbPrefix);
  auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("not in the bucket"), std::string::npos) << b.status().ToString();
  ExpectNothingDeleted(*memory, before);
}

// Defect 6: zero-byte folder markers, plain and under encryption.
TEST(DamagedBucket, FolderMarkersAreSkipped) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  auto key = crypto::LoadOrCreateDataKey(*memory, "pw", {1, 8 * 1024, 1});
  ASSERT_TRUE(key.ok());
  auto encrypted = std::make_shared<crypto::EncryptedStore>(memory, *key);
  Fill(encrypted.get(), dir.Sub("a"), 100);
  for (const std::string& marker : std::vector<std::string>{"db/", "fence/", "db/" + PadNumber(1) + "/",
                                                            "db/" + PadNumber(1) + "/wal/"}) {
    ASSERT_TRUE(memory->Put(marker, "").ok());
  }
  for (int run = 0; run < 2; ++run) {  // and once more after a writer took the markers in stride
    auto e = Engine::Open(TestEngineOptions(encrypted, dir.Sub("b" + std::to_string(run))));
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(Read(**e, "meta", "k42"), "v");
    EXPECT_EQ(Read(**e, "meta", "tail3"), "t");
    ASSERT_TRUE((*e)->Close().ok());
  }
  // Unencrypted too (memory:// and tests use the engine without a key).
  auto plain = std::make_shared<MemoryStore>();
  Fill(plain.get(), dir.Sub("c"), 10);
  ASSERT_TRUE(plain->Put("db/", "").ok());
  ASSERT_TRUE(plain->Put("fence/", "").ok());
  auto e = Engine::Open(TestEngineOptions(plain, dir.Sub("d")));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(Read(**e, "meta", "k3"), "v");
}

// Defect 8: a part missing from the middle of a log was silently taken
// for a dropped log, losing every later write of it. Now it is refused.
TEST(DamagedBucket, WalPartMissingInTheMiddleOfALogIsRefused) {
  TempDir dir;
  auto memory = std::make_shared<MemoryStore>();
  {
    auto faults = std::make_shared<FaultStore>(memory, FaultOptions{});
    auto options = TestEngineOptions(faults, dir.Sub("a"));
    options.flush_interval = std::chrono::hours(1);
    auto a = Engine::Open(options);
    ASSERT_TRUE(a.ok());
    for (int part = 0; part < 3; ++part) {
      ASSERT_TRUE(Write(**a, "meta", "p" + std::to_string(part), "synced").ok());
      ASSERT_TRUE((*a)->Sync().ok());
    }
    faults->SetErrorRateAll(1.0);  // the writer dies: nothing more reaches the bucket
  }
  std::vector<std::string> parts;
  for (auto& k : Keys(*memory, FileKey(1, "wal/"))) parts.push_back(k);
  ASSERT_EQ(parts.size(), 3u);
  ASSERT_TRUE(memory->Delete(parts[1]).ok());
  auto before = Keys(*memory, kDbPrefix);
  auto b = Engine::Open(TestEngineOptions(memory, dir.Sub("b")));
  ASSERT_FALSE(b.ok()) << "opened, silently losing the writes after the missing part";
  EXPECT_TRUE(b.status().IsCorruption()) << b.status().ToString();
  EXPECT_NE(b.status().message().find("missing"), std::string::npos) << b.status().ToString();
  ExpectNothingDeleted(*memory, before);
}

TEST(CurrentObject, RoundTripsAndRejectsWhatIsNotOurs) {
  std::string body = EncodeCurrentObject("MANIFEST-000012\n", {1, 4, 9});
  auto decoded = DecodeCurrentObject(body, "k");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->rocksdb_current, "MANIFEST-000012\n");
  EXPECT_EQ(decoded->manifest, "MANIFEST-000012");
  ASSERT_TRUE(decoded->lineage);
  EXPECT_EQ(*decoded->lineage, (std::set<uint64_t>{1, 4, 9}));
  auto legacy = DecodeCurrentObject("MANIFEST-000005\n", "k");
  ASSERT_TRUE(legacy.ok());
  EXPECT_FALSE(legacy->lineage);
  for (std::string bad : {"", "MANIFEST-1", "../x\n", "MANIFEST-1\npail-lineage x\n", "MANIFEST-1\nfoo\n",
                          "MANIFEST-1\npail-lineage 0\n"}) {
    EXPECT_TRUE(DecodeCurrentObject(bad, "k").status().IsCorruption()) << bad;
  }
}

TEST(WalContinuity, SkipsDroppedLogsAndRefusesHoles) {
  auto part = [](uint64_t log, uint64_t offset, size_t n) {
    WalPart p;
    p.log_number = log;
    p.offset = offset;
    p.bytes.assign(n, 'x');
    return p;
  };
  WalContinuity c;
  EXPECT_TRUE(*c.Accept(part(5, 0, 10), "a"));
  EXPECT_FALSE(*c.Accept(part(4, 30, 10), "b"));  // log 4's start was collected: dropped
  EXPECT_FALSE(*c.Accept(part(4, 40, 10), "c"));
  EXPECT_TRUE(*c.Accept(part(5, 10, 5), "d"));
  EXPECT_TRUE(c.Accept(part(5, 20, 5), "e").status().IsCorruption());  // bytes 15..20 are missing
}

}  // namespace
}  // namespace pail::engine
