// The write-back buffer: unflushed file data, kept per file in whole chunks
// so that many small writes to a chunk reach the engine as one value. Full
// chunks of big files leave memory early, uploaded to segments by the
// uploader (segment_io.cc); the commit then only writes their extents.
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/data_objects.h"
#include "fs/filesystem_impl.h"
#include "util/blocking_hint.h"

namespace pail::fs {

namespace {
// A writer waiting for memory re-requests a flush this often, in case the
// flusher was busy with an older request when it asked.
constexpr std::chrono::seconds kMemoryRecheck{1};
// A commit builds and uploads one segment of the file's full chunks still in
// memory while holding the file's lock. Before it, up to this many upload
// passes run without the lock while more than kCommitUploadBytes would be
// left to it (writers keep adding chunks during a pass); then the commit
// takes whatever remains.
constexpr int kMaxFlushUploadPasses = 3;
constexpr size_t kCommitUploadBytes = 1u << 20;
// An fsync commits at most this many chunks that belong in a segment inline
// (CommitInline): 128 KiB more in the engine's log beats a segment put
// ahead of it; past that, the segment is worth its own upload.
constexpr size_t kMaxInlineChunks = 4;

// The record of `ino` that a committed batch wrote (PutInode puts one in
// every batch that carries a file).
const InodeRecord& CommittedRecord(const Txn& txn, Ino ino) {
  auto it = std::find_if(txn.inodes.rbegin(), txn.inodes.rend(),
                         [ino](const auto& written) { return written.first == ino; });
  return *it->second;
}

// Takes the prefetched bytes of `extent` for chunk `index`, if there are.
bool TakePrefetched(std::vector<ChunkPrefetch>* prefetched, uint64_t index,
                    const ChunkExtent& extent, std::string* out) {
  if (prefetched == nullptr) return false;
  for (ChunkPrefetch& p : *prefetched) {
    if (p.index == index && p.extent == extent && p.bytes.size() == extent.plain_len) {
      *out = std::move(p.bytes);
      p.index = UINT64_MAX;  // used up
      return true;
    }
  }
  return false;
}

// A stand-in for the segment extent of an overlay's blocks while they are
// still in memory: no segment has this id and offset.
ChunkExtent InMemoryExtent() {
  ChunkExtent e;
  e.segment = UINT64_MAX;
  e.offset = UINT32_MAX;
  e.plain_len = kChunkSize;
  return e;
}

uint8_t BlockMask(uint64_t from, uint64_t to) {
  uint8_t mask = 0;
  for (uint64_t k = from / kPieceBlockBytes; k < to / kPieceBlockBytes; ++k) mask |= 1u << k;
  return mask;
}

// The runs of set bits of `blocks` as pieces of `extent`, which holds the
// set blocks back to back.
PieceList BlockPieces(uint8_t blocks, const ChunkExtent& extent) {
  PieceList out;
  uint32_t at = 0;
  for (uint32_t k = 0; k < kChunkSize / kPieceBlockBytes; ++k) {
    if (!(blocks & (1u << k))) continue;
    if (!out.empty() && out.back().end() == k * kPieceBlockBytes) {
      out.back().length += kPieceBlockBytes;
    } else {
      out.push_back(ChunkPiece{k * kPieceBlockBytes, kPieceBlockBytes, at, extent});
    }
    at += kPieceBlockBytes;
  }
  return out;
}
}  // namespace

size_t OverlayBytes(uint8_t blocks) {
  return static_cast<size_t>(std::popcount(blocks)) * kPieceBlockBytes;
}

PieceList OverlayPieces(const DirtyChunk& c, const ChunkExtent& blocks_extent) {
  return LayPieces(c.base, BlockPieces(c.blocks, blocks_extent));
}

uint64_t OverlayLength(const DirtyChunk& c) {
  uint64_t len = c.base.empty() ? 0 : c.base.back().end();
  for (uint32_t k = 0; k < kChunkSize / kPieceBlockBytes; ++k) {
    if (c.blocks & (1u << k)) len = std::max<uint64_t>(len, (k + 1) * kPieceBlockBytes);
  }
  return len;
}

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

bool FileSystemImpl::TryCharge(int64_t growth) {
  const int64_t limit = options_.max_size_bytes != 0
                            ? static_cast<int64_t>(std::min<uint64_t>(options_.max_size_bytes, INT64_MAX))
                            : INT64_MAX;
  int64_t dirty = dirty_used_.load();
  do {
    // Flushes move charges from dirty_used_ to stored_used_, raising the
    // stored count first: a racing read can only overcount.
    const int64_t charged = std::max<int64_t>(0, stored_used_.load() + dirty);
    if (growth > 0 && (charged > limit || growth > limit - charged)) return false;
  } while (!dirty_used_.compare_exchange_weak(dirty, dirty + growth));
  return true;
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
    if (flush_failures_ != failures_seen) return FsError{background_error_};
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
    BlockingHint::AboutToBlock();
    memory_cv_.WaitFor(kMemoryRecheck);
    writer_wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - wait_start).count();
  }
}

