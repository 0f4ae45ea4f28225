// File data: open handles, read, write and fsync.
#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
constexpr int64_t kRelatimeWindowSeconds = 24 * 3600;
// Writes are applied in pieces of at most this many bytes, and one read
// returns at most kMaxReadBytes (a short read), so no request can make the
// layer allocate without bound.
constexpr size_t kWritePieceBytes = 4u << 20;
constexpr uint32_t kMaxReadBytes = 128u << 20;

// relatime: update atime only when it is not newer than mtime/ctime, or a
// day old, so reads of a file rarely write.
bool AtimeNeedsUpdate(const InodeRecord& r, const struct timespec& now) {
  auto before_or_equal = [](const struct timespec& a, const struct timespec& b) {
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec);
  };
  return before_or_equal(r.atime, r.mtime) || before_or_equal(r.atime, r.ctime) ||
         now.tv_sec - r.atime.tv_sec >= kRelatimeWindowSeconds;
}

// Zeroes the bytes of buffer[0, n) outside the `filled` ranges (start,
// length), which may come in any order and overlap.
void ZeroGaps(char* buffer, uint64_t n, std::vector<std::pair<uint64_t, uint64_t>>* filled) {
  std::sort(filled->begin(), filled->end());
  uint64_t at = 0;
  for (const auto& [start, length] : *filled) {
    if (start > at) std::memset(buffer + at, 0, start - at);
    at = std::max(at, start + length);
  }
  if (at < n) std::memset(buffer + at, 0, n - at);
}

int AccessMaskForFlags(int flags) {
  switch (flags & O_ACCMODE) {
    case O_RDONLY: return kMayRead;
    case O_WRONLY: return kMayWrite;
    case O_RDWR: return kMayRead | kMayWrite;
    default: return -1;
  }
}
}  // namespace

FsResult<uint64_t> FileSystemImpl::Open(const Credentials& cred, Ino ino, int flags) {
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  int mask = AccessMaskForFlags(flags);
  if (mask < 0) return FsError{EINVAL};
  if (S_ISLNK(r->mode)) return FsError{ELOOP};
  if (r->is_dir() && ((mask & kMayWrite) || (flags & O_TRUNC))) return FsError{EISDIR};
  if (flags & O_TRUNC) mask |= kMayWrite;
  if (!MayAccess(cred, *r, mask)) return FsError{EACCES};
  if ((flags & O_TRUNC) && r->is_reg()) {
    Txn txn;
    InodeRecord rec = *r;
    FsStatus t = TruncateLocked(cred, ino, rec, 0, txn);
    if (!t.ok()) return t;
    rec.mtime = rec.ctime = NowTimespec();
    if (!cred.is_root()) rec.mode &= ~PrivilegeBitsToClear(rec);
    FsResult<bool> dropped = DropCapabilities(ino, txn);
    if (!dropped.ok()) return dropped.status();
    PutInode(txn, ino, rec);
    FsStatus c = Commit(txn);
    if (!c.ok()) return c;
  }
  MutexLock g(&handles_mu_);
  uint64_t handle = next_handle_++;
  handles_[handle] = OpenHandle{ino, flags};
  open_counts_[ino]++;
  return handle;
}

FsStatus FileSystemImpl::Release(uint64_t handle) {
  Ino ino;
  {
    MutexLock g(&handles_mu_);
    auto it = handles_.find(handle);
    if (it == handles_.end()) return FsError{EBADF};
    ino = it->second.ino;
  }
  InodeLocks lock(locks_, {ino});
  {
    MutexLock g(&handles_mu_);
    if (handles_.erase(handle) == 0) return FsError{EBADF};  // a racing Release won
    auto it = open_counts_.find(ino);
    if (it != open_counts_.end() && --it->second == 0) open_counts_.erase(it);
  }
  if (OpenCount(ino) > 0) return {};
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.error() == ESTALE ? FsStatus() : r.status();
  if (r->nlink > 0) return {};
  // Last close of an unlinked file: now it really goes.
  Txn txn;
  DeleteInode(txn, ino, *r, /*has_orphan_mark=*/true);
  return Commit(txn);
}

