// The write-back buffer: unflushed file data, kept per file in whole chunks
// so that many small writes to a chunk reach the engine as one value. Full
// chunks of big files leave memory early, uploaded to segments by the
// uploader (segment_io.cc); the commit then only writes their extents.
#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/data_objects.h"
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
    // Uploading full chunks frees memory without a commit.
    RequestUpload(/*all=*/true);
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

FsResult<DirtyChunk*> FileSystemImpl::EnsureChunk(Ino ino, DirtyFile& f, uint64_t index,
                                                  bool need_bytes) {
  locks_.AssertHeld(ino);
  auto it = f.chunks.find(index);
  if (it != f.chunks.end()) {
    if (need_bytes && it->second.uploaded) {
      FsStatus s = MaterializeChunk(f, it->second);
      if (!s.ok()) return s;
    }
    return &it->second;
  }
  DirtyChunk chunk;
  chunk.version = NextChunkVersion();
  // Past the stored limit the engine has nothing: no read needed (appends).
  if (index < f.stored_chunk_limit) {
    FsResult<std::optional<std::string>> value = GetChunkValue(ino, index);
    if (!value.ok()) return value.status();
    if (value->has_value()) {
      StoredChunk stored;
      if (!DecodeChunk(**value, &stored)) {
        spdlog::error("fs: chunk {} of inode {} has a damaged value", index, ino);
        return FsError{EIO};
      }
      chunk.stored_len = stored.plain_len();
      if (stored.is_extent) chunk.stored_extent = stored.extent;
      if (need_bytes) {
        FsStatus s = LoadChunkBytes(stored, &chunk.data);
        if (!s.ok()) return s;
      }
    }
  }
  AddMemory(f, static_cast<int64_t>(chunk.data.size()));
  auto [pos, inserted] = f.chunks.emplace(index, std::move(chunk));
  return &pos->second;
}

FsStatus FileSystemImpl::MaterializeChunk(DirtyFile& f, DirtyChunk& c) {
  std::string bytes(c.extent.plain_len, '\0');
  std::vector<ExtentRead> read{{c.extent, 0, c.extent.plain_len, 0}};
  FsStatus s = ReadExtents(read, bytes.data());
  if (!s.ok()) return s;
  AddPending(c.extent.segment, -1);  // that upload is garbage now
  c.uploaded = false;
  c.data = std::move(bytes);
  AddMemory(f, static_cast<int64_t>(c.data.size()));
  return {};
}

void FileSystemImpl::CarryDirty(Txn& txn, Ino ino, DirtyFile& f, InodeRecord& r) {
  locks_.AssertHeld(ino);
  int64_t used = static_cast<int64_t>(f.engine_used);
  for (const auto& [index, chunk] : f.chunks) {
    // Stored without trailing zeros; nothing at all for a chunk of zeros.
    const uint64_t len = chunk.uploaded ? chunk.extent.plain_len : PlainLength(chunk.data);
    used += static_cast<int64_t>(len) - static_cast<int64_t>(chunk.stored_len);
  }
  r.used = static_cast<uint64_t>(used);
  if (std::find(txn.carried.begin(), txn.carried.end(), ino) != txn.carried.end()) return;
  txn.used_bytes_delta += used - static_cast<int64_t>(f.engine_used);
  txn.carried.push_back(ino);
}

size_t FileSystemImpl::SegmentBytesAwaiting(const Txn& txn) {
  size_t bytes = 0;
  for (Ino ino : txn.carried) {
    const DirtyFile* f = FindDirty(ino);
    if (f == nullptr) continue;
    for (const auto& [index, chunk] : f->chunks) {
      if (!chunk.uploaded && BelongsInSegment(f->inode.size, index)) bytes += chunk.data.size();
    }
  }
  return bytes;
}

