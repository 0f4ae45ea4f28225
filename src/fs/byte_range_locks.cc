#include "fs/byte_range_locks.h"

#include <algorithm>

namespace pail::fs {
namespace {

// [start, start+length) as an inclusive range, or false if it overflows.
bool Bounds(uint64_t start, uint64_t length, uint64_t* first, uint64_t* last) {
  *first = start;
  if (length == 0) {
    *last = UINT64_MAX;
    return true;
  }
  if (length - 1 > UINT64_MAX - start) return false;
  *last = start + length - 1;
  return true;
}

bool Overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) { return a0 <= b1 && b0 <= a1; }

uint64_t LengthOf(uint64_t first, uint64_t last) {
  return last == UINT64_MAX ? 0 : last - first + 1;
}

}  // namespace

void ByteRangeLocks::Carve(Ranges& ranges, const LockOwner& owner, uint64_t first,
                           uint64_t last) {
  Ranges kept;
  kept.reserve(ranges.size() + 1);
  for (Held& h : ranges) {
    if (!(h.owner == owner) || !Overlap(h.first, h.last, first, last)) {
      kept.push_back(std::move(h));
      continue;
    }
    per_session_[owner.session]--;
    if (h.first < first) {
      kept.push_back({h.kind, h.first, first - 1, h.owner});
      per_session_[owner.session]++;
    }
    if (h.last > last) {
      kept.push_back({h.kind, last + 1, h.last, h.owner});
      per_session_[owner.session]++;
    }
  }
  ranges = std::move(kept);
}

size_t ByteRangeLocks::SessionRanges(uint64_t session) const {
  auto it = per_session_.find(session);
  return it == per_session_.end() ? 0 : it->second;
}

void ByteRangeLocks::Forget(Ino ino) {
  auto it = files_.find(ino);
  if (it != files_.end() && it->second.empty()) files_.erase(it);
}

std::optional<LockRange> ByteRangeLocks::Conflict(Ino ino, const LockRange& request) const {
  uint64_t first, last;
  if (!Bounds(request.start, request.length, &first, &last)) return std::nullopt;
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it == files_.end()) return std::nullopt;
  for (const Held& h : it->second) {
    if (h.owner == request.owner || !Overlap(h.first, h.last, first, last)) continue;
    if (h.kind == LockKind::kRead && request.kind == LockKind::kRead) continue;
    return LockRange{h.kind, h.first, LengthOf(h.first, h.last), h.owner};
  }
  return std::nullopt;
}

FsStatus ByteRangeLocks::Lock(Ino ino, const LockRange& request) {
  uint64_t first, last;
  if (!Bounds(request.start, request.length, &first, &last)) return FsError{EINVAL};
  if (Conflict(ino, request)) return FsError{EAGAIN};
  MutexLock lock(&mu_);
  Ranges& ranges = files_[ino];
  // Checked again under this hold of the mutex: another owner may have
  // locked between Conflict() and here.
  for (const Held& h : ranges) {
    if (h.owner == request.owner || !Overlap(h.first, h.last, first, last)) continue;
    if (h.kind == LockKind::kRead && request.kind == LockKind::kRead) continue;
    return FsError{EAGAIN};
  }
  // Merge with the owner's same-kind ranges that touch the new one.
  for (const Held& h : ranges) {
    if (!(h.owner == request.owner) || h.kind != request.kind) continue;
    bool touches = Overlap(h.first, h.last, first, last) ||
                   (h.last != UINT64_MAX && h.last + 1 == first) ||
                   (last != UINT64_MAX && last + 1 == h.first);
    if (touches) {
      first = std::min(first, h.first);
      last = std::max(last, h.last);
    }
  }
  // Conservative: a request that would only shrink the set is refused too
  // once the session is at its bound.
  if (SessionRanges(request.owner.session) >= max_ranges_per_session_) {
    Forget(ino);
    return FsError{ENOLCK};
  }
  Carve(ranges, request.owner, first, last);
  ranges.push_back({request.kind, first, last, request.owner});
  per_session_[request.owner.session]++;
  return FsStatus::OK();
}

void ByteRangeLocks::Unlock(Ino ino, const LockOwner& owner, uint64_t start, uint64_t length) {
  uint64_t first, last;
  if (!Bounds(start, length, &first, &last)) last = UINT64_MAX;
  MutexLock lock(&mu_);
  auto it = files_.find(ino);
  if (it == files_.end()) return;
  Carve(it->second, owner, first, last);
  Forget(ino);
}

void ByteRangeLocks::ReleaseSession(uint64_t session) {
  MutexLock lock(&mu_);
  for (auto it = files_.begin(); it != files_.end();) {
    Ranges& r = it->second;
    r.erase(std::remove_if(r.begin(), r.end(),
                           [&](const Held& h) { return h.owner.session == session; }),
            r.end());
    it = r.empty() ? files_.erase(it) : std::next(it);
  }
  per_session_.erase(session);
}

}  // namespace pail::fs