FsResult<ReadResult> FileSystemImpl::ReadLocked(Ino ino, const InodeRecord& r, uint64_t offset,
                                                uint32_t length,
                                                std::vector<ExtentRead>* extents) {
  ReadResult result;
  if (offset >= r.size || length == 0) {
    result.eof = offset >= r.size;
    return result;
  }
  uint64_t n = std::min<uint64_t>(length, r.size - offset);
  uint64_t end = offset + n;
  result.data = ByteBuffer(n);
  // The parts of result.data that bytes are copied into now or by
  // `extents` later, as (start, length); the rest is holes, zeroed at the end.
  std::vector<std::pair<uint64_t, uint64_t>> filled;
  const size_t extents_before = extents->size();
  DirtyFile* f = FindDirty(ino);
  uint64_t first = offset / kChunkSize;
  uint64_t last = (end - 1) / kChunkSize;
  // One MultiGet for every chunk the buffer does not have.
  std::vector<uint64_t> wanted;
  for (uint64_t index = first; index <= last; ++index) {
    bool buffered = f != nullptr && f->chunks.count(index) != 0;
    bool may_be_stored = f == nullptr || index < f->stored_chunk_limit;
    if (!buffered && may_be_stored) wanted.push_back(index);
  }
  std::vector<std::string> keys;
  std::vector<rocksdb::Slice> key_slices;
  keys.reserve(wanted.size());
  for (uint64_t index : wanted) keys.push_back(ChunkKey(ino, index));
  for (const std::string& k : keys) key_slices.emplace_back(k);
  std::vector<rocksdb::PinnableSlice> values(wanted.size());
  std::vector<rocksdb::Status> statuses(wanted.size());
  if (!wanted.empty()) {
    db_->MultiGet(rocksdb::ReadOptions(), data_, wanted.size(), key_slices.data(), values.data(),
                  statuses.data(), /*sorted_input=*/true);
  }
  size_t next_wanted = 0;
  for (uint64_t index = first; index <= last; ++index) {
    uint64_t chunk_start = index * kChunkSize;
    uint64_t from = std::max(offset, chunk_start);
    uint64_t to = std::min(end, chunk_start + kChunkSize);
    uint64_t in_chunk = from - chunk_start;
    char* dst = result.data.data() + (from - offset);
    std::string_view source;
    std::optional<ChunkExtent> extent;
    // Pieces (a stored pieces value or an overlay chunk): each one read from
    // its extent, or from `memory` for an overlay's blocks not uploaded.
    PieceList pieces;
    std::string_view memory;
    if (next_wanted < wanted.size() && wanted[next_wanted] == index) {
      const rocksdb::Status& st = statuses[next_wanted];
      if (st.ok()) {
        StoredChunk c;
        if (!DecodeChunk(values[next_wanted].ToStringView(), &c)) {
          spdlog::error("fs: chunk {} of inode {} has a damaged value", index, ino);
          return FsError{EIO};
        }
        if (c.is_extent) {
          extent = c.extent;
        } else if (c.is_pieces) {
          pieces = std::move(c.pieces);
        } else {
          source = c.inline_bytes;
        }
      } else if (!st.IsNotFound()) {
        return EngineError(st);
      }
      next_wanted++;
    } else if (f != nullptr) {
      auto it = f->chunks.find(index);
      if (it != f->chunks.end()) {
        const DirtyChunk& dc = it->second;
        if (dc.overlay()) {
          ChunkExtent blocks = dc.extent;
          if (!dc.uploaded) {
            blocks.segment = UINT64_MAX;  // marks the blocks in `memory`
            memory = dc.data;
          }
          pieces = OverlayPieces(dc, blocks);
        } else if (dc.uploaded) {
          extent = dc.extent;
        } else {
          source = dc.data;
        }
      }
    }
    for (const ChunkPiece& p : pieces) {
      const uint64_t lo = std::max<uint64_t>(p.start, in_chunk);
      const uint64_t hi = std::min<uint64_t>(p.end(), to - chunk_start);
      if (lo >= hi) continue;
      const uint64_t at_extent = p.from + (lo - p.start);
      const uint64_t at_out = chunk_start + lo - offset;
      if (!memory.empty() && p.extent.segment == UINT64_MAX) {
        std::memcpy(result.data.data() + at_out, memory.data() + at_extent, hi - lo);
        filled.emplace_back(at_out, hi - lo);
      } else {
        extents->push_back(ExtentRead{p.extent, at_extent, hi - lo, at_out});
      }
    }
    if (extent) {
      if (extent->plain_len > in_chunk) {
        uint64_t have = std::min<uint64_t>(to - from, extent->plain_len - in_chunk);
        extents->push_back(ExtentRead{*extent, in_chunk, have, from - offset});
      }
    } else if (source.size() > in_chunk) {
      uint64_t have = std::min<uint64_t>(to - from, source.size() - in_chunk);
      std::memcpy(dst, source.data() + in_chunk, have);
      filled.emplace_back(from - offset, have);
    }
  }
  for (size_t i = extents_before; i < extents->size(); ++i) {
    filled.emplace_back((*extents)[i].dst, (*extents)[i].length);
  }
  ZeroGaps(result.data.data(), n, &filled);
  result.eof = end >= r.size;
  return result;
}

