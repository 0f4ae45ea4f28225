// The segment collector: returns the space of deleted and overwritten file
// data to the bucket (docs/FORMAT.md, "Segments").
//
// Each round reads the usage records. A segment no committed value points
// at (live bytes 0) and that no uploaded, uncommitted chunk references is
// dead: its record goes in one batch, and its object is deleted once
// dead_segment_grace has passed and a sync has made that batch durable, so
// neither a restart nor a newer writer can find a value pointing into a
// deleted object. While garbage inside live segments exceeds its budget,
// the emptiest segments have their live extents copied into new segments
// (the footer lists every extent's chunk; a value still pointing at the
// extent is what makes it live), after which they die in turn.
#include <algorithm>
#include <optional>

#include <spdlog/spdlog.h>

#include "engine/data_objects.h"
#include "fs/filesystem_impl.h"

namespace pail::fs {

namespace {
// Garbage inside live segments allowed before the emptiest are rewritten:
// a sixteenth of the live bytes plus a fixed allowance, so a small
// filesystem does not rewrite segments for a few stray extents.
constexpr int64_t kGarbageAllowanceBytes = 32ll << 20;
constexpr int64_t kGarbageLiveDivisor = 16;
// Segments at most this full are rewritten whatever the budget says.
constexpr double kRewriteLiveFraction = 0.5;
// Live bytes moved per round, so a round stays short.
constexpr int64_t kRelocateBytesPerRound = 256ll << 20;
// The listing that finds objects no record names (a crash between upload
// and registration, or a fenced writer's last uploads) runs at open and
// then at most this often.
constexpr std::chrono::hours kOrphanSweepInterval{1};
constexpr uint64_t kFooterProbeBytes = 64 * 1024;
// The collector reads a segment's live extents with one request per run:
// extents less than a gap apart join a run, up to a run's size. A request
// to a cloud bucket takes tens of milliseconds before its first byte, in
// which a megabyte arrives, so reading a gap that small costs less than
// another request.
constexpr uint64_t kRelocationGapBytes = 1 << 20;
constexpr uint64_t kRelocationRunBytes = 4 << 20;
}  // namespace

FsStatus FileSystemImpl::CollectSegments() {
  struct Usage {
    uint64_t id;
    SegmentUsage usage;
  };
  std::vector<Usage> records;
  // A reference goes only after its commit is written, so a commit the
  // read below does not see either keeps its reference through the check
  // after it or released it after this point: such segments wait for the
  // next round. (Checking references only after the read killed segments
  // whose chunks committed meanwhile, found by the crash test.)
  uint64_t released_before;
  {
    MutexLock g(&segments_mu_);
    released_before = release_count_;
  }
  {
    RangeIterator it(db_, meta_, KindPrefix(kKindSegment), KindPrefix(kKindSegment + 1));
    for (; it->Valid(); it->Next()) {
      Usage u{0, {}};
      if (it->key().size() != 9 || !DecodeSegmentUsage(it->value().ToStringView(), &u.usage)) {
        spdlog::error("fs: a segment usage record is damaged; collection stopped");
        return FsError{EIO};
      }
      u.id = KeyIno(it->key().ToStringView());
      records.push_back(u);
    }
    if (!it->status().ok()) return EngineError(it->status());
  }
  int64_t live = 0, garbage = 0;
  std::vector<Usage> candidates;
  rocksdb::WriteBatch dead_batch;
  std::vector<uint64_t> dead;
  {
    MutexLock g(&segments_mu_);
    for (const Usage& u : records) {
      auto st = segments_.find(u.id);
      const bool pending = st != segments_.end() &&
                           (st->second.pending > 0 || st->second.released > released_before);
      live += std::max<int64_t>(0, u.usage.live_bytes);
      if (pending) continue;
      if (u.usage.live_bytes <= 0) {
        // With no uncommitted reference, nothing can point into it again:
        // every commit that added to it is visible to the read above.
        dead_batch.Delete(meta_, SegmentKey(u.id));
        dead.push_back(u.id);
        continue;
      }
      garbage += u.usage.total_bytes - u.usage.live_bytes;
      candidates.push_back(u);
    }
  }
  if (!dead.empty()) {
    Status s = Apply(&dead_batch);
    if (!s.ok()) return EngineError(s);
    const auto when = std::chrono::steady_clock::now() + options_.dead_segment_grace;
    MutexLock g(&segments_mu_);
    for (uint64_t id : dead) dying_.emplace_back(id, when);
  }

  // Rewrite the emptiest segments while garbage is over budget.
  std::sort(candidates.begin(), candidates.end(), [](const Usage& a, const Usage& b) {
    return a.usage.live_bytes * b.usage.total_bytes < b.usage.live_bytes * a.usage.total_bytes;
  });
  int64_t moved = 0;
  for (const Usage& u : candidates) {
    const double fraction =
        static_cast<double>(u.usage.live_bytes) / static_cast<double>(std::max<int64_t>(1, u.usage.total_bytes));
    const bool over_budget = garbage > live / kGarbageLiveDivisor + kGarbageAllowanceBytes;
    if (!over_budget && fraction > kRewriteLiveFraction) break;
    if (moved >= kRelocateBytesPerRound) break;
    FsStatus s = RelocateSegment(u.id, static_cast<uint64_t>(u.usage.total_bytes));
    if (!s.ok()) return s;
    moved += u.usage.live_bytes;
    garbage -= u.usage.total_bytes - u.usage.live_bytes;
  }

  // Delete the objects whose grace has passed, once the batches that
  // killed them are durable.
  std::vector<uint64_t> expired;
  {
    const auto now = std::chrono::steady_clock::now();
    MutexLock g(&segments_mu_);
    for (const auto& [id, when] : dying_) {
      if (when <= now) expired.push_back(id);
    }
  }
  if (!expired.empty()) {
    Status s = engine_.Sync();
    if (s.ok()) s = engine_.data_objects().Delete(expired);
    if (!s.ok()) return EngineError(s);
    segments_deleted_ += expired.size();
    MutexLock g(&segments_mu_);
    std::erase_if(dying_, [&](const auto& d) {
      return std::find(expired.begin(), expired.end(), d.first) != expired.end();
    });
    for (uint64_t id : expired) segments_.erase(id);
  }

  // Again later only if this writer uploaded meanwhile: an idle server
  // sends no request.
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_orphan_sweep_ && segment_puts_.load() != puts_at_last_sweep_) {
    FsStatus s = SweepOrphanSegments();
    if (!s.ok()) return s;
  }
  return {};
}

