#include "server/heap.h"

#include <malloc.h>

namespace pail::server {

// Buffers up to kLargestPooledBuffer come from the heap, and up to
// kRetainedTopBytes free at the heap's top stay there: without them every
// segment buffer cost a page fault per 4 KiB touched, most of the CPU time
// of a sequential read. Each malloc arena keeps its own free memory, and
// glibc adds one whenever a thread finds the others locked, up to eight per
// core: a ten-million-file run ended with 16 arenas holding 264 MB free
// beside 300 MB in use. Two bound what is retained; small blocks come from
// each thread's cache without an arena's lock, and at two the creation and
// data-path rates did not change measurably.
void ConfigureHeap() {
  constexpr int kLargestPooledBuffer = 64 << 20;
  constexpr int kRetainedTopBytes = 256 << 20;
  constexpr int kArenas = 2;
  mallopt(M_MMAP_THRESHOLD, kLargestPooledBuffer);
  mallopt(M_TRIM_THRESHOLD, kRetainedTopBytes);
  mallopt(M_ARENA_MAX, kArenas);
}

HeapTrimmer::HeapTrimmer(uint64_t retained_bytes, std::function<uint64_t()> free_bytes,
                         std::function<void()> trim)
    : retained_bytes_(retained_bytes), free_bytes_(std::move(free_bytes)), trim_(std::move(trim)) {}

HeapTrimmer HeapTrimmer::ForProcessHeap() {
  return HeapTrimmer(
      kRetainedFreeHeapBytes,
      [] {
        struct mallinfo2 info = mallinfo2();
        return static_cast<uint64_t>(info.fordblks + info.fsmblks);
      },
      [] { malloc_trim(0); });
}

bool HeapTrimmer::Tick() {
  const bool over = free_bytes_() > retained_bytes_;
  const bool trim = over && over_last_tick_;
  if (trim) trim_();
  // A trim leaves the free bytes free (only their pages go back), so they
  // stay over the bound and a trim follows every second check. One that
  // finds little resident costs a walk of the free lists; one that finds
  // pages a burst faulted in again gives them back.
  over_last_tick_ = over && !trim;
  return trim;
}

}  // namespace pail::server