FsStatus FileSystemImpl::TryReserveMemory(int64_t bytes) {
  if (bytes == 0) return {};
  const int64_t limit = static_cast<int64_t>(options_.write_back_bytes);
  MutexLock g(&dirty_mu_);
  const int64_t taken = dirty_memory_.load() + reserved_memory_;
  // The same admission as ReserveMemory's, minus the waiting.
  if (taken + bytes > limit && taken != 0) return FsError{EWOULDBLOCK};
  reserved_memory_ += bytes;
  return {};
}

void FileSystemImpl::ReleaseMemory(int64_t bytes) {
  if (bytes == 0) return;
  MutexLock g(&dirty_mu_);
  reserved_memory_ -= bytes;
  memory_cv_.SignalAll();
}

std::vector<ChunkPrefetch> FileSystemImpl::PrefetchChunks(Ino ino, uint64_t offset,
                                                          uint64_t length) {
  std::vector<ChunkPrefetch> wanted;
  if (length == 0) return wanted;
  const uint64_t end = offset + length;
  // Only the first and the last chunk can be changed in part.
  // A write of whole blocks may keep its chunks as overlays, which never
  // read the old bytes (EnsureOverlay); if it cannot, it reads them itself.
  if (offset % kPieceBlockBytes == 0 && end % kPieceBlockBytes == 0) return wanted;
  std::vector<uint64_t> partial;
  for (uint64_t index : {offset / kChunkSize, (end - 1) / kChunkSize}) {
    const uint64_t start = index * kChunkSize;
    const bool whole = offset <= start && end >= start + kChunkSize;
    if (!whole && (partial.empty() || partial.back() != index)) partial.push_back(index);
  }
  if (partial.empty()) return wanted;
  std::vector<uint64_t> lookup;  // chunks whose stored value says where
  {
    InodeLocks lock(locks_, {ino});
    DirtyFile* f = FindDirty(ino);
    uint64_t stored_limit;
    if (f != nullptr) {
      stored_limit = f->stored_chunk_limit;
    } else {
      FsResult<InodeRecord> r = LoadStoredInode(ino);
      if (!r.ok() || !r->is_reg()) return wanted;
      stored_limit = ChunkCount(r->size);
    }
    for (uint64_t index : partial) {
      auto it = f == nullptr ? decltype(f->chunks)::iterator() : f->chunks.find(index);
      if (f != nullptr && it != f->chunks.end()) {
        if (it->second.uploaded && !it->second.overlay()) {
          wanted.push_back({index, it->second.extent, {}});
        }
      } else if (index < stored_limit) {
        lookup.push_back(index);
      }
    }
  }
  for (uint64_t index : lookup) {
    FsResult<std::optional<std::string>> value = GetChunkValue(ino, index);
    StoredChunk stored;
    if (value.ok() && value->has_value() && DecodeChunk(**value, &stored) && stored.is_extent) {
      wanted.push_back({index, stored.extent, {}});
    }
  }
  for (ChunkPrefetch& p : wanted) {
    if (!ReadExtentBytes(p.extent, &p.bytes).ok()) p.bytes.clear();
  }
  return wanted;
}

