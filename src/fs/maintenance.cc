// Background work: flushing the write-back buffer on a timer or when memory
// runs short, and freeing the data of deleted files.
#include <spdlog/spdlog.h>

#include "fs/filesystem_impl.h"

namespace pail::fs {

namespace {
// Files reclaimed per engine batch, and chunks deleted one by one before a
// range deletion is used instead (range tombstones cost reads; point
// deletes of a few chunks do not).
constexpr size_t kReclaimFilesPerRound = 64;
constexpr uint64_t kPointDeleteChunkLimit = 16;

void DeleteChunks(rocksdb::WriteBatch& batch, rocksdb::ColumnFamilyHandle* data, Ino ino,
                  uint64_t chunks) {
  if (chunks <= kPointDeleteChunkLimit) {
    for (uint64_t i = 0; i < chunks; ++i) batch.Delete(data, ChunkKey(ino, i));
  } else {
    batch.DeleteRange(data, ChunkKey(ino, 0), ChunkKey(ino, chunks));
  }
}
}  // namespace

void FileSystemImpl::MaintenanceLoop() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point next_flush = Clock::now() + options_.write_back_interval;
  maint_mu_.Lock();
  while (!stopping_) {
    while (!stopping_ && !flush_requested_ && !reclaim_rescan_ && reclaim_queue_.empty() &&
           maint_cv_.WaitUntil(next_flush)) {
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
      }
      memory_cv_.SignalAll();
      next_flush = Clock::now() + options_.write_back_interval;
    }
    bool failed = false;
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
  rocksdb::WriteBatch batch;
  for (const auto& [ino, chunks] : files) {
    DeleteChunks(batch, data_, ino, chunks);
    batch.Delete(meta_, ReclaimKey(ino));
  }
  if (batch.Count() == 0) return {};
  Status s = engine_.Write(&batch);
  engine_writes_++;
  if (!s.ok()) return EngineError(s);
  reclaimed_files_ += files.size();
  return {};
}

FsResult<size_t> FileSystemImpl::ReclaimScan(size_t max_files) {
  std::string prefix = KindPrefix(kKindReclaim);
  std::string upper = KindPrefix(kKindReclaim + 1);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
  rocksdb::WriteBatch batch;
  size_t files = 0;
  for (it->Seek(prefix); it->Valid() && files < max_files; it->Next()) {
    if (it->key().size() != 9 || it->value().size() != 8) {
      spdlog::error("fs: damaged reclaim record, dropping it");
      batch.Delete(meta_, it->key());
      continue;
    }
    Ino ino = KeyIno(std::string_view(it->key().data(), it->key().size()));
    DeleteChunks(batch, data_, ino, GetBigEndian64(it->value().data()));
    batch.Delete(meta_, it->key());
    files++;
  }
  if (!it->status().ok()) return EngineError(it->status());
  if (batch.Count() == 0) return files;
  Status s = engine_.Write(&batch);
  engine_writes_++;
  if (!s.ok()) return EngineError(s);
  reclaimed_files_ += files;
  return files;
}

Status FileSystemImpl::ReclaimOrphansAtStart() {
  // No handle survives a restart: every orphan is garbage now.
  std::string prefix = KindPrefix(kKindOrphan);
  std::string upper = KindPrefix(kKindOrphan + 1);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::vector<Ino> orphans;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
    for (it->Seek(prefix); it->Valid(); it->Next()) {
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
