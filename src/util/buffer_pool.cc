#include "util/buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "util/mutex.h"

namespace pail {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Asks for huge pages over the whole pages of [p, p + n). Advice only: a
// refusal changes nothing but speed.
void AdviseHugePages(char* p, size_t n) {
  const auto begin = RoundUp(reinterpret_cast<uintptr_t>(p), kBufferAlign);
  const auto end = (reinterpret_cast<uintptr_t>(p) + n) / kBufferAlign * kBufferAlign;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// Idle buffers of one kind with their capacities, handed out best fit first.
// Destroying a Buffer frees its memory.
template <typename Buffer>
class IdleList {
 public:
  // Moves an idle buffer of at least `size` bytes to *out and returns its
  // capacity; 0 when there is none.
  size_t Take(size_t size, Buffer* out) {
    MutexLock g(&mu_);
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->second >= size && (best == idle_.end() || it->second < best->second)) best = it;
    }
    if (best == idle_.end()) return 0;
    const size_t capacity = best->second;
    *out = std::move(best->first);
    idle_bytes_ -= capacity;
    low_water_bytes_ = std::min(low_water_bytes_, idle_bytes_);
    idle_.erase(best);
    return capacity;
  }
  // Frees idle buffers, largest first, of at most the bytes that stayed
  // idle since the last call; returns the bytes freed.
  size_t ReleaseUnused() {
    std::vector<Buffer> dropped;  // freed after the lock is released
    MutexLock g(&mu_);
    std::sort(idle_.begin(), idle_.end(), [](auto& x, auto& y) { return x.second > y.second; });
    size_t freed = 0;
    for (auto it = idle_.begin(); it != idle_.end();) {
      if (freed + it->second > low_water_bytes_) {
        ++it;
        continue;
      }
      freed += it->second;
      dropped.push_back(std::move(it->first));
      it = idle_.erase(it);
    }
    idle_bytes_ -= freed;
    low_water_bytes_ = idle_bytes_;
    return freed;
  }
  // Keeps `b` when there is room, making room by dropping smaller idle
  // buffers: a small one serves only small requests, while full-size
  // segments are what every busy upload asks for. False leaves `b` with
  // the caller.
  bool Keep(Buffer& b, size_t capacity) {
    std::vector<Buffer> dropped;  // freed after the lock is released
    MutexLock g(&mu_);
    while (idle_bytes_ + capacity > kIdleBytesMax) {
      auto smallest = std::min_element(idle_.begin(), idle_.end(),
                                       [](auto& x, auto& y) { return x.second < y.second; });
      if (smallest == idle_.end() || smallest->second >= capacity) return false;
      idle_bytes_ -= smallest->second;
      dropped.push_back(std::move(smallest->first));
      idle_.erase(smallest);
    }
    idle_bytes_ += capacity;
    idle_.emplace_back(std::move(b), capacity);
    return true;
  }
  size_t idle_bytes() {
    MutexLock g(&mu_);
    return idle_bytes_;
  }

 private:
  Mutex mu_;
  std::vector<std::pair<Buffer, size_t>> idle_ GUARDED_BY(mu_);
  size_t idle_bytes_ GUARDED_BY(mu_) = 0;
  // The least idle_bytes_ since the last ReleaseUnused: that many bytes
  // were not needed all along.
  size_t low_water_bytes_ GUARDED_BY(mu_) = 0;
};

struct FreeMemory {
  void operator()(char* p) const { std::free(p); }
};
using AlignedMemory = std::unique_ptr<char, FreeMemory>;

// Never destroyed: threads still running at exit may return buffers.
IdleList<AlignedMemory>& IdleAligned() {
  static auto* list = new IdleList<AlignedMemory>;
  return *list;
}

IdleList<std::string>& IdleStrings() {
  static auto* list = new IdleList<std::string>;
  return *list;
}

}  // namespace

AlignedBuffer::AlignedBuffer(size_t size) {
  if (size >= kPooledMinBytes) {
    AlignedMemory idle;
    capacity_ = IdleAligned().Take(size, &idle);
    data_ = idle.release();
    if (capacity_ > 0) return;
  }
  // Pooled sizes are rounded up so that one buffer fits many requests, and
  // get huge pages where the kernel leaves that to us (transparent huge
  // pages in "madvise" mode): one fault per 2 MiB instead of per 4 KiB.
  const bool pooled = size >= kPooledMinBytes;
  capacity_ = RoundUp(std::max<size_t>(size, 1), pooled ? kHugePageBytes : kBufferAlign);
  data_ = static_cast<char*>(std::aligned_alloc(pooled ? kHugePageBytes : kBufferAlign, capacity_));
  if (data_ == nullptr) throw std::bad_alloc();
  if (pooled) AdviseHugePages(data_, capacity_);
}

AlignedBuffer::~AlignedBuffer() {
  if (data_ == nullptr) return;
  AlignedMemory memory(data_);
  if (capacity_ >= kPooledMinBytes) IdleAligned().Keep(memory, capacity_);
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    AlignedBuffer old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

std::string TakeStringBuffer(size_t capacity) {
  std::string s;
  if (capacity >= kPooledMinBytes && IdleStrings().Take(capacity, &s) > 0) return s;
  if (capacity < kPooledMinBytes) {
    s.reserve(capacity);
    return s;
  }
  s.reserve(RoundUp(capacity, kPooledMinBytes));
  AdviseHugePages(s.data(), s.capacity());
  return s;
}

void ReturnStringBuffer(std::string&& s) {
  const size_t capacity = s.capacity();
  if (capacity < kPooledMinBytes) return;
  s.clear();
  IdleStrings().Keep(s, capacity);
}

size_t ReleaseUnusedIdleBuffers() {
  return IdleAligned().ReleaseUnused() + IdleStrings().ReleaseUnused();
}

size_t IdleBufferBytes() { return IdleAligned().idle_bytes() + IdleStrings().idle_bytes(); }

}  // namespace pail
