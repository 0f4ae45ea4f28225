#include "fs/record_cache.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace pail::fs {
namespace {

InodeRecord RecordWithMode(uint32_t mode) {
  InodeRecord r;
  r.mode = S_IFREG | mode;
  r.nlink = 1;
  r.symlink_target = "kept as it was";
  return r;
}

TEST(InodeCacheTest, StoredRecordsAreFoundUntilDeleted) {
  InodeCache cache(1024);
  EXPECT_FALSE(cache.Find(7).has_value());
  InodeRecord r = RecordWithMode(0644);
  cache.Store(7, &r);
  ASSERT_TRUE(cache.Find(7).has_value());
  EXPECT_EQ(cache.Find(7)->mode, r.mode);
  EXPECT_EQ(cache.Find(7)->symlink_target, r.symlink_target);
  InodeRecord changed = RecordWithMode(0600);
  cache.Store(7, &changed);
  EXPECT_EQ(cache.Find(7)->mode, changed.mode);
  cache.Store(7, nullptr);
  EXPECT_FALSE(cache.Find(7).has_value());
}

TEST(InodeCacheTest, AFillKeepsARecordReadWithNoCommitBetween) {
  InodeCache cache(1024);
  const uint64_t ticket = cache.Ticket(9);
  cache.Fill(9, RecordWithMode(0640), ticket);
  ASSERT_TRUE(cache.Find(9).has_value());
  EXPECT_EQ(cache.Find(9)->mode, S_IFREG | 0640u);
}

// A reader took its ticket, then read the engine before a commit changed
// the record; the commit stored the new record before the reader's Fill.
TEST(InodeCacheTest, AFillOlderThanACommitIsDropped) {
  InodeCache cache(1024);
  const uint64_t ticket = cache.Ticket(9);
  InodeRecord newer = RecordWithMode(0600);
  cache.Store(9, &newer);
  cache.Fill(9, RecordWithMode(0644), ticket);
  EXPECT_EQ(cache.Find(9)->mode, newer.mode);

  // The same when the commit deleted the record, or failed (Forget).
  const uint64_t before_delete = cache.Ticket(9);
  cache.Store(9, nullptr);
  cache.Fill(9, RecordWithMode(0644), before_delete);
  EXPECT_FALSE(cache.Find(9).has_value());
  const uint64_t before_failure = cache.Ticket(9);
  cache.Forget(9);
  cache.Fill(9, RecordWithMode(0644), before_failure);
  EXPECT_FALSE(cache.Find(9).has_value());
}

TEST(InodeCacheTest, HoldsAtMostItsCapacityAndKeepsTheLatest) {
  InodeCache cache(64);
  for (Ino ino = 1; ino <= 10000; ++ino) {
    InodeRecord r = RecordWithMode(ino & 0777);
    cache.Store(ino, &r);
    // The record just stored is never the one evicted.
    ASSERT_TRUE(cache.Find(ino).has_value());
    ASSERT_EQ(cache.Find(ino)->mode, S_IFREG | (ino & 0777));
  }
  EXPECT_LE(cache.size(), 64u);
  EXPECT_GE(cache.size(), 32u);
}

TEST(InodeCacheTest, RecentlyFoundRecordsOutliveOthers) {
  InodeCache cache(16 * 4);
  InodeRecord hot = RecordWithMode(0700);
  cache.Store(1, &hot);
  for (Ino ino = 2; ino <= 2000; ++ino) {
    InodeRecord r = RecordWithMode(0600);
    cache.Store(ino, &r);
    ASSERT_TRUE(cache.Find(1).has_value()) << "evicted after " << ino;
  }
}

TEST(InodeCacheTest, ZeroCapacityKeepsNothing) {
  InodeCache cache(0);
  InodeRecord r = RecordWithMode(0644);
  cache.Store(3, &r);
  cache.Fill(4, r, cache.Ticket(4));
  EXPECT_FALSE(cache.Find(3).has_value());
  EXPECT_FALSE(cache.Find(4).has_value());
  EXPECT_EQ(cache.size(), 0u);
}

// Absent names are cached as such, and a commit that creates one replaces
// the absence; a Forget (failed commit) leaves nothing to trust.
TEST(DentryCacheTest, AbsentNamesAreCachedUntilACommitWritesThem) {
  DentryCache cache(1024);
  const std::string key = DirEntryKey(1, "name");
  EXPECT_FALSE(cache.Find(key).has_value());
  cache.Fill(key, std::nullopt, cache.Ticket(key));
  ASSERT_TRUE(cache.Find(key).has_value());
  EXPECT_FALSE(cache.Find(key)->has_value());

  const std::optional<DirEntryValue> created = DirEntryValue{42, 7, S_IFREG};
  cache.Store(key, &created);
  ASSERT_TRUE(cache.Find(key).has_value());
  ASSERT_TRUE(cache.Find(key)->has_value());
  EXPECT_EQ((*cache.Find(key))->ino, 42u);
  EXPECT_EQ((*cache.Find(key))->cookie, 7u);

  const std::optional<DirEntryValue> removed;
  cache.Store(key, &removed);
  ASSERT_TRUE(cache.Find(key).has_value());
  EXPECT_FALSE(cache.Find(key)->has_value());

  cache.Forget(key);
  EXPECT_FALSE(cache.Find(key).has_value());
  // The same name in another directory is another key.
  EXPECT_FALSE(cache.Find(DirEntryKey(2, "name")).has_value());
}

// A lookup that read "absent" before a create committed must not leave the
// absence behind once the create stored the entry.
TEST(DentryCacheTest, AnAbsenceReadBeforeACreateIsDropped) {
  DentryCache cache(1024);
  const std::string key = DirEntryKey(3, "racing");
  const uint64_t ticket = cache.Ticket(key);
  const std::optional<DirEntryValue> created = DirEntryValue{9, 3, S_IFDIR};
  cache.Store(key, &created);
  cache.Fill(key, std::nullopt, ticket);
  ASSERT_TRUE(cache.Find(key).has_value());
  ASSERT_TRUE(cache.Find(key)->has_value());
  EXPECT_EQ((*cache.Find(key))->ino, 9u);
}

// The listener hears of every record let go to make room, and of each one
// a cache of capacity 0 does not keep; not of replacements or deletions.
TEST(InodeCacheTest, EvictionsAreToldToTheListener) {
  std::vector<Ino> evicted;
  InodeCache cache(16, [&](const Ino& ino, const InodeRecord&) { evicted.push_back(ino); });
  std::set<Ino> kept;
  for (Ino ino = 1; ino <= 500; ++ino) {
    InodeRecord r = RecordWithMode(0644);
    cache.Store(ino, &r);
    cache.Store(ino, &r);  // a replacement evicts nothing
  }
  cache.Store(500, nullptr);  // neither does a deletion
  for (Ino ino = 1; ino <= 500; ++ino) {
    if (cache.Find(ino)) kept.insert(ino);
  }
  EXPECT_EQ(evicted.size() + kept.size(), 499u);
  for (Ino ino : evicted) EXPECT_EQ(kept.count(ino), 0u) << ino;

  std::vector<Ino> not_kept;
  InodeCache none(0, [&](const Ino& ino, const InodeRecord&) { not_kept.push_back(ino); });
  InodeRecord r = RecordWithMode(0644);
  none.Store(3, &r);
  EXPECT_EQ(not_kept, std::vector<Ino>{3});
}

}  // namespace
}  // namespace pail::fs
