#include "engine/disk_cache.h"

#include <gtest/gtest.h>

#include "engine_test_util.h"
#include "objstore/counting_store.h"
#include "objstore/memory_store.h"

namespace pail::engine {
namespace {

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + seed * 13 + (i >> 12)) & 0xff);
  return s;
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
  // The tail is short.
  n = cache.Read("o0", kSize, kSize - 23, 1000, buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 23u);
  EXPECT_EQ(std::string(buf.data(), 23), Pattern(kSize, 0).substr(kSize - 23));

  // Reading everything keeps the cache within its budget, and correct.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 4; ++i) {
      std::string whole(kSize, '\0');
      auto r = cache.Read("o" + std::to_string(i), kSize, 0, kSize, whole.data());
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(whole, Pattern(kSize, i));
      EXPECT_LE(cache.cached_bytes(), 8 * kCacheExtentBytes);
    }
  }
}

TEST(DiskCache, MissingObjectIsAnError) {
  pail::testing::TempDir dir;
  DiskCache cache(std::make_shared<MemoryStore>(), dir.Sub("cache"), 1 << 20);
  char buf[10];
  auto r = cache.Read("nope", 100, 0, 10, buf);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace pail::engine
