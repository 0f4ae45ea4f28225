#include "engine/segment_memory.h"

#include <cstring>
#include <utility>

#include "util/buffer_pool.h"

namespace pail::engine {

namespace {
void GiveBack(std::deque<std::string>& freed) {
  for (std::string& body : freed) ReturnStringBuffer(std::move(body));
}
}  // namespace

SegmentMemory::SegmentMemory(size_t capacity_bytes) : capacity_(capacity_bytes) {}

SegmentMemory::~SegmentMemory() {
  // No reader can be running: they are the owner's callers.
  MutexLock g(&mu_);
  for (auto& [id, entry] : entries_) ReturnStringBuffer(std::move(entry->body));
}

void SegmentMemory::Keep(uint64_t id, std::string&& body) {
  if (body.size() < kPooledMinBytes && body.capacity() >= kPooledMinBytes &&
      body.size() + kEntryOverheadBytes <= capacity_) {
    // A small segment in a segment-sized buffer (a flush of a few writes):
    // kept as a copy, which comes from the ordinary heap, while the big
    // buffer goes back to the pool for the next upload.
    std::string tight(body);
    ReturnStringBuffer(std::move(body));
    body = std::move(tight);
  }
  const size_t charge = body.capacity() + kEntryOverheadBytes;
  if (charge > capacity_) {
    ReturnStringBuffer(std::move(body));
    return;
  }
  std::deque<std::string> freed;
  {
    MutexLock g(&mu_);
    if (entries_.count(id) != 0) {
      // Kept already (an id is uploaded once, so the bytes are the same).
      freed.push_back(std::move(body));
    } else {
      MakeRoom(charge, &freed);
      if (charged_ + charge > capacity_) {
        // Entries being read hold the room: not kept.
        freed.push_back(std::move(body));
      } else {
        auto entry = std::make_unique<Entry>();
        entry->body = std::move(body);
        entry->charge = charge;
        entries_.emplace(id, std::move(entry));
        clock_.push_back(id);
        charged_ += charge;
      }
    }
  }
  GiveBack(freed);
}

void SegmentMemory::MakeRoom(size_t charge, std::deque<std::string>* freed) {
  // Each round evicts an entry, drops an erased id or clears a mark, and a
  // mark is set again only by a reader: at most two passes over the clock.
  while (charged_ + charge > capacity_ && !clock_.empty()) {
    const uint64_t id = clock_.front();
    clock_.pop_front();
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;  // erased
    if (it->second->referenced) {
      it->second->referenced = false;
      clock_.push_back(id);  // read since it last came round: another round
      continue;
    }
    std::unique_ptr<Entry> e = std::move(it->second);
    entries_.erase(it);
    Detach(std::move(e), freed);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
}

void SegmentMemory::Detach(std::unique_ptr<Entry> e, std::deque<std::string>* freed) {
  if (e->pins > 0) {
    e->evicted = true;
    (void)e.release();  // freed by its last reader (Read)
    return;
  }
  charged_ -= e->charge;
  freed->push_back(std::move(e->body));
}

bool SegmentMemory::Read(uint64_t id, uint64_t offset, size_t n, char* out) {
  Entry* e;
  {
    MutexLock g(&mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return false;
    e = it->second.get();
    if (offset > e->body.size() || n > e->body.size() - offset) return false;
    e->referenced = true;
    e->pins++;
  }
  // Pinned: the body stays put, even if the entry is evicted meanwhile.
  std::memcpy(out, e->body.data() + offset, n);
  std::string freed;
  {
    MutexLock g(&mu_);
    if (--e->pins == 0 && e->evicted) {
      charged_ -= e->charge;
      freed = std::move(e->body);
      delete e;
    }
  }
  ReturnStringBuffer(std::move(freed));
  hits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool SegmentMemory::Contains(uint64_t id) {
  MutexLock g(&mu_);
  return entries_.count(id) != 0;
}

void SegmentMemory::Erase(uint64_t id) {
  std::deque<std::string> freed;
  {
    MutexLock g(&mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    std::unique_ptr<Entry> e = std::move(it->second);
    entries_.erase(it);
    Detach(std::move(e), &freed);
    CompactClock();
  }
  GiveBack(freed);
}

void SegmentMemory::CompactClock() {
  if (clock_.size() <= 2 * entries_.size() + 64) return;
  std::deque<uint64_t> live;
  for (uint64_t id : clock_) {
    if (entries_.count(id) != 0) live.push_back(id);
  }
  clock_ = std::move(live);
}

size_t SegmentMemory::charged() {
  MutexLock g(&mu_);
  return charged_;
}

size_t SegmentMemory::entries() {
  MutexLock g(&mu_);
  return entries_.size();
}

}  // namespace pail::engine