FsResult<ReadResult> FileSystemImpl::Read(const Credentials& cred, Ino ino, uint64_t offset,
                                          uint32_t length, uint64_t handle) {
  return ReadData(cred, ino, offset, length, handle, /*may_wait=*/true);
}

FsResult<ReadResult> FileSystemImpl::TryRead(const Credentials& cred, Ino ino, uint64_t offset,
                                             uint32_t length, uint64_t handle) {
  return ReadData(cred, ino, offset, length, handle, /*may_wait=*/false);
}

FsResult<ReadResult> FileSystemImpl::ReadData(const Credentials& cred, Ino ino, uint64_t offset,
                                              uint32_t length, uint64_t handle, bool may_wait) {
  if (handle != 0) {
    MutexLock g(&handles_mu_);
    auto it = handles_.find(handle);
    if (it == handles_.end() || it->second.ino != ino) return FsError{EBADF};
    if ((it->second.flags & O_ACCMODE) == O_WRONLY) return FsError{EBADF};
  }
  std::vector<ExtentRead> extents;
  uint64_t size = 0;
  ReadResult result;
  // The segments the extents read from, held from when the extents are
  // taken (under the file's lock) until they are read: the collector may
  // move the values to new segments meanwhile, and must not delete these
  // (with dead_segment_grace as the only guard, a read slower than the
  // grace failed; tests run with none).
  struct Hold {
    FileSystemImpl* fs;
    std::vector<uint64_t> segments;
    ~Hold() {
      for (uint64_t id : segments) fs->AddPending(id, -1, /*mark_released=*/false);
    }
  } hold{this, {}};
  {
    InodeLocks lock(locks_, ino, /*wait=*/may_wait);
    if (!lock.held()) return FsError{EWOULDBLOCK};
    FsResult<InodeRecord> r = LoadInode(ino);
    if (!r.ok()) return r.status();
    if (r->is_dir()) return FsError{EISDIR};
    if (!r->is_reg()) return FsError{EINVAL};
    if (handle == 0 && cred.uid != r->uid && !MayAccess(cred, *r, kMayRead)) {
      return FsError{EACCES};
    }
    size = r->size;
    FsResult<ReadResult> read =
        ReadLocked(ino, *r, offset, std::min(length, kMaxReadBytes), &extents);
    if (!read.ok()) return read;
    result = std::move(*read);
    for (const ExtentRead& e : extents) {
      if (std::find(hold.segments.begin(), hold.segments.end(), e.extent.segment) ==
          hold.segments.end()) {
        hold.segments.push_back(e.extent.segment);
        AddPending(e.extent.segment, 1);
      }
    }
    struct timespec now = NowTimespec();
    if (AtimeNeedsUpdate(*r, now)) {
      if (DirtyFile* f = FindDirty(ino)) {
        f->inode.atime = now;
      } else {
        Txn txn;
        InodeRecord rec = *r;
        rec.atime = now;
        PutInode(txn, ino, rec);
        // A failed atime update must not fail the read.
        (void)Commit(txn);
      }
    }
  }
  // Segment reads run without the inode lock, so readers of one file (and
  // its writers) do not wait for each other's requests.
  // Without `may_wait`, only what the local cache holds: a refused read
  // may have moved atime, as the read it is retried as does anyway.
  if (!extents.empty()) {
    BucketReadsRefused cache_only(!may_wait);
    FsStatus s = ReadExtents(extents, result.data.data());
    if (!s.ok()) return s;
  }
  if (!result.data.empty()) ReadAhead(ino, offset, offset + result.data.size(), size);
  return result;
}

FsResult<WriteResult> FileSystemImpl::Write(const Credentials& cred, Ino ino, uint64_t offset,
                                            std::string_view data, uint64_t handle) {
  return WriteData(cred, ino, offset, data, handle, /*may_wait=*/true);
}

