#include "engine/segment_memory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "engine/data_objects.h"
#include "engine/disk_cache.h"
#include "engine_test_util.h"
#include "objstore/counting_store.h"
#include "objstore/local_store.h"
#include "objstore/memory_store.h"
#include "util/buffer_pool.h"
#include "util/failpoint.h"

namespace pail::engine {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// A pooled body (as SegmentBuilder makes them) of `n` bytes of a pattern.
std::string Body(size_t n, int seed) {
  std::string s = TakeStringBuffer(n);
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>((i * 7 + seed * 13 + (i >> 12)) & 0xff));
  return s;
}

TEST(SegmentMemory, KeepsTheBufferItselfAndServesReads) {
  SegmentMemory memory(64 * kMiB);
  std::string body = Body(3 * kMiB, 1);
  const std::string expect(body);
  const char* buffer = body.data();
  memory.Keep(7, std::move(body));
  EXPECT_EQ(memory.entries(), 1u);
  std::string out(100, '\0');
  ASSERT_TRUE(memory.Read(7, kMiB + 5, out.size(), out.data()));
  EXPECT_EQ(out, expect.substr(kMiB + 5, 100));
  // Past the end, or another id: nothing.
  EXPECT_FALSE(memory.Read(7, 3 * kMiB - 10, 100, out.data()));
  EXPECT_FALSE(memory.Read(8, 0, 100, out.data()));
  EXPECT_EQ(memory.hits(), 1u);
  // Erased, the very buffer goes back to the pool and the next upload gets it.
  memory.Erase(7);
  EXPECT_FALSE(memory.Read(7, 0, 100, out.data()));
  EXPECT_EQ(memory.charged(), 0u);
  std::string next = TakeStringBuffer(3 * kMiB);
  EXPECT_EQ(next.data(), buffer);
  ReturnStringBuffer(std::move(next));
}

TEST(SegmentMemory, StaysWithinItsBoundAndEvictedBuffersGoBackToThePool) {
  // Room for about three 4 MiB bodies.
  SegmentMemory memory(13 * kMiB);
  std::vector<const char*> buffers;
  for (uint64_t id = 1; id <= 10; ++id) {
    std::string body = Body(4 * kMiB, static_cast<int>(id));
    buffers.push_back(body.data());
    memory.Keep(id, std::move(body));
    EXPECT_LE(memory.charged(), memory.capacity());
  }
  EXPECT_EQ(memory.entries(), 3u);
  EXPECT_EQ(memory.evictions(), 7u);
  // The newest ones are kept, the oldest evicted.
  std::string out(10, '\0');
  EXPECT_TRUE(memory.Read(10, 0, 10, out.data()));
  EXPECT_FALSE(memory.Read(1, 0, 10, out.data()));
  // An evicted body was handed back: a new upload gets one of them (the
  // pool's idle bound may have freed some, never all of the last few).
  std::string next = TakeStringBuffer(4 * kMiB);
  bool reused = false;
  for (const char* b : buffers) reused = reused || next.data() == b;
  EXPECT_TRUE(reused);
  ReturnStringBuffer(std::move(next));
}

TEST(SegmentMemory, ABodyBiggerThanTheBoundIsNotKept) {
  SegmentMemory memory(2 * kMiB);
  memory.Keep(1, Body(3 * kMiB, 1));
  EXPECT_EQ(memory.entries(), 0u);
  EXPECT_EQ(memory.charged(), 0u);
  SegmentMemory none(0);
  none.Keep(1, Body(10, 1));
  EXPECT_EQ(none.entries(), 0u);
}

TEST(SegmentMemory, ARecentlyReadEntryOutlivesAnUnreadOne) {
  // Below the pool's sizes: ordinary strings, whose capacity is their size.
  const size_t n = 256 * 1024;
  const size_t charge = std::string(n, 'x').capacity() + SegmentMemory::kEntryOverheadBytes;
  SegmentMemory memory(2 * charge);
  memory.Keep(1, std::string(n, '1'));
  memory.Keep(2, std::string(n, '2'));
  ASSERT_EQ(memory.entries(), 2u);
  std::string out(10, '\0');
  ASSERT_TRUE(memory.Read(1, 0, 10, out.data()));
  memory.Keep(3, std::string(n, '3'));  // evicts 2, the unread one
  EXPECT_TRUE(memory.Read(1, 0, 10, out.data()));
  EXPECT_EQ(out, std::string(10, '1'));
  EXPECT_FALSE(memory.Read(2, 0, 10, out.data()));
  EXPECT_TRUE(memory.Read(3, 0, 10, out.data()));
}

