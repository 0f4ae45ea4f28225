// Background work: flushing the write-back buffer on a timer or when memory
// runs short, and freeing the data of deleted files.
#include <spdlog/spdlog.h>

#include "fs/filesystem_impl.h"

namespace pail::fs {

namespace {
// Files reclaimed per engine batch.
constexpr size_t kReclaimFilesPerRound = 64;
}  // namespace

void FileSystemImpl::MaintenanceLoop() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point next_flush = Clock::now() + options_.write_back_interval;
  next_collect_ = Clock::now() + options_.collect_interval;
  maint_mu_.Lock();
  while (!stopping_) {
    while (!stopping_ && !flush_requested_ && !reclaim_rescan_ && reclaim_queue_.empty() &&
           maint_cv_.WaitUntil(std::min(next_flush, next_collect_))) {
      if (Clock::now() >= next_collect_) break;
    }
    if (stopping_) break;
    bool flush = flush_requested_ || Clock::now() >= next_flush;
    flush_requested_ = false;
    bool rescan = reclaim_rescan_;
    reclaim_rescan_ = false;
    std::vector<std::pair<Ino, uint64_t>> queued;
    queued.swap(reclaim_queue_);
    if (rescan) queued.clear();  // the scan finds them too
    maint_mu_.Unlock();

    if (flush) {
      FsStatus flushed = FlushAll();
      MutexLock g(&dirty_mu_);
      if (!flushed.ok()) {
        spdlog::warn("fs: background flush failed (errno {})", flushed.error());
        flush_failures_++;
        background_error_ = flushed.error();
      }
      memory_cv_.SignalAll();
      next_flush = Clock::now() + options_.write_back_interval;
    }
    bool failed = false;
    if (Clock::now() >= next_collect_ && !engine_.fenced()) {
      FsStatus collected = CollectSegments();
      if (!collected.ok()) spdlog::warn("fs: collecting segments failed (errno {})", collected.error());
      next_collect_ = Clock::now() + options_.collect_interval;
    }
    for (size_t i = 0; i < queued.size() && !failed; i += kReclaimFilesPerRound) {
      size_t n = std::min(kReclaimFilesPerRound, queued.size() - i);
      std::vector<std::pair<Ino, uint64_t>> round(queued.begin() + i, queued.begin() + i + n);
      FsStatus s = ReclaimListed(round);
      if (!s.ok()) {
        spdlog::warn("fs: reclaim failed (errno {}); will rescan", s.error());
        failed = true;
      }
    }
    while (rescan && !failed) {
      FsResult<size_t> n = ReclaimScan(kReclaimFilesPerRound);
      if (!n.ok()) {
        spdlog::warn("fs: reclaim scan failed (errno {})", n.error());
        failed = true;
        break;
      }
      if (*n < kReclaimFilesPerRound) break;
      MutexLock g(&maint_mu_);
      if (stopping_) break;
    }
    maint_mu_.Lock();
    if (failed) {
      reclaim_rescan_ = true;
      // Do not spin on a failing engine: wait for the next tick.
      while (!stopping_ && maint_cv_.WaitUntil(next_flush)) {
      }
    }
  }
  maint_mu_.Unlock();
}

FsStatus FileSystemImpl::ReclaimListed(const std::vector<std::pair<Ino, uint64_t>>& files) {
  // The chunks' values are read to return their extents' bytes to their
  // segments; the file's `used` left the stats when it was deleted.
  Txn txn;
  for (const auto& [ino, chunks] : files) {
    FsResult<int64_t> freed = DeleteStoredChunks(ino, 0, chunks, ReservedChunks(), txn);
    if (!freed.ok()) return freed.status();
    txn.batch.Delete(meta_, ReclaimKey(ino));
  }
  FsStatus s = Commit(txn);
  if (!s.ok()) return s;
  reclaimed_files_ += files.size();
  return {};
}

FsResult<size_t> FileSystemImpl::ReclaimScan(size_t max_files) {
  RangeIterator it(db_, meta_, KindPrefix(kKindReclaim), KindPrefix(kKindReclaim + 1));
  std::vector<std::pair<Ino, uint64_t>> found;
  Txn damaged;
  for (; it->Valid() && found.size() < max_files; it->Next()) {
    if (it->key().size() != 9 || it->value().size() != 8) {
      spdlog::error("fs: damaged reclaim record, dropping it");
      damaged.batch.Delete(meta_, it->key());
      continue;
    }
    found.emplace_back(KeyIno(std::string_view(it->key().data(), it->key().size())),
                       GetBigEndian64(it->value().data()));
  }
  if (!it->status().ok()) return EngineError(it->status());
  FsStatus s = Commit(damaged);
  if (s.ok() && !found.empty()) s = ReclaimListed(found);
  if (!s.ok()) return s;
  return found.size();
}

Status FileSystemImpl::ReclaimOrphansAtStart() {
  // No handle survives a restart: every orphan is garbage now.
  std::vector<Ino> orphans;
  {
    RangeIterator it(db_, meta_, KindPrefix(kKindOrphan), KindPrefix(kKindOrphan + 1));
    for (; it->Valid(); it->Next()) {
      if (it->key().size() == 9) {
        orphans.push_back(KeyIno(std::string_view(it->key().data(), it->key().size())));
      }
    }
    if (!it->status().ok()) return engine::FromRocks(it->status());
  }
  for (Ino ino : orphans) {
    InodeLocks lock(locks_, {ino});
    Txn txn;
    FsResult<InodeRecord> r = LoadStoredInode(ino);
    if (r.ok()) {
      DeleteInode(txn, ino, *r, /*has_orphan_mark=*/true);
    } else if (r.error() == ESTALE) {
      txn.batch.Delete(meta_, OrphanKey(ino));
    } else {
      return Status::Corruption("orphan inode " + std::to_string(ino) + " is unreadable");
    }
    FsStatus c = Commit(txn);
    if (!c.ok()) return Status::IOError("reclaiming orphan inode " + std::to_string(ino));
  }
  return Status::OK();
}

}  // namespace pail::fs
