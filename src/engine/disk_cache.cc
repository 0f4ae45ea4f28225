#include "engine/disk_cache.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <spdlog/spdlog.h>

#include "crypto/encrypted_store.h"
#include "util/blocking_hint.h"
#include "util/clock.h"

namespace pail::engine {

static_assert(kCacheExtentBytes == crypto::kPagePlainBytes,
              "a cache extent is one encryption page: a miss then fetches whole pages");

DiskCache::DiskCache(std::shared_ptr<ObjectStore> store, std::string dir, uint64_t budget_bytes,
                     size_t max_open_files, std::chrono::milliseconds local_failure_pause)
    : store_(std::move(store)), dir_(std::move(dir)), budget_(budget_bytes),
      max_open_files_(max_open_files), local_failure_pause_(local_failure_pause) {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  std::filesystem::create_directories(dir_, ec);
  struct statvfs disk;
  if (::statvfs(dir_.c_str(), &disk) == 0) {
    const auto room = static_cast<uint64_t>(static_cast<double>(disk.f_bavail) *
                                            static_cast<double>(disk.f_frsize) * kMaxShareOfFreeDisk);
    if (room < budget_) {
      spdlog::warn("disk cache: {} has {} MiB free; the cache keeps at most {} MiB instead of {}",
                   dir_, disk.f_bavail * disk.f_frsize >> 20, room >> 20, budget_ >> 20);
      budget_ = room;
    }
  }
}

DiskCache::~DiskCache() {
  // Every Pin is gone by now, so every open file is in open_lru_.
  MutexLock lock(&mu_);
  for (auto& e : open_lru_) {
    MutexLock el(&e->mu);
    ::close(e->fd);
    e->fd = -1;
  }
}

DiskCache::Pin::~Pin() {
  if (entry_) cache_->Unpin(*entry_, added_);
}

std::string DiskCache::PathFor(const std::string& key) const {
  std::string name = key;
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return dir_ + "/" + name;
}

uint64_t DiskCache::ExtentLength(const Entry& e, uint64_t extent) {
  uint64_t start = extent * kCacheExtentBytes;
  return std::min(kCacheExtentBytes, e.size - start);
}

void DiskCache::AddComplete(const std::string& key, uint64_t size) {
  auto entry = std::make_shared<Entry>(key, size, kPresent);
  Entry& e = *entry;
  MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    std::shared_ptr<Entry> old = it->second;
    MutexLock ol(&old->mu);
    Detach(*old, /*unlink=*/false);  // the file at PathFor(key) is the new one
  }
  {
    MutexLock el(&e.mu);
    entries_[key] = entry;
    lru_.push_front(entry);
    e.lru = lru_.begin();
    if (OpenFile(e, 0) != 0) {
      Detach(e, /*unlink=*/false);  // not cached; reads will fetch
      return;
    }
    e.present_bytes = size;
    total_ += size;
  }
  EvictDownTo(budget_);
  CloseIdleFiles();
}

int DiskCache::OpenFile(Entry& e, int flags) {
  if (e.fd >= 0) return 0;
  e.fd = ::open(PathFor(e.key).c_str(), O_RDWR | O_CLOEXEC | flags, 0600);
  if (e.fd < 0) return errno;
  ++open_fds_;
  open_lru_.push_front(*e.lru);  // e is in lru_ already
  e.open_lru = open_lru_.begin();
  return 0;
}

Result<DiskCache::Pin> DiskCache::Acquire(const std::string& key, uint64_t size) {
  int create_errno = 0;
  Result<Pin> pin = TryAcquire(key, size, &create_errno);
  // Outside mu_, which NoteLocalFailure takes.
  if (create_errno != 0) NoteLocalFailure("creating the cache file of " + key, create_errno);
  return pin;
}

