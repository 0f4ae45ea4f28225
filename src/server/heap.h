// The process's heap policy: big buffers stay in the heap for reuse, and
// free memory the heap keeps beyond a bound goes back to the kernel.
//
// The data path cycles through buffers of megabytes, and glibc's defaults
// would map each fresh and unmap it on free, a page fault per 4 KiB touched
// (ConfigureHeap). Kept in the heap instead, freed memory stays resident:
// after a metadata run of two million files glibc held 150 MB free beside
// 77 MB in use (memtables and SST uploads come and go in 8-16 MiB blocks,
// and their holes are not at the heap's top, where glibc would trim). The
// trimmer gives such memory back once it has stayed over the bound for two
// checks in a row, so a burst of data-path buffers freed and at once reused
// is not faulted in again each time.
#pragma once

#include <cstdint>
#include <functional>

namespace pail::server {

// Free heap memory kept for reuse without being trimmed.
inline constexpr uint64_t kRetainedFreeHeapBytes = uint64_t{64} << 20;

// Sets glibc's malloc options; call first thing in main().
void ConfigureHeap();

class HeapTrimmer {
 public:
  // `free_bytes` reports the heap's free bytes; `trim` gives them back.
  HeapTrimmer(uint64_t retained_bytes, std::function<uint64_t()> free_bytes,
              std::function<void()> trim);
  // glibc's heap (mallinfo2, malloc_trim). Under a sanitizer, whose
  // allocator is its own, glibc's heap holds next to nothing, so this
  // never trims.
  static HeapTrimmer ForProcessHeap();

  // Called periodically: trims when the heap held more than the bound free
  // at this call and the one before. Returns whether it trimmed.
  bool Tick();

 private:
  uint64_t retained_bytes_;
  std::function<uint64_t()> free_bytes_;
  std::function<void()> trim_;
  bool over_last_tick_ = false;
};

}  // namespace pail::server
