#include "fs/reserved_chunks.h"

#include <algorithm>

namespace pail::fs {

namespace {
void Put64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t Get64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}
}  // namespace

bool ReservedChunks::Contains(uint64_t index) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), index,
                             [](uint64_t i, const ChunkRun& r) { return i < r.end; });
  return it != runs_.end() && it->first <= index;
}

uint64_t ReservedChunks::Count() const {
  uint64_t n = 0;
  for (const ChunkRun& r : runs_) n += r.size();
  return n;
}

std::vector<ChunkRun> ReservedChunks::Add(ChunkRun add) {
  if (add.first >= add.end) return {};
  const std::vector<ChunkRun> before = runs_;
  // Runs that overlap or touch `add` melt into it.
  auto from = std::lower_bound(runs_.begin(), runs_.end(), add.first,
                               [](const ChunkRun& r, uint64_t i) { return r.end < i; });
  auto to = std::upper_bound(from, runs_.end(), add.end,
                             [](uint64_t i, const ChunkRun& r) { return i < r.first; });
  if (from != to) {
    add.first = std::min(add.first, from->first);
    add.end = std::max(add.end, std::prev(to)->end);
  }
  runs_.insert(runs_.erase(from, to), add);
  while (runs_.size() > kMaxRuns) {
    size_t closest = 0;
    for (size_t i = 1; i + 1 < runs_.size(); ++i) {
      if (runs_[i + 1].first - runs_[i].end < runs_[closest + 1].first - runs_[closest].end) {
        closest = i;
      }
    }
    runs_[closest].end = runs_[closest + 1].end;
    runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(closest) + 1);
  }
  // What is reserved now minus what was: the gaps of `before` inside the
  // new runs.
  std::vector<ChunkRun> added;
  auto old = before.begin();
  for (const ChunkRun& r : runs_) {
    uint64_t pos = r.first;
    for (; old != before.end() && old->first < r.end; ++old) {
      if (old->first > pos) added.push_back({pos, old->first});
      pos = std::max(pos, old->end);
    }
    if (pos < r.end) added.push_back({pos, r.end});
  }
  return added;
}

uint64_t ReservedChunks::Remove(ChunkRun cut) {
  if (cut.first >= cut.end) return 0;
  uint64_t removed = 0;
  std::vector<ChunkRun> kept;
  kept.reserve(runs_.size() + 1);
  for (const ChunkRun& r : runs_) {
    if (r.end <= cut.first || r.first >= cut.end) {
      kept.push_back(r);
      continue;
    }
    removed += std::min(r.end, cut.end) - std::max(r.first, cut.first);
    if (r.first < cut.first) kept.push_back({r.first, cut.first});
    if (r.end > cut.end) kept.push_back({cut.end, r.end});
  }
  // A cut that would pass the bound releases nothing: a reservation may
  // cover more than was asked, never less.
  if (kept.size() > kMaxRuns) return 0;
  runs_ = std::move(kept);
  return removed;
}

void ReservedChunks::AppendTo(std::string* out) const {
  for (const ChunkRun& r : runs_) {
    Put64(out, r.first);
    Put64(out, r.end);
  }
}

bool ReservedChunks::Parse(std::string_view in) {
  if (in.size() % kEncodedRunBytes != 0 || in.size() / kEncodedRunBytes > kMaxRuns) return false;
  std::vector<ChunkRun> runs;
  for (size_t at = 0; at < in.size(); at += kEncodedRunBytes) {
    ChunkRun r{Get64(in.data() + at), Get64(in.data() + at + 8)};
    if (r.first >= r.end || (!runs.empty() && r.first <= runs.back().end)) return false;
    runs.push_back(r);
  }
  runs_ = std::move(runs);
  return true;
}

}  // namespace pail::fs
