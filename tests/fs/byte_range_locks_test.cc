#include "fs/byte_range_locks.h"

#include <gtest/gtest.h>

namespace pail::fs {
namespace {

constexpr Ino kFile = 42;

LockRange Range(LockKind kind, uint64_t start, uint64_t length, LockOwner owner) {
  return {kind, start, length, std::move(owner)};
}

const LockOwner kA{1, 100, "a"};
const LockOwner kB{2, 200, "b"};

TEST(ByteRangeLocksTest, WriteExcludesOthersReadShares) {
  ByteRangeLocks locks;
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kRead, 0, 10, kA)).ok());
  EXPECT_TRUE(locks.Lock(kFile, Range(LockKind::kRead, 5, 10, kB)).ok());
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kWrite, 9, 1, kB)).error(), EAGAIN);
  EXPECT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 15, 5, kB)).ok());
  auto c = locks.Conflict(kFile, Range(LockKind::kWrite, 0, 0, kA));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->owner, kB);
  // Other files are independent.
  EXPECT_TRUE(locks.Lock(kFile + 1, Range(LockKind::kWrite, 0, 0, kA)).ok());
}

TEST(ByteRangeLocksTest, OwnLocksNeverConflictAndAreReplaced) {
  ByteRangeLocks locks;
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 0, 100, kA)).ok());
  // Downgrading the middle splits the write lock in three.
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kRead, 40, 20, kA)).ok());
  EXPECT_TRUE(locks.Lock(kFile, Range(LockKind::kRead, 45, 5, kB)).ok());
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kRead, 39, 1, kB)).error(), EAGAIN);
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kRead, 60, 1, kB)).error(), EAGAIN);
  auto c = locks.Conflict(kFile, Range(LockKind::kRead, 0, 0, kB));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, LockKind::kWrite);
  EXPECT_EQ(c->start, 0u);
  EXPECT_EQ(c->length, 40u);
}

TEST(ByteRangeLocksTest, UnlockSplitsAndToEndOfFile) {
  ByteRangeLocks locks;
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 10, 0, kA)).ok());  // 10..EOF
  EXPECT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 0, 10, kB)).ok());
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kWrite, 1ull << 62, 1, kB)).error(), EAGAIN);
  locks.Unlock(kFile, kA, 100, 100);
  EXPECT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 150, 10, kB)).ok());
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kWrite, 99, 1, kB)).error(), EAGAIN);
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kWrite, 200, 1, kB)).error(), EAGAIN);
  locks.Unlock(kFile, kA, 0, 0);
  EXPECT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 10, 0, kB)).ok());
}

TEST(ByteRangeLocksTest, AdjacentRangesMergeSoUnlockingOneByteSplits) {
  ByteRangeLocks locks(3);
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 0, 10, kA)).ok());
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 20, 10, kA)).ok());
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 10, 10, kA)).ok());  // merges all three
  auto c = locks.Conflict(kFile, Range(LockKind::kRead, 0, 0, kB));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->start, 0u);
  EXPECT_EQ(c->length, 30u);
}

TEST(ByteRangeLocksTest, BoundsAndSessions) {
  ByteRangeLocks locks(2);
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kWrite, ~0ull, 2, kA)).error(), EINVAL);
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 0, 1, kA)).ok());
  ASSERT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 5, 1, kA)).ok());
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kWrite, 9, 1, kA)).error(), ENOLCK);
  // The refused request left the owner's locks as they were.
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kWrite, 5, 1, kB)).error(), EAGAIN);
  locks.ReleaseSession(kA.session);
  EXPECT_TRUE(locks.Lock(kFile, Range(LockKind::kWrite, 0, 0, kB)).ok());
  // Same process id and name on another session is another owner.
  LockOwner a_elsewhere{3, kB.process, kB.name};
  EXPECT_EQ(locks.Lock(kFile, Range(LockKind::kRead, 0, 1, a_elsewhere)).error(), EAGAIN);
}

}  // namespace
}  // namespace pail::fs