FsStatus FileSystemImpl::EncodeCarried(Txn& txn) {
  std::optional<SegmentBuilder> builder;
  struct Placed {
    Ino ino;
    uint64_t index;
    ChunkExtent extent;
  };
  std::vector<Placed> placed;
  for (Ino ino : txn.carried) {
    locks_.AssertHeld(ino);
    DirtyFile* f = FindDirty(ino);
    if (f == nullptr) continue;
    // The size the committed record gets: the batch holds it already.
    const uint64_t size = f->inode.size;
    for (auto& [index, chunk] : f->chunks) {
      if (chunk.stored_extent) {
        txn.segment_live[chunk.stored_extent->segment] -= chunk.stored_extent->stored_len;
      }
      if (chunk.uploaded) {
        txn.batch.Put(data_, ChunkKey(ino, index), EncodeExtentChunk(chunk.extent));
        txn.segment_live[chunk.extent.segment] += chunk.extent.stored_len;
        chunk_puts_++;
        continue;
      }
      const size_t len = PlainLength(chunk.data);
      if (len == 0) {
        if (chunk.stored_len > 0 || chunk.stored_extent) {
          txn.batch.Delete(data_, ChunkKey(ino, index));
          chunk_deletes_++;
        }
        continue;
      }
      std::string_view bytes(chunk.data.data(), len);
      if (BelongsInSegment(size, index)) {
        if (!builder) {
          builder.emplace(engine_.data_objects().NewId(), compression_, SegmentBytesAwaiting(txn));
        }
        placed.push_back({ino, index, builder->Add(ino, index, bytes)});
      } else {
        txn.batch.Put(data_, ChunkKey(ino, index), EncodeInlineChunk(bytes));
      }
      chunk_puts_++;
    }
  }
  if (!builder) return {};
  FsStatus s = PutSegment(*builder, &txn);
  if (!s.ok()) return s;
  for (const Placed& p : placed) {
    txn.batch.Put(data_, ChunkKey(p.ino, p.index), EncodeExtentChunk(p.extent));
    txn.segment_live[p.extent.segment] += p.extent.stored_len;
  }
  return {};
}

void FileSystemImpl::AfterCommit(const Txn& txn) {
  if (txn.carried.empty() && txn.discarded.empty()) return;
  std::vector<std::unique_ptr<DirtyFile>> done;
  {
    MutexLock g(&dirty_mu_);
    for (const std::vector<Ino>* forget : {&txn.carried, &txn.discarded}) {
      for (Ino ino : *forget) {
        auto it = dirty_.find(ino);
        if (it == dirty_.end()) continue;
        DirtyFile& f = *it->second;
        dirty_memory_ -= static_cast<int64_t>(f.memory);
        dirty_used_ -= static_cast<int64_t>(f.inode.used) - static_cast<int64_t>(f.engine_used);
        done.push_back(std::move(it->second));
        dirty_.erase(it);
      }
    }
    memory_cv_.SignalAll();
  }
  // Their uploaded chunks are committed now (or, for discarded files,
  // garbage): the segments need no protection on their account.
  for (const auto& f : done) {
    for (const auto& [index, chunk] : f->chunks) {
      if (chunk.uploaded) AddPending(chunk.extent.segment, -1);
    }
  }
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

FsStatus FileSystemImpl::SettleUploads(Ino ino, bool upload_first) {
  for (bool uploaded = !upload_first;;) {
    bool in_memory = false, in_flight = false;
    {
      InodeLocks lock(locks_, {ino});
      DirtyFile* f = FindDirty(ino);
      if (f == nullptr) return {};
      for (const auto& [index, c] : f->chunks) {
        if (c.uploading) in_flight = true;
        if (AwaitsUpload(*f, index, c)) in_memory = true;
      }
    }
    if (in_memory && !uploaded) {
      FsStatus u = UploadEligible(/*all=*/true);
      if (!u.ok()) return u;
      uploaded = true;
      continue;
    }
    if (!in_flight) return {};
    MutexLock g(&dirty_mu_);
    memory_cv_.WaitFor(std::chrono::milliseconds(20));
  }
}

FsStatus FileSystemImpl::FlushFileLocking(Ino ino) {
  // Chunks written since FlushAll's upload go up now, in the uploader's
  // parallel PUTs, rather than in the commit while the file stays locked.
  FsStatus settled = SettleUploads(ino, /*upload_first=*/true);
  if (!settled.ok()) return settled;
  InodeLocks lock(locks_, {ino});
  return FlushFile(ino);
}

FsStatus FileSystemImpl::FlushAll() {
  // Full chunks first go to segments, packed across files, so the commits
  // below write extents rather than upload one small segment per file.
  FsStatus uploaded = UploadEligible(/*all=*/true);
  std::vector<Ino> inos;
  {
    MutexLock g(&dirty_mu_);
    inos.reserve(dirty_.size());
    for (const auto& [ino, f] : dirty_) inos.push_back(ino);
  }
  FsStatus first = uploaded;
  for (Ino ino : inos) {
    FsStatus s = FlushFileLocking(ino);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

}  // namespace pail::fs