FsStatus FileSystemImpl::RelocateSegment(uint64_t segment, uint64_t size) {
  engine::DataObjects& objects = engine_.data_objects();
  // The footer.
  std::vector<SegmentEntry> entries;
  uint64_t want = std::min(size, kFooterProbeBytes);
  for (;;) {
    std::string tail(want, '\0');
    Result<size_t> n = objects.ReadOnce(segment, size, size - want, want, tail.data());
    if (!n.ok()) return EngineError(n.status());
    uint64_t need = 0;
    if (!ParseSegmentFooter(std::string_view(tail.data(), *n), size, &entries, &need)) {
      spdlog::error("fs: segment {:016x} has a damaged footer; not collected", segment);
      return {};
    }
    if (need == 0) break;
    if (need <= want) return FsError{EIO};
    want = need;
  }
  // The extent of `value`'s pieces that lies at `offset` of this segment.
  auto find_extent = [segment](const StoredChunk& c, uint32_t offset) -> std::optional<ChunkExtent> {
    for (const ChunkPiece& p : ChunkPieces(c)) {
      if (p.extent.segment == segment && p.extent.offset == offset) return p.extent;
    }
    return std::nullopt;
  };
  // Its live extents: those a piece of their chunk's value still points at.
  struct Live {
    SegmentEntry entry;
    ChunkExtent extent;
    std::string stored;
  };
  std::vector<Live> live;
  for (const SegmentEntry& e : entries) {
    FsResult<std::optional<std::string>> value = GetChunkValue(e.ino, e.index);
    if (!value.ok()) return value.status();
    StoredChunk c;
    if (!value->has_value() || !DecodeChunk(**value, &c)) continue;
    std::optional<ChunkExtent> extent = find_extent(c, e.offset);
    if (!extent) continue;
    live.push_back({e, *extent, {}});
  }
  // Read them in runs: extents up to kRelocationGapBytes apart come in one
  // request, the bytes between them too.
  std::sort(live.begin(), live.end(),
            [](const Live& a, const Live& b) { return a.extent.offset < b.extent.offset; });
  std::string run;
  for (size_t first = 0, last; first < live.size(); first = last) {
    const uint64_t begin = live[first].extent.offset;
    uint64_t end = begin + live[first].extent.stored_len;
    for (last = first + 1; last < live.size(); ++last) {
      const ChunkExtent& next = live[last].extent;
      const uint64_t next_end = std::max<uint64_t>(end, next.offset + next.stored_len);
      if (next.offset > end + kRelocationGapBytes || next_end - begin > kRelocationRunBytes) break;
      end = next_end;
    }
    run.resize(end - begin);
    Result<size_t> n = objects.ReadOnce(segment, size, begin, run.size(), run.data());
    if (!n.ok()) return EngineError(n.status());
    if (*n != run.size()) return FsError{EIO};
    for (size_t k = first; k < last; ++k) {
      live[k].stored.assign(run, live[k].extent.offset - begin, live[k].extent.stored_len);
    }
  }
  std::string().swap(run);
  // Into new segments, then each value is switched under its file's lock
  // if it still points at the old extent and no unflushed write covers it.
  size_t i = 0;
  size_t remaining = 0;
  for (const Live& l : live) remaining += l.stored.size();
  while (i < live.size()) {
    const size_t target = std::max<size_t>(4 * kChunkSize, options_.segment_bytes);
    SegmentBuilder builder(objects.NewId(), compression_, std::min(target, remaining));
    std::vector<std::pair<size_t, ChunkExtent>> placed;
    for (; i < live.size() && builder.bytes() < target; ++i) {
      placed.emplace_back(i, builder.AddStored(live[i].entry.ino, live[i].entry.index,
                                               live[i].extent, live[i].stored));
      remaining -= live[i].stored.size();
      std::string().swap(live[i].stored);
    }
    const uint64_t new_id = builder.segment();
    AddPending(new_id, static_cast<int64_t>(placed.size()));
    FsStatus put = PutSegment(builder, nullptr, /*keep_in_memory=*/false);
    if (!put.ok()) {
      AddPending(new_id, -static_cast<int64_t>(placed.size()));
      return put;
    }
    FsStatus result;
    for (const auto& [k, extent] : placed) {
      const Live& l = live[k];
      InodeLocks lock(locks_, {l.entry.ino});
      if (DirtyFile* f = FindDirty(l.entry.ino); f != nullptr && f->chunks.count(l.entry.index)) {
        continue;  // about to be replaced anyway; its commit frees the old extent
      }
      FsResult<std::optional<std::string>> value = GetChunkValue(l.entry.ino, l.entry.index);
      if (!value.ok()) {
        result = value.status();
        break;
      }
      StoredChunk c;
      if (!value->has_value() || !DecodeChunk(**value, &c) || !find_extent(c, l.extent.offset)) {
        continue;
      }
      // Every piece reading from the old extent reads from the new one.
      std::string moved;
      if (c.is_extent) {
        moved = EncodeExtentChunk(extent);
      } else {
        for (ChunkPiece& p : c.pieces) {
          if (p.extent.segment == segment && p.extent.offset == l.extent.offset) p.extent = extent;
        }
        moved = EncodePiecesChunk(c.pieces);
      }
      Txn txn;
      txn.batch.Put(data_, ChunkKey(l.entry.ino, l.entry.index), moved);
      txn.segment_live[extent.segment] += extent.stored_len;
      txn.segment_live[segment] -= l.extent.stored_len;
      FsStatus s = Commit(txn);
      if (!s.ok()) {
        result = s;
        break;
      }
    }
    AddPending(new_id, -static_cast<int64_t>(placed.size()));
    if (!result.ok()) return result;
  }
  segments_relocated_++;
  return {};
}

FsStatus FileSystemImpl::SweepOrphanSegments() {
  engine::DataObjects& objects = engine_.data_objects();
  Result<std::vector<std::pair<uint64_t, uint64_t>>> listed = objects.List();
  if (!listed.ok()) return EngineError(listed.status());
  next_orphan_sweep_ = std::chrono::steady_clock::now() + kOrphanSweepInterval;
  puts_at_last_sweep_ = segment_puts_.load();
  std::vector<uint64_t> orphans;
  {
    MutexLock g(&segments_mu_);
    for (const auto& [id, size] : *listed) {
      // This writer's own objects may be on their way to a record.
      if (engine::DataObjects::EpochOf(id) >= objects.epoch()) continue;
      if (segments_.count(id) == 0) orphans.push_back(id);
    }
  }
  if (orphans.empty()) return {};
  spdlog::info("fs: deleting {} data objects no record names (left by a crash or a fenced writer)",
               orphans.size());
  Status s = objects.Delete(orphans);
  if (!s.ok()) return EngineError(s);
  segments_deleted_ += orphans.size();
  return {};
}

}  // namespace pail::fs