TEST(SegmentMemory, ASmallBodyIsCopiedAndABigOneKeptInItsBuffer) {
  SegmentMemory memory(64 * kMiB);
  std::string small = TakeStringBuffer(8 * kMiB);
  small.assign(100 * 1024, 'y');
  const char* small_buffer = small.data();
  memory.Keep(1, std::move(small));
  EXPECT_LT(memory.charged(), kMiB);
  std::string out(10, '\0');
  EXPECT_TRUE(memory.Read(1, 100 * 1024 - 10, 10, out.data()));
  EXPECT_EQ(out, std::string(10, 'y'));
  // The big buffer went straight back to the pool.
  std::string next = TakeStringBuffer(8 * kMiB);
  EXPECT_EQ(next.data(), small_buffer);

  // Megabytes are not copied (fresh memory): the buffer itself is kept and
  // charged for all of it.
  next.assign(2 * kMiB, 'z');
  const size_t capacity = next.capacity();
  const size_t before = memory.charged();
  memory.Keep(2, std::move(next));
  EXPECT_EQ(memory.charged() - before, capacity + SegmentMemory::kEntryOverheadBytes);
  EXPECT_TRUE(memory.Read(2, 2 * kMiB - 10, 10, out.data()));
  EXPECT_EQ(out, std::string(10, 'z'));
  memory.Erase(2);
  std::string again = TakeStringBuffer(8 * kMiB);
  EXPECT_EQ(again.data(), small_buffer);  // back in the pool once erased
  ReturnStringBuffer(std::move(again));
}

TEST(SegmentMemory, SmallBodiesAreChargedTheirOverhead) {
  // Tiny bodies (a FLUSH of one 4 KiB write) cannot grow memory past the
  // bound through their bookkeeping.
  SegmentMemory memory(64 * 1024);
  for (uint64_t id = 1; id <= 10000; ++id) {
    memory.Keep(id, std::string(16, 'x'));
    ASSERT_LE(memory.charged(), memory.capacity());
  }
  EXPECT_LE(memory.entries() * SegmentMemory::kEntryOverheadBytes, memory.capacity());
  // Erasing most of them keeps the clock's leftovers bounded too (no
  // observable effect but time; this only must not misbehave).
  for (uint64_t id = 1; id <= 10000; ++id) memory.Erase(id);
  EXPECT_EQ(memory.entries(), 0u);
  EXPECT_EQ(memory.charged(), 0u);
}

// Readers copy without the lock, pinning their entry: entries evicted or
// erased under them stay charged until they are done, so the bound holds
// throughout, every copy is right, and nothing stays charged after.
TEST(SegmentMemory, ConcurrentReadersAndKeepersStayConsistent) {
  SegmentMemory memory(10 * kMiB);
  std::vector<std::string> expect;
  for (int id = 0; id <= 40; ++id) expect.push_back(Body(3 * kMiB, id).substr(4096, 2 * kMiB));
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::atomic<uint64_t> over{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      std::string out(2 * kMiB, '\0');
      while (!stop.load()) {
        for (uint64_t id = 1; id <= 40; ++id) {
          if (memory.Read(id, 4096, out.size(), out.data()) && out != expect[id]) wrong++;
          if (memory.charged() > memory.capacity()) over++;
        }
      }
    });
  }
  for (int round = 0; round < 3; ++round) {
    for (uint64_t id = 1; id <= 40; ++id) {
      memory.Keep(id, Body(3 * kMiB, static_cast<int>(id)));
      if (id % 3 == 0) memory.Erase(id - 1);
      if (memory.charged() > memory.capacity()) over++;
    }
    for (uint64_t id = 1; id <= 40; ++id) memory.Erase(id);
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(over.load(), 0u);
  EXPECT_EQ(memory.entries(), 0u);
  EXPECT_EQ(memory.charged(), 0u) << "an entry evicted while read stayed charged";
}

