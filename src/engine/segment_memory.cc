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
  WriterLock g(&mu_);
  for (auto& [id, entry] : entries_) ReturnStringBuffer(std::move(entry->body));
}

void SegmentMemory::Keep(uint64_t id, std::string&& body) {
  if (body.capacity() >= 2 * body.size() && body.capacity() - body.size() >= kPooledMinBytes) {
    // Mostly empty (a buffer sized for a whole segment holding the small
    // last one of an upload pass): kept as a copy of its bytes, which costs
    // little, while the big buffer goes back to the pool for the next upload.
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
    WriterLock g(&mu_);
    if (entries_.count(id) != 0) {
      // Kept already (an id is uploaded once, so the bytes are the same).
      freed.push_back(std::move(body));
    } else {
      MakeRoom(charge, &freed);
      auto entry = std::make_unique<Entry>();
      entry->body = std::move(body);
      entry->charge = charge;
      entries_.emplace(id, std::move(entry));
      clock_.push_back(id);
      charged_ += charge;
    }
  }
  GiveBack(freed);
}

void SegmentMemory::MakeRoom(size_t charge, std::deque<std::string>* freed) {
  // Each round either evicts an entry, drops an erased id or clears a mark,
  // and a mark is set again only by a reader: at most two passes over the
  // clock, and the clock empties before the charge could still not fit
  // (charge <= capacity_).
  while (charged_ + charge > capacity_ && !clock_.empty()) {
    const uint64_t id = clock_.front();
    clock_.pop_front();
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;  // erased
    if (it->second->referenced.exchange(false, std::memory_order_relaxed)) {
      clock_.push_back(id);  // read since it last came round: another round
      continue;
    }
    charged_ -= it->second->charge;
    freed->push_back(std::move(it->second->body));
    entries_.erase(it);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
}

bool SegmentMemory::Read(uint64_t id, uint64_t offset, size_t n, char* out) {
  ReaderLock g(&mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  Entry& e = *it->second;
  if (offset > e.body.size() || n > e.body.size() - offset) return false;
  std::memcpy(out, e.body.data() + offset, n);
  if (!e.referenced.load(std::memory_order_relaxed)) {
    e.referenced.store(true, std::memory_order_relaxed);
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool SegmentMemory::Contains(uint64_t id) {
  ReaderLock g(&mu_);
  return entries_.count(id) != 0;
}

void SegmentMemory::Erase(uint64_t id) {
  std::string body;
  {
    WriterLock g(&mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    charged_ -= it->second->charge;
    body = std::move(it->second->body);
    entries_.erase(it);
    CompactClock();
  }
  ReturnStringBuffer(std::move(body));
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
  ReaderLock g(&mu_);
  return charged_;
}

size_t SegmentMemory::entries() {
  ReaderLock g(&mu_);
  return entries_.size();
}

}  // namespace pail::engine