FsResult<DirtyChunk*> FileSystemImpl::EnsureChunk(Ino ino, DirtyFile& f, uint64_t index,
                                                  bool need_bytes,
                                                  std::vector<ChunkPrefetch>* prefetched) {
  locks_.AssertHeld(ino);
  auto it = f.chunks.find(index);
  if (it != f.chunks.end()) {
    if (need_bytes && it->second.overlay()) {
      FsStatus s = MaterializeOverlay(f, it->second);
      if (!s.ok()) return s;
      return &it->second;
    }
    if (need_bytes && it->second.uploaded) {
      std::string bytes;
      const bool have = TakePrefetched(prefetched, index, it->second.extent, &bytes);
      FsStatus s = MaterializeChunk(f, it->second, have ? &bytes : nullptr);
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
      chunk.stored_extents = DistinctExtents(ChunkPieces(stored));
      const bool have = need_bytes && stored.is_extent &&
                        TakePrefetched(prefetched, index, stored.extent, &chunk.data);
      if (need_bytes && !have) {
        FsStatus s = LoadChunkBytes(stored, &chunk.data);
        if (!s.ok()) return s;
      }
    }
  }
  AddMemory(f, static_cast<int64_t>(chunk.data.size()));
  auto [pos, inserted] = f.chunks.emplace(index, std::move(chunk));
  return &pos->second;
}

FsStatus FileSystemImpl::MaterializeChunk(DirtyFile& f, DirtyChunk& c, std::string* bytes) {
  std::string read_bytes;
  if (bytes == nullptr) {
    FsStatus s = ReadExtentBytes(c.extent, &read_bytes);
    if (!s.ok()) return s;
    bytes = &read_bytes;
  }
  AddPending(c.extent.segment, -1);  // that upload is garbage now
  c.uploaded = false;
  c.data = std::move(*bytes);
  AddMemory(f, static_cast<int64_t>(c.data.size()));
  return {};
}

FsResult<DirtyChunk*> FileSystemImpl::EnsureOverlay(Ino ino, DirtyFile& f, uint64_t index,
                                                    uint32_t from, uint32_t to) {
  locks_.AssertHeld(ino);
  const uint8_t add = BlockMask(from, to);
  auto it = f.chunks.find(index);
  if (it != f.chunks.end()) {
    DirtyChunk& c = it->second;
    if (!c.overlay()) return nullptr;
    if (LayPieces(c.base, BlockPieces(c.blocks | add, InMemoryExtent())).size() > kMaxChunkPieces) {
      return nullptr;
    }
    // New blocks go between the uploaded ones: those come back first.
    if (c.uploaded) {
      FsStatus s = MaterializeChunk(f, c);
      if (!s.ok()) return s;
    }
    return &c;
  }
  if (index >= f.stored_chunk_limit) return nullptr;
  FsResult<std::optional<std::string>> value = GetChunkValue(ino, index);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return nullptr;
  StoredChunk stored;
  if (!DecodeChunk(**value, &stored)) {
    spdlog::error("fs: chunk {} of inode {} has a damaged value", index, ino);
    return FsError{EIO};
  }
  if (stored.is_inline()) return nullptr;  // its bytes are at hand anyway
  DirtyChunk chunk;
  chunk.base = ChunkPieces(stored);
  if (LayPieces(chunk.base, BlockPieces(add, InMemoryExtent())).size() > kMaxChunkPieces) {
    return nullptr;
  }
  chunk.version = NextChunkVersion();
  chunk.is_overlay = true;
  chunk.stored_len = stored.plain_len();
  chunk.stored_extents = DistinctExtents(chunk.base);
  // With no blocks yet it reads (and would commit) as the stored value, so
  // a write refused after this point changes nothing.
  auto [pos, inserted] = f.chunks.emplace(index, std::move(chunk));
  return &pos->second;
}

