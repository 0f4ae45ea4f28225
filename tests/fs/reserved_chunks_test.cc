// ReservedChunks: the run set of a file's reserved chunks and its encoding.
#include "fs/reserved_chunks.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace pail::fs {
namespace {

std::vector<ChunkRun> Runs(const ReservedChunks& r) { return r.runs(); }

TEST(ReservedChunks, AddMergesAndReportsOnlyWhatIsNew) {
  ReservedChunks r;
  EXPECT_EQ(r.Add({10, 20}), (std::vector<ChunkRun>{{10, 20}}));
  EXPECT_EQ(r.Add({30, 40}), (std::vector<ChunkRun>{{30, 40}}));
  EXPECT_EQ(r.Add({12, 18}), std::vector<ChunkRun>{});
  // Touching runs melt; the gap is what is new.
  EXPECT_EQ(r.Add({20, 30}), (std::vector<ChunkRun>{{20, 30}}));
  EXPECT_EQ(Runs(r), (std::vector<ChunkRun>{{10, 40}}));
  EXPECT_EQ(r.Add({5, 50}), (std::vector<ChunkRun>{{5, 10}, {40, 50}}));
  EXPECT_EQ(r.Count(), 45u);
  EXPECT_TRUE(r.Contains(5));
  EXPECT_TRUE(r.Contains(49));
  EXPECT_FALSE(r.Contains(4));
  EXPECT_FALSE(r.Contains(50));
  EXPECT_EQ(r.Add({7, 7}), std::vector<ChunkRun>{});
}

TEST(ReservedChunks, RemoveCutsRunsAndCountsWhatWasReserved) {
  ReservedChunks r;
  r.Add({0, 10});
  r.Add({20, 30});
  EXPECT_EQ(r.Remove({5, 25}), 10u);
  EXPECT_EQ(Runs(r), (std::vector<ChunkRun>{{0, 5}, {25, 30}}));
  EXPECT_EQ(r.Remove({1, 3}), 2u);
  EXPECT_EQ(Runs(r), (std::vector<ChunkRun>{{0, 1}, {3, 5}, {25, 30}}));
  EXPECT_EQ(r.Remove({40, 50}), 0u);
  EXPECT_EQ(r.Remove({0, UINT64_MAX}), 8u);
  EXPECT_TRUE(r.empty());
}

TEST(ReservedChunks, PastTheBoundTheClosestRunsMergeAndTheGapIsNew) {
  ReservedChunks r;
  for (uint64_t i = 0; i < ReservedChunks::kMaxRuns; ++i) r.Add({i * 10, i * 10 + 1});
  // Gaps of 9 everywhere; a run 2 after the last leaves a gap of 1 there.
  const uint64_t last = (ReservedChunks::kMaxRuns - 1) * 10;
  EXPECT_EQ(r.Add({last + 3, last + 4}), (std::vector<ChunkRun>{{last + 1, last + 4}}));
  EXPECT_EQ(r.runs().size(), ReservedChunks::kMaxRuns);
  EXPECT_EQ(r.runs().back(), (ChunkRun{last, last + 4}));
  // A cut that would split a run past the bound releases nothing.
  EXPECT_EQ(r.Remove({last + 1, last + 2}), 0u);
  EXPECT_TRUE(r.Contains(last + 1));
}

TEST(ReservedChunks, MatchesASetOfIndexesUnderRandomChanges) {
  std::mt19937_64 rng(7);
  ReservedChunks r;
  std::set<uint64_t> model;
  for (int step = 0; step < 3000; ++step) {
    uint64_t first = rng() % 2000;
    uint64_t end = first + 1 + rng() % 40;
    if (rng() % 3 != 0) {
      std::set<uint64_t> before = model;
      uint64_t added_count = 0;
      for (const ChunkRun& a : r.Add({first, end})) {
        for (uint64_t i = a.first; i < a.end; ++i) {
          ASSERT_FALSE(before.count(i)) << "chunk " << i << " reported new twice";
          model.insert(i);
          ++added_count;
        }
      }
      for (uint64_t i = first; i < end; ++i) ASSERT_TRUE(model.count(i));
      ASSERT_EQ(model.size(), before.size() + added_count);
    } else {
      const size_t runs_before = r.runs().size();
      uint64_t removed = r.Remove({first, end});
      uint64_t expected = 0;
      for (uint64_t i = first; i < end; ++i) expected += model.count(i);
      if (removed == 0 && expected != 0) {
        ASSERT_EQ(r.runs().size(), runs_before);  // refused at the bound
        continue;
      }
      ASSERT_EQ(removed, expected);
      for (uint64_t i = first; i < end; ++i) model.erase(i);
    }
    ASSERT_LE(r.runs().size(), ReservedChunks::kMaxRuns);
    ASSERT_EQ(r.Count(), model.size());
    for (size_t k = 1; k < r.runs().size(); ++k) {
      ASSERT_LT(r.runs()[k - 1].end, r.runs()[k].first);  // sorted and apart
    }
  }
  for (uint64_t i = 0; i < 2100; ++i) ASSERT_EQ(r.Contains(i), model.count(i) == 1) << i;
}

TEST(ReservedChunks, EncodingRoundTripsAndRefusesMalformedRuns) {
  ReservedChunks r;
  r.Add({1, 4});
  r.Add({1ull << 40, (1ull << 40) + 9});
  std::string encoded;
  r.AppendTo(&encoded);
  EXPECT_EQ(encoded.size(), 2 * ReservedChunks::kEncodedRunBytes);
  ReservedChunks back;
  ASSERT_TRUE(back.Parse(encoded));
  EXPECT_EQ(back, r);
  EXPECT_TRUE(back.Parse(""));
  EXPECT_TRUE(back.empty());
  EXPECT_FALSE(back.Parse(encoded.substr(1)));  // not whole runs
  auto run = [](uint64_t first, uint64_t end) {
    ReservedChunks one;
    one.Add({first, end});
    std::string s;
    one.AppendTo(&s);
    return s;
  };
  EXPECT_FALSE(back.Parse(run(5, 9) + run(1, 3)));   // out of order
  EXPECT_FALSE(back.Parse(run(1, 5) + run(5, 9)));   // touching
  std::string empty_run(16, '\0');
  EXPECT_FALSE(back.Parse(empty_run));               // first == end
  std::string too_many;
  for (uint64_t i = 0; i <= ReservedChunks::kMaxRuns; ++i) too_many += run(2 * i, 2 * i + 1);
  EXPECT_FALSE(back.Parse(too_many));
}

}  // namespace
}  // namespace pail::fs
