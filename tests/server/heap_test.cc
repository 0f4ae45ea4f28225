#include "server/heap.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace pail::server {
namespace {

TEST(HeapTrimmer, TrimsOnlyWhatStayedOverTheBoundForTwoChecks) {
  uint64_t free_bytes = 0;
  int trims = 0;
  HeapTrimmer trimmer(100, [&] { return free_bytes; }, [&] { ++trims; });
  std::vector<bool> trimmed;
  for (uint64_t f : {10, 200, 10, 200, 200, 200, 200, 200, 100, 200, 200}) {
    free_bytes = f;
    trimmed.push_back(trimmer.Tick());
  }
  // A burst seen once is left alone; memory that stays over the bound is
  // trimmed at every second check; exactly the bound is within it.
  EXPECT_EQ(trimmed, (std::vector<bool>{false, false, false, false, true, false, true, false,
                                        false, false, true}));
  EXPECT_EQ(trims, 3);
}

uint64_t ResidentBytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// The real heap, configured as the server's: free memory below a block
// still in use (where glibc never trims by itself) goes back to the kernel.
TEST(HeapTrimmer, GivesFreeMemoryBelowTheHeapTopBack) {
  ConfigureHeap();
  constexpr size_t kBlock = 1 << 20;
  constexpr size_t kBlocks = 2 * kRetainedFreeHeapBytes / kBlock;
  std::vector<std::unique_ptr<char[]>> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.emplace_back(new char[kBlock]);
    for (size_t b = 0; b < kBlock; b += 4096) blocks.back()[b] = 1;
  }
  auto pin = std::make_unique<char[]>(64);  // above them all: no trim at the top
  blocks.clear();
  struct mallinfo2 info = mallinfo2();
  if (info.fordblks < kRetainedFreeHeapBytes) {
    GTEST_SKIP() << "this allocator does not report glibc's free lists (a sanitizer's?)";
  }
  const uint64_t before = ResidentBytes();
  HeapTrimmer trimmer = HeapTrimmer::ForProcessHeap();
  EXPECT_FALSE(trimmer.Tick());
  EXPECT_TRUE(trimmer.Tick());
  const uint64_t after = ResidentBytes();
  EXPECT_LT(after + kRetainedFreeHeapBytes, before) << "resident " << before << " -> " << after;
}

}  // namespace
}  // namespace pail::server