FsStatus FileSystemImpl::MaterializeOverlay(DirtyFile& f, DirtyChunk& c) {
  if (c.uploaded) {
    FsStatus s = MaterializeChunk(f, c);
    if (!s.ok()) return s;
  }
  std::string full;
  FsStatus s = LoadPiecesBytes(c.base, &full);
  if (!s.ok()) return s;
  full.resize(kChunkSize, '\0');
  size_t at = 0;
  for (uint32_t k = 0; k < kChunkSize / kPieceBlockBytes; ++k) {
    if (!(c.blocks & (1u << k))) continue;
    std::memcpy(full.data() + k * kPieceBlockBytes, c.data.data() + at, kPieceBlockBytes);
    at += kPieceBlockBytes;
  }
  full.resize(PlainLength(full));
  AddMemory(f, static_cast<int64_t>(full.size()) - static_cast<int64_t>(c.data.size()));
  c.data = std::move(full);
  c.is_overlay = false;
  c.blocks = 0;
  c.base.clear();
  // An upload of the blocks still on its way must not land on the whole
  // chunk (its extent holds the blocks alone): a new version makes it stale,
  // even when the write that needed these bytes is then refused.
  c.version = NextChunkVersion();
  c.uploading = false;
  return {};
}

void FileSystemImpl::CarryDirty(Txn& txn, Ino ino, DirtyFile& f, InodeRecord& r) {
  locks_.AssertHeld(ino);
  int64_t used = static_cast<int64_t>(f.engine_used);
  for (const auto& [index, chunk] : f.chunks) {
    if (f.inode.reserved.Contains(index)) continue;  // charged whole
    // Stored without trailing zeros; nothing at all for a chunk of zeros.
    const uint64_t len = chunk.overlay()    ? OverlayLength(chunk)
                         : chunk.uploaded ? chunk.extent.plain_len
                                          : PlainLength(chunk.data);
    used += static_cast<int64_t>(len) - static_cast<int64_t>(chunk.stored_len);
  }
  r.used = static_cast<uint64_t>(used);
  if (std::find(txn.carried.begin(), txn.carried.end(), ino) != txn.carried.end()) return;
  txn.used_bytes_delta += used - static_cast<int64_t>(f.engine_used);
  txn.carried.push_back(ino);
}

