#include "engine/disk_cache.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace pail::engine {

DiskCache::DiskCache(std::shared_ptr<ObjectStore> store, std::string dir, uint64_t budget_bytes)
    : store_(std::move(store)), dir_(std::move(dir)), budget_(budget_bytes) {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  std::filesystem::create_directories(dir_, ec);
}

DiskCache::~DiskCache() {
  for (auto& [key, e] : entries_) {
    if (e->fd >= 0) ::close(e->fd);
  }
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
  int fd = ::open(PathFor(key).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;  // not cached; reads will fetch
  auto e = std::make_shared<Entry>(key, size, fd, /*complete=*/true);
  std::shared_ptr<Entry> old;
  {
    MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      old = it->second;
      lru_.erase(old->lru);
      entries_.erase(it);
    }
    lru_.push_front(key);
    e->lru = lru_.begin();
    entries_[key] = e;
    total_ += size;
  }
  // A reader of the old entry may still be using its file: wait for it.
  if (old) Forget(*old);
  EvictOverBudget();
}

std::shared_ptr<DiskCache::Entry> DiskCache::GetEntry(const std::string& key, uint64_t size) {
  MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second->lru);
    return it->second;
  }
  auto e = std::make_shared<Entry>(
      key, size, ::open(PathFor(key).c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600),
      /*complete=*/false);
  lru_.push_front(key);
  e->lru = lru_.begin();
  entries_[key] = e;
  return e;
}

Status DiskCache::Fill(Entry& e, uint64_t first, uint64_t last) {
  uint64_t offset = first * kCacheExtentBytes;
  uint64_t length = std::min(e.size, (last + 1) * kCacheExtentBytes) - offset;
  PAIL_ASSIGN_OR_RETURN(std::string data, store_->GetRange(e.key, offset, length));
  if (data.size() != length) {
    return Status::Corruption("object " + e.key + " is shorter than its listed size");
  }
  if (e.fd >= 0) {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::pwrite(e.fd, data.data() + done, data.size() - done, offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::IOError("cache write " + PathFor(e.key) + ": " + std::strerror(errno));
      done += static_cast<size_t>(n);
    }
  }
  uint64_t added = 0;
  for (uint64_t x = first; x <= last; ++x) {
    if (!e.present[x]) {
      e.present[x] = true;
      added += ExtentLength(e, x);
    }
  }
  e.present_bytes += added;
  MutexLock lock(&mu_);
  total_ += added;
  return Status::OK();
}

Result<size_t> DiskCache::Read(const std::string& key, uint64_t size, uint64_t offset, size_t n,
                               char* out) {
  if (offset >= size || n == 0) return size_t{0};
  n = static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  auto e = GetEntry(key, size);
  {
    MutexLock lock(&e->mu);
    if (e->fd < 0) return Status::IOError("cannot create cache file " + PathFor(key));
    uint64_t first = offset / kCacheExtentBytes, last = (offset + n - 1) / kCacheExtentBytes;
    bool hit = true;
    for (uint64_t x = first; x <= last && hit; ++x) hit = e->present[x];
    (hit ? hits_ : misses_).fetch_add(1, std::memory_order_relaxed);
    // One ranged GET per contiguous run of missing extents.
    for (uint64_t x = first; x <= last;) {
      if (e->present[x]) {
        ++x;
        continue;
      }
      uint64_t run_end = x;
      while (run_end + 1 <= last && !e->present[run_end + 1]) ++run_end;
      PAIL_RETURN_IF_ERROR(Fill(*e, x, run_end));
      x = run_end + 1;
    }
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(e->fd, out + done, n - done, offset + done);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return Status::IOError("cache read " + PathFor(key) + ": " + std::strerror(errno));
      done += static_cast<size_t>(r);
    }
  }
  EvictOverBudget();
  return n;
}

void DiskCache::Remove(const std::string& key) {
  std::shared_ptr<Entry> e;
  {
    MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      e = it->second;
      lru_.erase(e->lru);
      entries_.erase(it);
    }
  }
  if (e) Forget(*e);
  ::unlink(PathFor(key).c_str());
}

void DiskCache::Forget(Entry& e) {
  MutexLock lock(&e.mu);
  {
    MutexLock g(&mu_);
    total_ -= e.present_bytes;
  }
  e.present_bytes = 0;
  e.present.assign(e.present.size(), false);
  if (e.fd >= 0) ::close(e.fd);
  e.fd = -1;
}

void DiskCache::EvictOverBudget() {
  // Each entry is tried at most once per call, so a busy one cannot spin us.
  for (size_t tries = entries_size();; --tries) {
    std::shared_ptr<Entry> victim;
    {
      MutexLock lock(&mu_);
      if (total_ <= budget_ || lru_.empty() || tries == 0) return;
      victim = entries_[lru_.back()];
      lru_.splice(lru_.begin(), lru_, victim->lru);  // a busy victim is not retried at once
    }
    if (!victim->mu.TryLock()) continue;
    if (victim->present_bytes != 0) {
      // Punching the hole keeps the file and any open reader's view valid.
      ::fallocate(victim->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                  static_cast<off_t>(victim->size));
      victim->present.assign(victim->present.size(), false);
      MutexLock lock(&mu_);
      total_ -= victim->present_bytes;
      victim->present_bytes = 0;
    }
    victim->mu.Unlock();
  }
}

size_t DiskCache::entries_size() const {
  MutexLock lock(&mu_);
  return entries_.size();
}

uint64_t DiskCache::cached_bytes() const {
  MutexLock lock(&mu_);
  return total_;
}

}  // namespace pail::engine
