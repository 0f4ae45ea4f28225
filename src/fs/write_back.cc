// The write-back buffer: unflushed file data, kept per file in whole chunks
// so that many small writes to a chunk reach the engine as one put.
#include <algorithm>
#include <vector>

#include "fs/filesystem_impl.h"

namespace pail::fs {

namespace {
// A writer waiting for memory re-requests a flush this often, in case the
// flusher was busy with an older request when it asked.
constexpr std::chrono::seconds kMemoryRecheck{1};
}  // namespace

DirtyFile* FileSystemImpl::FindDirty(Ino ino) {
  MutexLock g(&dirty_mu_);
  auto it = dirty_.find(ino);
  return it == dirty_.end() ? nullptr : it->second.get();
}

DirtyFile& FileSystemImpl::GetOrCreateDirty(Ino ino, const InodeRecord& stored) {
  MutexLock g(&dirty_mu_);
  std::unique_ptr<DirtyFile>& slot = dirty_[ino];
  if (!slot) {
    slot = std::make_unique<DirtyFile>();
    slot->inode = stored;
    slot->engine_used = stored.used;
    slot->stored_chunk_limit = ChunkCount(stored.size);
  }
  return *slot;
}

void FileSystemImpl::AddMemory(DirtyFile& f, int64_t delta) {
  f.memory = static_cast<size_t>(static_cast<int64_t>(f.memory) + delta);
  dirty_memory_ += delta;
}

FsStatus FileSystemImpl::ReserveMemory(int64_t bytes) {
  if (bytes == 0) return {};
  const int64_t limit = static_cast<int64_t>(options_.write_back_bytes);
  MutexLock g(&dirty_mu_);
  const uint64_t failures_seen = flush_failures_;
  for (;;) {
    int64_t taken = dirty_memory_.load() + reserved_memory_;
    // An empty buffer admits any one piece, so a bound smaller than a
    // piece still makes progress.
    if (taken + bytes <= limit || taken == 0) {
      reserved_memory_ += bytes;
      return {};
    }
    if (flush_failures_ != failures_seen) return FsError{EIO};
    if (engine_.fenced()) return FsError{EROFS};
    {
      MutexLock m(&maint_mu_);
      if (stopping_) return FsError{EIO};  // no flusher left to free memory
      flush_requested_ = true;
    }
    maint_cv_.Signal();
    // The flusher signals under dirty_mu_, so no wake-up is lost; the
    // timeout re-requests a flush the flusher may have taken as done.
    const auto wait_start = std::chrono::steady_clock::now();
    memory_cv_.WaitFor(kMemoryRecheck);
    writer_wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - wait_start).count();
  }
}

void FileSystemImpl::ReleaseMemory(int64_t bytes) {
  if (bytes == 0) return;
  MutexLock g(&dirty_mu_);
  reserved_memory_ -= bytes;
  memory_cv_.SignalAll();
}

FsResult<DirtyChunk*> FileSystemImpl::EnsureChunk(Ino ino, DirtyFile& f, uint64_t index) {
  locks_.AssertHeld(ino);
  auto it = f.chunks.find(index);
  if (it != f.chunks.end()) return &it->second;
  DirtyChunk chunk;
  // Past the stored limit the engine has nothing: no read needed (appends).
  if (index < f.stored_chunk_limit) {
    rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), data_, ChunkKey(ino, index), &chunk.data);
    if (rs.IsNotFound()) {
      chunk.data.clear();
    } else if (!rs.ok()) {
      return EngineError(rs);
    }
    chunk.stored_len = chunk.data.size();
  }
  AddMemory(f, static_cast<int64_t>(chunk.data.size()));
  auto [pos, inserted] = f.chunks.emplace(index, std::move(chunk));
  return &pos->second;
}

void FileSystemImpl::CarryDirty(Txn& txn, Ino ino, DirtyFile& f, InodeRecord& r) {
  locks_.AssertHeld(ino);
  bool already = std::find(txn.carried.begin(), txn.carried.end(), ino) != txn.carried.end();
  int64_t used = static_cast<int64_t>(f.engine_used);
  for (auto& [index, chunk] : f.chunks) {
    // Stored without trailing zeros; nothing at all for a chunk of zeros.
    size_t len = chunk.data.size();
    while (len > 0 && chunk.data[len - 1] == 0) --len;
    used += static_cast<int64_t>(len) - static_cast<int64_t>(chunk.stored_len);
    if (already) continue;
    if (len == 0) {
      if (chunk.stored_len > 0) {
        txn.batch.Delete(data_, ChunkKey(ino, index));
        chunk_deletes_++;
      }
    } else {
      txn.batch.Put(data_, ChunkKey(ino, index), rocksdb::Slice(chunk.data.data(), len));
      chunk_puts_++;
    }
  }
  r.used = static_cast<uint64_t>(used);
  if (already) return;
  txn.used_bytes_delta += used - static_cast<int64_t>(f.engine_used);
  txn.carried.push_back(ino);
}

void FileSystemImpl::AfterCommit(const Txn& txn) {
  if (txn.carried.empty() && txn.discarded.empty()) return;
  MutexLock g(&dirty_mu_);
  for (const std::vector<Ino>* forget : {&txn.carried, &txn.discarded}) {
    for (Ino ino : *forget) {
      auto it = dirty_.find(ino);
      if (it == dirty_.end()) continue;
      DirtyFile& f = *it->second;
      dirty_memory_ -= static_cast<int64_t>(f.memory);
      dirty_used_ -= static_cast<int64_t>(f.inode.used) - static_cast<int64_t>(f.engine_used);
      dirty_.erase(it);
    }
  }
  memory_cv_.SignalAll();
}

FsStatus FileSystemImpl::FlushFile(Ino ino) {
  locks_.AssertHeld(ino);
  DirtyFile* f = FindDirty(ino);
  if (f == nullptr) return {};
  Txn txn;
  InodeRecord r = f->inode;
  PutInode(txn, ino, r);
  return Commit(txn);
}

FsStatus FileSystemImpl::FlushFileLocking(Ino ino) {
  InodeLocks lock(locks_, {ino});
  return FlushFile(ino);
}

FsStatus FileSystemImpl::FlushAll() {
  std::vector<Ino> inos;
  {
    MutexLock g(&dirty_mu_);
    inos.reserve(dirty_.size());
    for (const auto& [ino, f] : dirty_) inos.push_back(ino);
  }
  FsStatus first;
  for (Ino ino : inos) {
    FsStatus s = FlushFileLocking(ino);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

}  // namespace pail::fs