FsResult<WriteResult> FileSystemImpl::TryWrite(const Credentials& cred, Ino ino,
                                               uint64_t offset, std::string_view data,
                                               uint64_t handle) {
  return WriteData(cred, ino, offset, data, handle, /*may_wait=*/false);
}

FsResult<WriteResult> FileSystemImpl::WriteData(const Credentials& cred, Ino ino,
                                                uint64_t offset, std::string_view data,
                                                uint64_t handle, bool may_wait) {
  bool append = false;
  if (handle != 0) {
    MutexLock g(&handles_mu_);
    auto it = handles_.find(handle);
    if (it == handles_.end() || it->second.ino != ino) return FsError{EBADF};
    if ((it->second.flags & O_ACCMODE) == O_RDONLY) return FsError{EBADF};
    append = (it->second.flags & O_APPEND) != 0;
  }
  if (!append && (offset > kMaxFileSize || data.size() > kMaxFileSize - offset)) {
    return FsError{EFBIG};
  }
  // Big writes go in pieces, no bigger than a file's share of the buffer,
  // so one request cannot hold more than a piece of unflushed data.
  const size_t piece_bytes =
      std::min(kWritePieceBytes, std::max<size_t>(kChunkSize, options_.write_back_file_bytes));
  // A refused later piece could not take back the earlier ones.
  if (!may_wait && data.size() > piece_bytes) return FsError{EWOULDBLOCK};
  WriteResult total;
  size_t done = 0;
  do {
    size_t n = std::min(piece_bytes, data.size() - done);
    FsResult<WriteResult> piece =
        WritePiece(cred, ino, append ? 0 : offset + done, data.substr(done, n), append,
                   handle != 0, may_wait);
    if (!piece.ok()) {
      if (done > 0) return total;  // a short write, as POSIX allows
      return piece;
    }
    total.written += piece->written;
    total.attr = piece->attr;
    done += n;
  } while (done < data.size());
  return total;
}