FsStatus FileSystemImpl::EncodeCarried(Txn& txn) {
  std::optional<SegmentBuilder> builder;
  struct Placed {
    Ino ino;
    uint64_t index;
    ChunkExtent extent;
    const DirtyChunk* overlay;  // the chunk, when its blocks are what was placed
  };
  // A pieces value and the live bytes its extents hold.
  auto put_pieces = [&](Ino ino, uint64_t index, const PieceList& pieces) {
    txn.batch.Put(data_, ChunkKey(ino, index), EncodePiecesChunk(pieces));
    for (const ChunkExtent& e : DistinctExtents(pieces)) {
      txn.segment_live[e.segment] += e.stored_len;
    }
  };
  std::vector<Placed> placed;
  for (Ino ino : txn.carried) {
    locks_.AssertHeld(ino);
    DirtyFile* f = FindDirty(ino);
    if (f == nullptr) continue;
    // The size the committed record gets: the batch holds it already.
    const uint64_t size = f->inode.size;
    for (auto& [index, chunk] : f->chunks) {
      // Committed inline by an earlier fsync and unchanged: already stored.
      if (txn.inline_data && chunk.committed_inline() && !chunk.uploaded) continue;
      for (const ChunkExtent& e : chunk.stored_extents) {
        txn.segment_live[e.segment] -= e.stored_len;
      }
      if (chunk.overlay()) {
        chunk_puts_++;
        if (chunk.uploaded || chunk.blocks == 0) {
          put_pieces(ino, index, OverlayPieces(chunk, chunk.extent));
          continue;
        }
        if (!builder) {
          size_t expected = 0;
          for (Ino carried : txn.carried) expected += AwaitingUploadBytes(carried, true);
          builder.emplace(engine_.data_objects().NewId(), compression_, expected);
        }
        placed.push_back({ino, index, builder->Add(ino, index, chunk.data), &chunk});
        continue;
      }
      if (chunk.uploaded) {
        txn.batch.Put(data_, ChunkKey(ino, index), EncodeExtentChunk(chunk.extent));
        txn.segment_live[chunk.extent.segment] += chunk.extent.stored_len;
        chunk_puts_++;
        continue;
      }
      const size_t len = PlainLength(chunk.data);
      if (len == 0) {
        if (chunk.stored_len > 0 || !chunk.stored_extents.empty()) {
          txn.batch.Delete(data_, ChunkKey(ino, index));
          chunk_deletes_++;
        }
        continue;
      }
      std::string_view bytes(chunk.data.data(), len);
      if (BelongsInSegment(size, index) && !txn.inline_data) {
        if (!builder) {
          // Everything not uploaded goes in, chunks an unfinished pass holds too.
          size_t expected = 0;
          for (Ino carried : txn.carried) expected += AwaitingUploadBytes(carried, true);
          builder.emplace(engine_.data_objects().NewId(), compression_, expected);
        }
        placed.push_back({ino, index, builder->Add(ino, index, bytes), nullptr});
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
    if (p.overlay != nullptr) {
      put_pieces(p.ino, p.index, OverlayPieces(*p.overlay, p.extent));
      continue;
    }
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
      const bool keep_inline = forget == &txn.carried && txn.inline_data;
      for (Ino ino : *forget) {
        auto it = dirty_.find(ino);
        if (it == dirty_.end()) continue;
        DirtyFile& f = *it->second;
        dirty_used_ -= static_cast<int64_t>(f.inode.used) - static_cast<int64_t>(f.engine_used);
        if (keep_inline && KeepCommittedInline(f, CommittedRecord(txn, ino), &done)) continue;
        dirty_memory_ -= static_cast<int64_t>(f.memory);
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

bool FileSystemImpl::KeepCommittedInline(DirtyFile& f, const InodeRecord& committed_record,
                                         std::vector<std::unique_ptr<DirtyFile>>* done) {
  // The committed chunks leave for `done`; the ones the batch stored
  // inline but that belong in a segment stay, as bytes the engine holds.
  auto committed = std::make_unique<DirtyFile>();
  for (auto it = f.chunks.begin(); it != f.chunks.end();) {
    DirtyChunk& c = it->second;
    const size_t len = c.overlay() ? 0 : PlainLength(c.data);
    if (c.uploaded || len == 0 || !BelongsInSegment(f.inode.size, it->first)) {
      AddMemory(f, -static_cast<int64_t>(c.data.size()));
      committed->chunks.insert(f.chunks.extract(it++));
      continue;
    }
    c.inline_version = c.version;
    c.stored_len = len;
    c.stored_extents.clear();
    ++it;
  }
  done->push_back(std::move(committed));
  if (f.chunks.empty()) {
    // Nothing stayed: forget the file like any committed one.
    return false;
  }
  // What stayed is what the engine holds, the record (with its exact
  // `used`) included.
  f.inode = committed_record;
  f.engine_used = committed_record.used;
  f.stored_chunk_limit = std::max(f.stored_chunk_limit, ChunkCount(f.inode.size));
  return true;
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

void FileSystemImpl::FetchOverlayBases(const std::vector<DirtyChunk*>& chunks) {
  std::vector<ChunkExtent> extents;
  for (const DirtyChunk* c : chunks) {
    if (!c->overlay()) continue;
    for (const ChunkExtent& e : DistinctExtents(c->base)) {
      if (std::find(extents.begin(), extents.end(), e) == extents.end()) extents.push_back(e);
    }
  }
  if (extents.size() < 2) return;  // the caller's own read is as quick
  Mutex mu;
  CondVar done(&mu);
  size_t pending = 0;
  for (const ChunkExtent& e : extents) {
    FsResult<uint64_t> size = SegmentSize(e.segment);
    if (!size.ok()) continue;
    {
      MutexLock g(&mu);
      ++pending;
    }
    const bool queued = prefetch_pool_->TrySubmit([&, e, total = *size] {
      Status s = engine_.data_objects().Prefetch(e.segment, total, e.offset, e.stored_len);
      if (!s.ok()) spdlog::debug("fs: fetch of segment {:016x}: {}", e.segment, s.ToString());
      MutexLock g(&mu);
      if (--pending == 0) done.SignalAll();
    });
    if (!queued) {
      MutexLock g(&mu);
      --pending;
    }
  }
  MutexLock g(&mu);
  while (pending > 0) done.Wait();
}

FsResult<bool> FileSystemImpl::CommitInline(Ino ino) {
  InodeLocks lock(locks_, {ino});
  DirtyFile* f = FindDirty(ino);
  if (f == nullptr) return true;  // nothing buffered: the sync is all
  std::vector<DirtyChunk*> for_segment;
  bool changed = false;  // since the engine got the file: writes change chunks
  for (auto& [index, c] : f->chunks) {
    if (c.uploading) return false;  // the usual flush waits for it
    if (c.committed_inline()) continue;
    changed = true;
    if (c.uploaded || !BelongsInSegment(f->inode.size, index)) continue;
    if (c.overlay() && c.blocks == 0) continue;  // commits as its stored value
    if (for_segment.size() == kMaxInlineChunks) return false;
    for_segment.push_back(&c);
  }
  if (!changed) {
    // Reads change the buffered record alone (atime): commit it then too.
    FsResult<InodeRecord> stored = LoadStoredInode(ino);
    if (!stored.ok()) return stored.status();
    if (EncodeInode(*stored) == EncodeInode(f->inode)) return true;
  }
  // An overlay's blocks need the stored bytes around them to make a chunk:
  // read together, a few chunks the cache lacks cost one round of reads.
  FetchOverlayBases(for_segment);
  for (DirtyChunk* c : for_segment) {
    if (!c->overlay()) continue;
    FsStatus s = MaterializeOverlay(*f, *c);
    if (!s.ok()) return s;
  }
  Txn txn;
  txn.inline_data = true;
  InodeRecord r = f->inode;
  PutInode(txn, ino, r);
  FsStatus s = Commit(txn);
  if (!s.ok()) return s;
  return true;
}

FsStatus FileSystemImpl::SettleUploads(Ino ino, bool upload_first) {
  uint64_t failures_seen;
  {
    MutexLock g(&dirty_mu_);
    failures_seen = upload_failures_;
  }
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
    if (upload_failures_ != failures_seen) {
      return FsError{engine_.fenced() ? EROFS : background_error_};
    }
    memory_cv_.WaitFor(std::chrono::milliseconds(20));
  }
}

size_t FileSystemImpl::AwaitingUploadBytes(Ino ino, bool with_in_flight) {
  locks_.AssertHeld(ino);
  DirtyFile* f = FindDirty(ino);
  if (f == nullptr) return 0;
  size_t bytes = 0;
  for (const auto& [index, c] : f->chunks) {
    const bool in_flight = with_in_flight && c.uploading && !c.uploaded;
    if (in_flight || AwaitsUpload(*f, index, c)) bytes += c.data.size();
  }
  return bytes;
}

FsStatus FileSystemImpl::FlushFileLocking(Ino ino) {
  for (int pass = 0;; ++pass) {
    // The first pass only waits: callers have just uploaded.
    FsStatus settled = SettleUploads(ino, /*upload_first=*/pass > 0);
    if (!settled.ok()) return settled;
    InodeLocks lock(locks_, {ino});
    if (pass < kMaxFlushUploadPasses && AwaitingUploadBytes(ino) > kCommitUploadBytes) continue;
    return FlushFile(ino);
  }
}

FsStatus FileSystemImpl::FlushAll() {
  // Full chunks first go to segments, packed across files, so the commits
  // below write extents rather than upload one small segment per file.
  FsStatus uploaded = UploadEligible(/*all=*/true);
  // Each file's flush would upload its share of the same chunks again and
  // fail the same way, each after the store's retry deadline.
  if (!uploaded.ok()) return uploaded;
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