Result<DiskCache::Pin> DiskCache::TryAcquire(const std::string& key, uint64_t size,
                                                int* create_errno) {
  MutexLock lock(&mu_);
  std::shared_ptr<Entry> entry;
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    entry = it->second;
    Entry& e = *entry;
    MutexLock el(&e.mu);
    if (OpenFile(e, 0) != 0) {
      // Its file is gone or no descriptor is left: start over with a new file.
      Detach(e, /*unlink=*/false);
      entry = nullptr;
    }
  }
  if (entry == nullptr) {
    entry = std::make_shared<Entry>(key, size, kAbsent);
    Entry& e = *entry;
    MutexLock el(&e.mu);
    entries_[key] = entry;
    lru_.push_front(entry);
    e.lru = lru_.begin();
    if (int err = OpenFile(e, O_CREAT | O_TRUNC); err != 0) {
      *create_errno = err;
      Detach(e, /*unlink=*/false);
      return Status::IOError("cache file " + PathFor(key) + ": " + std::strerror(err));
    }
  }
  Entry& e = *entry;
  int fd;
  {
    MutexLock el(&e.mu);
    lru_.splice(lru_.begin(), lru_, e.lru);
    open_lru_.splice(open_lru_.begin(), open_lru_, e.open_lru);
    ++e.pins;
    fd = e.fd;
  }
  CloseIdleFiles();  // never e's: it is pinned
  return Pin(this, std::move(entry), fd);
}

void DiskCache::Unpin(Entry& e, uint64_t added) {
  MutexLock lock(&mu_);
  {
    MutexLock el(&e.mu);
    --e.pins;
    if (e.in_map) {
      e.present_bytes += added;
      total_ += added;
      // A failed or empty read leaves nothing behind.
      if (e.pins == 0 && e.present_bytes == 0) Detach(e, /*unlink=*/true);
    } else if (e.pins == 0 && e.fd >= 0) {
      ::close(e.fd);  // the last holder of a detached entry
      e.fd = -1;
      --open_fds_;
    }
  }
  EvictDownTo(budget_);
  CloseIdleFiles();
}

void DiskCache::Detach(Entry& e, bool unlink) {
  assert(e.in_map && entries_.at(e.key).get() == &e);
  // The caller holds a reference to e, so erasing the map's does not free it.
  entries_.erase(e.key);
  lru_.erase(e.lru);
  if (e.fd >= 0) {
    open_lru_.erase(e.open_lru);
    if (e.pins == 0) {
      ::close(e.fd);
      e.fd = -1;
      --open_fds_;
    }
  }
  total_ -= e.present_bytes;
  e.present_bytes = 0;
  e.in_map = false;
  if (unlink) ::unlink(PathFor(e.key).c_str());
}

void DiskCache::EvictDownTo(uint64_t limit) {
  // Walk from the least recently used end; `next` stays valid when the
  // entry before it is detached.
  auto next = lru_.end();
  while (total_ > limit && next != lru_.begin()) {
    std::shared_ptr<Entry> victim = *std::prev(next);
    MutexLock el(&victim->mu);
    if (victim->pins > 0) {
      --next;  // in use: see the invariant in disk_cache.h
      continue;
    }
    Detach(*victim, /*unlink=*/true);
  }
}

void DiskCache::CloseIdleFiles() {
  auto next = open_lru_.end();
  while (open_fds_ > max_open_files_ && next != open_lru_.begin()) {
    std::shared_ptr<Entry> e = *std::prev(next);
    MutexLock el(&e->mu);
    if (e->pins > 0) {
      --next;
      continue;
    }
    open_lru_.erase(e->open_lru);
    ::close(e->fd);
    e->fd = -1;
    --open_fds_;
  }
}

