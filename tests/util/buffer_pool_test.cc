#include "util/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace pail {
namespace {

TEST(AlignedBuffer, IsAlignedAndAsLargeAsAskedFor) {
  for (size_t size : {size_t{1}, size_t{5000}, kPooledMinBytes + 3, size_t{17} << 20}) {
    AlignedBuffer b(size);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_GE(b.capacity(), size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kBufferAlign, 0u);
    std::memset(b.data(), 0xab, size);  // the whole size is usable (ASan checks)
  }
}

TEST(AlignedBuffer, AFreedLargeBufferIsHandedOutAgain) {
  char* first;
  {
    AlignedBuffer b(3 << 20);
    first = b.data();
  }
  AlignedBuffer again(3 << 20);
  EXPECT_EQ(again.data(), first);
  // A smaller request may take a larger idle buffer, not a smaller one.
  AlignedBuffer bigger(5 << 20);
  EXPECT_NE(bigger.data(), first);
}

TEST(AlignedBuffer, MovesHandOverTheMemory) {
  AlignedBuffer a(2 << 20);
  char* p = a.data();
  AlignedBuffer b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(b.data(), p);
  AlignedBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(b.data(), nullptr);
}

TEST(AlignedBuffer, IdleMemoryStaysWithinItsBound) {
  // Free more than the bound allows to keep: the kept ones fill the bound
  // to within one buffer and no further.
  const size_t each = 8 << 20;
  {
    std::vector<AlignedBuffer> held;
    for (size_t i = 0; i < kIdleBytesMax / each + 4; ++i) held.emplace_back(each);
  }
  EXPECT_GT(IdleBufferBytes(), kIdleBytesMax - each);
  // Both kinds (aligned buffers, strings) have the bound each.
  EXPECT_LE(IdleBufferBytes(), 2 * kIdleBytesMax);
}

TEST(AlignedBuffer, ALargeBufferDisplacesSmallerIdleOnes) {
  // Fill the idle list with small buffers, then return a big one: it is
  // kept (smaller ones make room), so the next big request reuses it.
  const size_t small = 2 << 20;
  const size_t big = 18 << 20;
  {
    std::vector<AlignedBuffer> held;
    for (size_t i = 0; i < kIdleBytesMax / small + 2; ++i) held.emplace_back(small);
  }
  char* first;
  {
    AlignedBuffer b(big);
    first = b.data();
  }
  AlignedBuffer again(big);
  EXPECT_EQ(again.data(), first);
}

TEST(AlignedBuffer, IdleBuffersNoOneTookSinceTheLastReleaseAreFreed) {
  // Two calls with nothing taken between them free whatever other tests
  // left idle.
  ReleaseUnusedIdleBuffers();
  ReleaseUnusedIdleBuffers();
  ASSERT_EQ(IdleBufferBytes(), 0u);
  const size_t each = 8 << 20;
  {
    AlignedBuffer a(each), b(each);
  }
  const size_t idle = IdleBufferBytes();
  ASSERT_GE(idle, 2 * each);
  // Just returned: they were not idle since the last call.
  EXPECT_EQ(ReleaseUnusedIdleBuffers(), 0u);
  {
    AlignedBuffer taken(each);  // one is needed again...
    // ...and the other stayed idle all along, so it goes.
    EXPECT_EQ(ReleaseUnusedIdleBuffers(), idle / 2);
    EXPECT_EQ(IdleBufferBytes(), 0u);
  }
  // The one in use is back and idle since this moment only.
  EXPECT_EQ(IdleBufferBytes(), idle / 2);
  EXPECT_EQ(ReleaseUnusedIdleBuffers(), 0u);
  EXPECT_EQ(ReleaseUnusedIdleBuffers(), idle / 2);
  EXPECT_EQ(IdleBufferBytes(), 0u);
}

TEST(StringBuffer, IsEmptyWithTheCapacityAskedForAndIsReused) {
  std::string s = TakeStringBuffer(4 << 20);
  EXPECT_TRUE(s.empty());
  EXPECT_GE(s.capacity(), size_t{4} << 20);
  s.assign(1000, 'x');
  const char* p = s.data();
  ReturnStringBuffer(std::move(s));
  std::string again = TakeStringBuffer(2 << 20);
  EXPECT_EQ(again.data(), p);
  EXPECT_TRUE(again.empty());
  // Small ones are ordinary strings.
  std::string small = TakeStringBuffer(100);
  EXPECT_GE(small.capacity(), 100u);
}

}  // namespace
}  // namespace pail
