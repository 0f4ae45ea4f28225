// Big buffers kept for reuse: segment bodies and the ciphertext of uploads.
//
// Why: the first touch of every 4 KiB page of fresh memory is a page fault,
// and malloc gives a multi-MiB buffer back to the kernel when it is freed,
// so each 16 MiB segment and its ciphertext faulted in anew: about one
// fault per 4 KiB per buffer, a fifth of the server's CPU in a sequential
// write (more than the encryption). Uploads build buffers of the same few
// sizes over and over; keeping a few idle ones avoids all of that.
//
// Buffers under kPooledMinBytes are ordinary allocations. At most
// kIdleBytesMax of each kind stay idle; the rest are freed as usual. The
// bound holds the buffers of four 16 MiB segment uploads in flight (what
// the default write-back buffer allows) after rounding: with less, every
// wave of uploads allocated and faulted in one buffer afresh.
#pragma once

#include <cstddef>
#include <string>

namespace pail {

inline constexpr size_t kPooledMinBytes = size_t{1} << 20;
inline constexpr size_t kIdleBytesMax = size_t{80} << 20;
// AlignedBuffer's alignment: enough for O_DIRECT writes from it.
inline constexpr size_t kBufferAlign = 4096;

// Page-aligned memory of at least the size asked for, contents undefined.
// Goes back to the pool when destroyed.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  char* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  char* data_ = nullptr;
  size_t capacity_ = 0;
};

// An empty string with at least `capacity` reserved, reused when one is
// idle. Give it back with ReturnStringBuffer when done.
std::string TakeStringBuffer(size_t capacity);
void ReturnStringBuffer(std::string&& s);

// Bytes held idle, both kinds together.
size_t IdleBufferBytes();

// Frees the idle buffers no one needed since the last call: as many bytes
// as stayed idle all along (the least idle in between), largest buffers
// first. Called periodically, it keeps what a steady stream of uploads
// reuses and gives back what a burst left behind. Returns the bytes freed.
size_t ReleaseUnusedIdleBuffers();

}  // namespace pail