Status DiskCache::Fetch(const Pin& pin, uint64_t first, uint64_t last) {
  const Entry& e = pin.entry();
  uint64_t offset = first * kCacheExtentBytes;
  uint64_t length = std::min(e.size, (last + 1) * kCacheExtentBytes) - offset;
  PAIL_ASSIGN_OR_RETURN(std::string data, GetExactRange(e.key, offset, length));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(pin.fd(), data.data() + done, data.size() - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      NoteLocalFailure("writing " + PathFor(e.key), err);
      return Status::IOError("cache write " + PathFor(e.key) + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

Status DiskCache::Ensure(Pin& pin, uint64_t first, uint64_t last, uint64_t window_first,
                         uint64_t window_last, bool wait, int* requests) {
  Entry& e = pin.entry();
  e.mu.Lock();
  for (;;) {
    // Claim every absent run at once, so others wait for it instead of
    // fetching it again.
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    bool all_present = true;
    for (uint64_t x = first; x <= last; ++x) {
      if (e.extents[x] == kPresent) continue;
      all_present = false;
      if (e.extents[x] == kFetching) continue;  // someone else's
      if (!runs.empty() && runs.back().second + 1 == x) {
        runs.back().second = x;
      } else {
        runs.emplace_back(x, x);
      }
      e.extents[x] = kFetching;
    }
    if (all_present) break;
    if (runs.empty()) {
      if (!wait) break;
      BlockingHint::AboutToBlock();
      e.fetched.Wait();
      continue;  // an extent whose fetch failed is absent again: claim it
    }
    // The same GETs take the absent extents beside them in the window.
    for (auto& x = runs.front().first; x > window_first && e.extents[x - 1] == kAbsent;) {
      e.extents[--x] = kFetching;
    }
    for (auto& x = runs.back().second; x < window_last && e.extents[x + 1] == kAbsent;) {
      e.extents[++x] = kFetching;
    }
    // Every claimed extent ends present or absent, so no waiter hangs.
    Status s;
    BlockingHint::AboutToBlock();
    for (auto [run_first, run_last] : runs) {
      if (s.ok()) {
        e.mu.Unlock();
        s = Fetch(pin, run_first, run_last);
        e.mu.Lock();
        ++*requests;
      }
      for (uint64_t x = run_first; x <= run_last; ++x) {
        e.extents[x] = s.ok() ? kPresent : kAbsent;
        if (s.ok()) pin.Add(ExtentLength(e, x));
      }
      e.fetched.SignalAll();
    }
    if (!s.ok()) {
      e.mu.Unlock();
      return s;
    }
  }
  e.mu.Unlock();
  return Status::OK();
}

Result<size_t> DiskCache::Read(const std::string& key, uint64_t size, uint64_t offset, size_t n,
                               char* out, uint64_t fetch_window) {
  if (offset >= size || n == 0) return size_t{0};
  if (paused()) {
    PAIL_ASSIGN_OR_RETURN(std::optional<size_t> cached, ReadCached(key, size, offset, n, out));
    if (cached) return *cached;
    return ReadFromBucket(key, size, offset, n, out);
  }
  Result<size_t> r = ReadThrough(key, size, offset, n, out, fetch_window);
  // Paused by this read or another: the disk failed to keep the bytes, so
  // they come from the bucket (a store error then recurs and is returned).
  if (!r.ok() && paused()) return ReadFromBucket(key, size, offset, n, out);
  return r;
}

Result<size_t> DiskCache::ReadFromBucket(const std::string& key, uint64_t size, uint64_t offset,
                                         size_t n, char* out) {
  n = static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  BlockingHint::AboutToBlock();
  PAIL_ASSIGN_OR_RETURN(std::string data, GetExactRange(key, offset, n));
  misses_.fetch_add(1, std::memory_order_relaxed);
  std::memcpy(out, data.data(), n);
  return n;
}

Result<std::string> DiskCache::GetExactRange(const std::string& key, uint64_t offset,
                                             uint64_t length) {
  PAIL_ASSIGN_OR_RETURN(std::string data, store_->GetRange(key, offset, length));
  if (data.size() != length) {
    return Status::Corruption("object " + key + " is shorter than its listed size");
  }
  return data;
}

Result<size_t> DiskCache::ReadThrough(const std::string& key, uint64_t size, uint64_t offset,
                                      size_t n, char* out, uint64_t fetch_window) {
  PAIL_ASSIGN_OR_RETURN(Pin pin, Acquire(key, size));
  // The entry keeps the size it was first read with; bounds follow it.
  const uint64_t object_size = pin.entry().size;
  if (offset >= object_size) return size_t{0};
  n = static_cast<size_t>(std::min<uint64_t>(n, object_size - offset));
  const uint64_t first = offset / kCacheExtentBytes;
  const uint64_t last = (offset + n - 1) / kCacheExtentBytes;
  const uint64_t window = std::max<uint64_t>(fetch_window / kCacheExtentBytes, 1);
  const uint64_t window_last =
      std::min((last / window + 1) * window - 1, (object_size - 1) / kCacheExtentBytes);
  int requests = 0;
  Status s = Ensure(pin, first, last, first / window * window, window_last, /*wait=*/true,
                    &requests);
  (requests == 0 ? hits_ : misses_).fetch_add(1, std::memory_order_relaxed);
  PAIL_RETURN_IF_ERROR(s);
  return ReadPinned(pin, key, offset, n, out);
}

Result<std::optional<size_t>> DiskCache::ReadCached(const std::string& key, uint64_t size,
                                                    uint64_t offset, size_t n, char* out) {
  if (offset >= size || n == 0) return std::optional<size_t>(0);
  {
    // Not even an entry: nothing to read, and no file to make for it.
    MutexLock lock(&mu_);
    if (entries_.count(key) == 0) return std::optional<size_t>();
  }
  PAIL_ASSIGN_OR_RETURN(Pin pin, Acquire(key, size));
  const uint64_t object_size = pin.entry().size;
  if (offset >= object_size) return std::optional<size_t>(0);
  n = static_cast<size_t>(std::min<uint64_t>(n, object_size - offset));
  {
    Entry& e = pin.entry();
    MutexLock el(&e.mu);
    for (uint64_t x = offset / kCacheExtentBytes; x <= (offset + n - 1) / kCacheExtentBytes; ++x) {
      if (e.extents[x] != kPresent) return std::optional<size_t>();
    }
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  PAIL_ASSIGN_OR_RETURN(size_t got, ReadPinned(pin, key, offset, n, out));
  return std::optional<size_t>(got);
}

Result<size_t> DiskCache::ReadPinned(const Pin& pin, const std::string& key, uint64_t offset,
                                     size_t n, char* out) {
  // The pin keeps these extents and this descriptor until we are done.
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(pin.fd(), out + done, n - done, offset + done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Status::IOError("cache read " + PathFor(key) + ": " + std::strerror(errno));
    done += static_cast<size_t>(r);
  }
  return n;
}

Status DiskCache::Prefetch(const std::string& key, uint64_t size, uint64_t offset, size_t n) {
  if (offset >= size || n == 0 || paused()) return Status::OK();
  PAIL_ASSIGN_OR_RETURN(Pin pin, Acquire(key, size));
  const uint64_t object_size = pin.entry().size;
  if (offset >= object_size) return Status::OK();
  n = static_cast<size_t>(std::min<uint64_t>(n, object_size - offset));
  const uint64_t first = offset / kCacheExtentBytes;
  const uint64_t last = (offset + n - 1) / kCacheExtentBytes;
  int requests = 0;
  Status s = Ensure(pin, first, last, first, last, /*wait=*/false, &requests);
  prefetch_requests_.fetch_add(requests, std::memory_order_relaxed);
  return s;
}

void DiskCache::Remove(const std::string& key) {
  MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    std::shared_ptr<Entry> e = it->second;
    MutexLock el(&e->mu);
    Detach(*e, /*unlink=*/false);
  }
  // Under mu_, so it cannot delete the file of a new entry for the key.
  ::unlink(PathFor(key).c_str());
}

void DiskCache::NoteLocalFailure(const std::string& what, int err) {
  local_failures_.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = SteadyNowNs();
  const int64_t was_until = paused_until_ns_.exchange(
      now + std::chrono::duration_cast<std::chrono::nanoseconds>(local_failure_pause_).count());
  uint64_t held;
  {
    MutexLock lock(&mu_);
    EvictDownTo(total_ - total_ / 4);
    held = total_;
  }
  if (was_until <= now) {
    spdlog::warn("disk cache: {}: {}; nothing new is cached for {} ms, reads meanwhile go to the "
                 "bucket; {} MiB left cached",
                 what, std::strerror(err), local_failure_pause_.count(), held >> 20);
  }
}

bool DiskCache::paused() const {
  return paused_until_ns_.load(std::memory_order_relaxed) > SteadyNowNs();
}

uint64_t DiskCache::cached_bytes() const {
  MutexLock lock(&mu_);
  return total_;
}

size_t DiskCache::open_files() const {
  MutexLock lock(&mu_);
  return open_fds_;
}

}  // namespace pail::engine