FsResult<WriteResult> FileSystemImpl::WritePiece(const Credentials& cred, Ino ino, uint64_t offset,
                                                 std::string_view data, bool append,
                                                 bool has_handle, bool may_wait) {
  // A fenced engine takes no more writes; buffering them would only grow
  // memory that can never be flushed.
  if (engine_.fenced()) return FsError{EROFS};
  // Memory is promised before anything is buffered, so the buffer stays
  // bounded even while flushes fail. The bound covers every chunk the piece
  // can touch (loaded whole, then grown), wherever an append lands.
  const int64_t bound =
      data.empty() ? 0 : static_cast<int64_t>((data.size() / kChunkSize + 2) * kChunkSize);
  FsStatus reserved = may_wait ? ReserveMemory(bound) : TryReserveMemory(bound);
  if (!reserved.ok()) return reserved;
  struct Release {
    FileSystemImpl* fs;
    int64_t bytes;
    ~Release() { fs->ReleaseMemory(bytes); }
  } release{this, bound};
  // An append's chunks are known only under the lock; it reads them there.
  // A write that may not wait reads nothing: it is refused (below) when it
  // would need a chunk's old bytes from a segment.
  std::vector<ChunkPrefetch> prefetched;
  if (!append && may_wait) prefetched = PrefetchChunks(ino, offset, data.size());
  WriteResult result;
  bool upload = false;
  {
    InodeLocks lock(locks_, ino, /*wait=*/may_wait);
    if (!lock.held()) return FsError{EWOULDBLOCK};
    // Segment bytes the cache lacks fail the loading of the touched
    // chunks, before anything a reader sees has changed.
    BucketReadsRefused cache_only(!may_wait);
    FsResult<InodeRecord> r = LoadInode(ino);
    if (!r.ok()) return r.status();
    if (r->is_dir()) return FsError{EISDIR};
    if (!r->is_reg()) return FsError{EINVAL};
    if (!has_handle && cred.uid != r->uid && !MayAccess(cred, *r, kMayWrite)) {
      return FsError{EACCES};
    }
    if (append) offset = r->size;
    if (offset > kMaxFileSize || data.size() > kMaxFileSize - offset) return FsError{EFBIG};
    if (data.empty()) {
      result.attr = ToAttr(ino, *r);
      return result;
    }
    DirtyFile* existing = FindDirty(ino);
    DirtyFile& f = existing != nullptr ? *existing : GetOrCreateDirty(ino, *r);
    if (!f.capabilities_absent) {
      Txn txn;
      FsResult<bool> had = DropCapabilities(ino, txn);
      if (!had.ok()) return had.status();
      if (*had) {
        FsStatus c = Commit(txn);
        if (!c.ok()) return c;
      }
      f.capabilities_absent = true;
    }
    uint64_t end = offset + data.size();
    uint64_t first = offset / kChunkSize;
    uint64_t last = (end - 1) / kChunkSize;
    // Load every touched chunk first, so the space check sees exact growth
    // and a failure leaves the file unchanged. A chunk overwritten whole is
    // not read: until the write lands, its bytes are still the engine's (or
    // its upload's). A failure drops the chunks made here without them,
    // which would otherwise read, and commit, as empty.
    std::vector<uint64_t> unread;  // chunks made here without their stored bytes
    struct DropUnread {
      DirtyFile& f;
      std::vector<uint64_t>& unread;
      ~DropUnread() {
        for (uint64_t index : unread) f.chunks.erase(index);
      }
    } drop_unread{f, unread};
    std::vector<DirtyChunk*> chunks;
    std::vector<uint64_t> copy_ends;  // per chunk: end of the bytes to copy
    std::vector<bool> as_blocks;      // per chunk: written as an overlay's blocks
    chunks.reserve(last - first + 1);
    copy_ends.reserve(last - first + 1);
    as_blocks.reserve(last - first + 1);
    int64_t growth = 0;
    for (uint64_t index = first; index <= last; ++index) {
      // A reserved chunk is charged whole already: writing it needs no room.
      const int64_t charged = f.inode.reserved.Contains(index) ? 0 : 1;
      uint64_t chunk_start = index * kChunkSize;
      uint64_t from = std::max(offset, chunk_start);
      uint64_t to = std::min(end, chunk_start + kChunkSize);
      // A chunk overwritten whole needs none of its old bytes: no read.
      const bool whole = from == chunk_start && to == chunk_start + kChunkSize;
      // Whole blocks of a stored full chunk: kept as an overlay, so neither
      // the old bytes are read nor the unchanged ones uploaded again.
      if (!whole && (from - chunk_start) % kPieceBlockBytes == 0 &&
          (to - chunk_start) % kPieceBlockBytes == 0 &&
          BelongsInSegment(std::max(f.inode.size, end), index)) {
        FsResult<DirtyChunk*> o = EnsureOverlay(ino, f, index, static_cast<uint32_t>(from - chunk_start),
                                                static_cast<uint32_t>(to - chunk_start));
        if (!o.ok()) return o.status();
        if (*o != nullptr) {
          chunks.push_back(*o);
          copy_ends.push_back(to);
          as_blocks.push_back(true);
          const uint64_t old_len = OverlayLength(**o);
          growth += charged * static_cast<int64_t>(std::max(old_len, to - chunk_start) - old_len);
          continue;
        }
      }
      const bool made_here = whole && f.chunks.count(index) == 0;
      FsResult<DirtyChunk*> c = EnsureChunk(ino, f, index, /*need_bytes=*/!whole, &prefetched);
      if (!c.ok()) return c.status();
      const bool left_unread = made_here && (*c)->stored_len > 0;
      if (left_unread) unread.push_back(index);
      chunks.push_back(*c);
      as_blocks.push_back(false);
      // Past the chunk's current bytes everything already reads as zero:
      // trailing zeros of the write need neither memory nor space. An
      // overlay overwritten whole is dropped (below): it counts as empty.
      const bool drop_overlay = (*c)->overlay();
      uint64_t have_end = chunk_start + (drop_overlay ? 0 : (*c)->data.size());
      // What the chunk is charged now: the bytes in memory, or for one
      // overwritten whole, those of its upload or of the engine.
      uint64_t charged_end = have_end;
      if ((*c)->uploaded && !drop_overlay) {
        charged_end = chunk_start + (*c)->extent.plain_len;
      } else if (left_unread) {
        charged_end = chunk_start + (*c)->stored_len;
      }
      uint64_t copy_end = std::min(to, have_end);
      for (uint64_t pos = to; pos > std::max(from, have_end); --pos) {
        if (data[pos - 1 - offset] != '\0') {
          copy_end = pos;
          break;
        }
      }
      copy_end = std::max(copy_end, from);
      copy_ends.push_back(copy_end);
      if (drop_overlay) {
        const uint64_t old_len = OverlayLength(**c);
        growth += charged * static_cast<int64_t>(std::max(old_len, copy_end - chunk_start) - old_len);
      } else if (copy_end > charged_end) {
        growth += charged * static_cast<int64_t>(copy_end - charged_end);
      }
    }
    if (!TryCharge(growth)) return FsError{ENOSPC};
    unread.clear();  // from here on the write lands
    for (uint64_t index = first; index <= last; ++index) {
      DirtyChunk& c = *chunks[index - first];
      // Any upload of the chunk's old bytes is stale now.
      c.version = NextChunkVersion();
      c.uploading = false;
      uint64_t chunk_start = index * kChunkSize;
      uint64_t from = std::max(offset, chunk_start);
      uint64_t to = copy_ends[index - first];
      if (as_blocks[index - first]) {
        // The chunk's blocks, old and new, back to back in block order.
        const uint8_t old_blocks = c.blocks;
        uint8_t added = 0;
        for (uint64_t k = (from - chunk_start) / kPieceBlockBytes;
             k < (to - chunk_start) / kPieceBlockBytes; ++k) {
          added |= static_cast<uint8_t>(1u << k);
        }
        const uint8_t blocks = old_blocks | added;
        std::string next;
        next.reserve(OverlayBytes(blocks));
        size_t old_at = 0;
        for (uint64_t k = 0; k < kChunkSize / kPieceBlockBytes; ++k) {
          if (added & (1u << k)) {
            next.append(data.data() + (chunk_start + k * kPieceBlockBytes - offset),
                        kPieceBlockBytes);
          } else if (old_blocks & (1u << k)) {
            next.append(c.data, old_at, kPieceBlockBytes);
          }
          if (old_blocks & (1u << k)) old_at += kPieceBlockBytes;
        }
        AddMemory(f, static_cast<int64_t>(next.size()) - static_cast<int64_t>(c.data.size()));
        c.data = std::move(next);
        c.blocks = blocks;
        continue;
      }
      if (c.uploaded) {  // overwritten whole: that upload is garbage now
        AddPending(c.extent.segment, -1);
        c.uploaded = false;
      }
      if (c.overlay()) {  // overwritten whole: nothing of it is left
        AddMemory(f, -static_cast<int64_t>(c.data.size()));
        std::string().swap(c.data);
        c.is_overlay = false;
        c.blocks = 0;
        c.base.clear();
      }
      if (to <= from) continue;
      uint64_t need = to - chunk_start;
      const uint64_t at = from - chunk_start;
      if (need > c.data.size()) {
        AddMemory(f, static_cast<int64_t>(need - c.data.size()));
        if (at <= c.data.size()) {
          // The write covers everything from `at` to past the old end:
          // appended, the new bytes are copied once, never zeroed first
          // (this runs under the file's lock).
          c.data.resize(at);
          c.data.append(data.data() + (from - offset), to - from);
          continue;
        }
        c.data.resize(need, '\0');
      }
      std::memcpy(c.data.data() + at, data.data() + (from - offset), to - from);
    }
    f.inode.used += static_cast<uint64_t>(growth);
    f.inode.size = std::max(f.inode.size, end);
    f.inode.mtime = f.inode.ctime = NowTimespec();
    if (!cred.is_root()) f.inode.mode &= ~PrivilegeBitsToClear(f.inode);
    result.written = static_cast<uint32_t>(data.size());
    result.attr = ToAttr(ino, f.inode);
    upload = f.memory >= options_.write_back_file_bytes;
  }
  // A file's share of the buffer is full: its full chunks go to a segment
  // in the background once a segment's worth waits.
  if (upload || dirty_memory_.load() >= static_cast<int64_t>(options_.segment_bytes)) {
    RequestUpload(/*all=*/false);
  }
  return result;
}

FsStatus FileSystemImpl::Fsync(const Credentials& cred, Ino ino) {
  FsResult<bool> inlined = CommitInline(ino);
  if (!inlined.ok()) return inlined.status();
  if (!*inlined) {
    FsStatus settled = SettleUploads(ino, /*upload_first=*/true);
    if (!settled.ok()) return settled;
    FsStatus s = FlushFileLocking(ino);
    if (!s.ok()) return s;
  }
  // Only as far as the file's last change: when an upload already carried
  // it, there is nothing to wait for.
  Status synced = engine_.SyncThrough(changes_->LastChange(ino));
  if (!synced.ok()) return EngineError(synced);
  return {};
}

}  // namespace pail::fs