// DataObjects with its segment memory: reads of an upload cost no request,
// a deleted object's body is gone, a failed upload keeps nothing.
struct Objects {
  explicit Objects(size_t memory_bytes)
      : counting(std::make_shared<CountingStore>(std::make_shared<MemoryStore>())),
        cache(counting, dir.Sub("cache"), 64 * kMiB),
        objects(counting, cache, memory_bytes, 1, [] { return Status::OK(); }) {}
  uint64_t Gets() const {
    auto r = counting->Snapshot().requests;
    return r[int(OpKind::kGet)] + r[int(OpKind::kGetRange)];
  }
  pail::testing::TempDir dir;
  std::shared_ptr<CountingStore> counting;
  DiskCache cache;
  DataObjects objects;
};

TEST(DataObjectsMemory, AnUploadIsReadBackFromMemory) {
  Objects o(64 * kMiB);
  const uint64_t id = o.objects.NewId();
  const std::string expect = Body(2 * kMiB + 17, 5);
  ASSERT_TRUE(o.objects.Put(id, Body(2 * kMiB + 17, 5), true).ok());
  o.cache.Remove(DataObjects::Key(id));  // not from the disk cache either
  const uint64_t gets = o.Gets();
  std::string out(kMiB, '\0');
  auto n = o.objects.Read(id, expect.size(), kMiB + 3, out.size(), out.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, out.size());
  EXPECT_EQ(out, expect.substr(kMiB + 3, kMiB));
  // Clamped at the object's end, as a bucket read is.
  n = o.objects.Read(id, expect.size(), expect.size() - 10, 100, out.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 10u);
  EXPECT_EQ(out.substr(0, 10), expect.substr(expect.size() - 10));
  // The non-blocking read is served too, and counts as no bucket read.
  auto cached = o.objects.ReadCached(id, expect.size(), 0, 4096, out.data());
  ASSERT_TRUE(cached.ok());
  ASSERT_TRUE(cached->has_value());
  EXPECT_EQ(out.substr(0, 4096), expect.substr(0, 4096));
  EXPECT_TRUE(o.objects.Prefetch(id, expect.size(), 0, kMiB).ok());
  EXPECT_EQ(o.Gets(), gets);
  EXPECT_EQ(o.cache.misses(), 0u);
}

TEST(DataObjectsMemory, ADeletedObjectIsNotServedFromMemory) {
  Objects o(64 * kMiB);
  const uint64_t id = o.objects.NewId();
  ASSERT_TRUE(o.objects.Put(id, Body(kMiB, 6), true).ok());
  ASSERT_TRUE(o.objects.Delete({id}).ok());
  EXPECT_FALSE(o.objects.memory().Contains(id));
  EXPECT_EQ(o.objects.memory().charged(), 0u);
  std::string out(4096, '\0');
  EXPECT_FALSE(o.objects.Read(id, kMiB, 0, out.size(), out.data()).ok());
  // A new object never reuses the id.
  EXPECT_NE(o.objects.NewId(), id);
}

TEST(DataObjectsMemory, UnkeptAndFailedUploadsLeaveNothingInMemory) {
  Objects o(64 * kMiB);
  const uint64_t id = o.objects.NewId();
  ASSERT_TRUE(o.objects.Put(id, Body(kMiB, 7), false).ok());
  EXPECT_FALSE(o.objects.memory().Contains(id));
  ArmFailpoint("data/before_upload", FailAction::kError);
  const uint64_t failed = o.objects.NewId();
  EXPECT_FALSE(o.objects.Put(failed, Body(kMiB, 8), true).ok());
  DisarmAllFailpoints();
  EXPECT_FALSE(o.objects.memory().Contains(failed));
  EXPECT_EQ(o.objects.memory().entries(), 0u);
  Objects none(0);
  const uint64_t other = none.objects.NewId();
  ASSERT_TRUE(none.objects.Put(other, Body(kMiB, 7), true).ok());
  EXPECT_EQ(none.objects.memory().entries(), 0u);
  std::string out(4096, '\0');
  auto n = none.objects.Read(other, kMiB, 0, out.size(), out.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(out, Body(kMiB, 7).substr(0, 4096));
}

}  // namespace
}  // namespace pail::engine
