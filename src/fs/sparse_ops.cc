// Sparse files: punching holes and mapping data against holes. Both work on
// whole chunks where they can, since a chunk that is not stored is a hole
// (docs/FORMAT.md).
#include <algorithm>

#include <spdlog/spdlog.h>

#include "fs/filesystem_impl.h"
#include "fs/permissions.h"

namespace pail::fs {

namespace {
// Above this many chunks one range tombstone replaces point deletes.
constexpr uint64_t kPointDeleteChunkLimit = 16;

// The end of [offset, offset + length) clipped to a file of `size` bytes,
// without overflowing.
uint64_t RangeEnd(uint64_t offset, uint64_t length, uint64_t size) {
  if (offset >= size) return offset;
  return offset + std::min(length, size - offset);
}

bool ChunkHasData(const DirtyChunk& c) {
  // An overlay may hold zeros only in its blocks, not in what lies under.
  return c.overlay() || c.uploaded || std::any_of(c.data.begin(), c.data.end(), [](char ch) { return ch != 0; });
}
}  // namespace

FsResult<int64_t> FileSystemImpl::ZeroStoredChunk(Ino ino, const ReservedChunks& reserved,
                                                  uint64_t index, uint64_t from, uint64_t to,
                                                  Txn& txn) {
  FsResult<std::optional<std::string>> value = GetChunkValue(ino, index);
  if (!value.ok()) return value.status();
  if (!value->has_value()) return int64_t{0};
  StoredChunk stored;
  if (!DecodeChunk(**value, &stored)) {
    spdlog::error("fs: chunk {} of inode {} has a damaged value", index, ino);
    return FsError{EIO};
  }
  if (stored.plain_len() <= from) return int64_t{0};
  std::string chunk;
  FsStatus loaded = LoadChunkBytes(stored, &chunk);
  if (!loaded.ok()) return loaded;
  size_t old_size = chunk.size();
  std::fill(chunk.begin() + from, chunk.begin() + std::min<uint64_t>(to, chunk.size()), '\0');
  const size_t len = PlainLength(chunk);
  ForgetStoredValue(txn, stored);
  // What is left of a chunk cut in part stays inline: at most two such
  // chunks per operation, not worth a segment.
  if (len == 0) {
    txn.batch.Delete(data_, ChunkKey(ino, index));
    chunk_deletes_++;
  } else {
    txn.batch.Put(data_, ChunkKey(ino, index), EncodeInlineChunk(std::string_view(chunk.data(), len)));
    chunk_puts_++;
  }
  if (reserved.Contains(index)) return int64_t{0};  // charged whole while reserved
  return static_cast<int64_t>(old_size - len);
}

FsResult<int64_t> FileSystemImpl::DeleteStoredChunks(Ino ino, uint64_t first, uint64_t end,
                                                     const ReservedChunks& reserved, Txn& txn) {
  if (first >= end) return int64_t{0};
  RangeIterator it(db_, data_, ChunkKey(ino, first), ChunkKey(ino, end));
  int64_t freed = 0;
  uint64_t found = 0;
  for (; it->Valid(); it->Next()) {
    StoredChunk c;
    if (DecodeChunk(it->value().ToStringView(), &c)) {
      if (!reserved.Contains(ChunkKeyIndex(it->key().ToStringView()))) {
        freed += static_cast<int64_t>(c.plain_len());
      }
      ForgetStoredValue(txn, c);
    }
    if (++found <= kPointDeleteChunkLimit) txn.batch.Delete(data_, it->key());
  }
  if (!it->status().ok()) return EngineError(it->status());
  if (found > kPointDeleteChunkLimit) {
    // Only file data is deleted by range: the metadata column family's
    // memtable insert hints must never see one (engine.h).
    txn.batch.DeleteRange(data_, ChunkKey(ino, first), ChunkKey(ino, end));
  }
  chunk_deletes_ += found;
  return freed;
}

FsResult<uint64_t> FileSystemImpl::StoredChunkBytes(Ino ino, ChunkRun run) {
  RangeIterator it(db_, data_, ChunkKey(ino, run.first), ChunkKey(ino, run.end));
  uint64_t bytes = 0;
  for (; it->Valid(); it->Next()) {
    StoredChunk c;
    if (!DecodeChunk(it->value().ToStringView(), &c)) {
      spdlog::error("fs: a chunk of inode {} has a damaged value", ino);
      return FsError{EIO};
    }
    bytes += c.plain_len();
  }
  if (!it->status().ok()) return EngineError(it->status());
  return bytes;
}

FsStatus FileSystemImpl::ZeroStoredRange(Ino ino, InodeRecord& r, uint64_t offset, uint64_t end,
                                         bool release, Txn& txn) {
  end = std::min(end, r.size);  // nothing is stored past the end
  if (offset >= end) return {};
  int64_t freed = 0;
  // A chunk is deleted whole when the range covers it up to its end or up
  // to the end of the file.
  auto covers_tail = [&](uint64_t index) {
    return end >= std::min(r.size, (index + 1) * kChunkSize);
  };
  uint64_t first = offset / kChunkSize;
  uint64_t last = (end - 1) / kChunkSize;
  uint64_t whole_first = first;
  uint64_t whole_end = last + 1;
  if (offset % kChunkSize != 0 || !covers_tail(first)) {
    uint64_t from = offset - first * kChunkSize;
    uint64_t to = std::min(end - first * kChunkSize, kChunkSize);
    FsResult<int64_t> f = ZeroStoredChunk(ino, r.reserved, first, from, to, txn);
    if (!f.ok()) return f.status();
    freed += *f;
    whole_first = first + 1;
  }
  if (last > first && !covers_tail(last)) {
    FsResult<int64_t> f = ZeroStoredChunk(ino, r.reserved, last, 0, end - last * kChunkSize, txn);
    if (!f.ok()) return f.status();
    freed += *f;
    whole_end = last;
  }
  FsResult<int64_t> f = DeleteStoredChunks(ino, whole_first, whole_end, r.reserved, txn);
  if (!f.ok()) return f.status();
  freed += *f;
  if (release) {
    freed += static_cast<int64_t>(r.reserved.Remove({whole_first, whole_end}) * kChunkSize);
  }
  r.used -= static_cast<uint64_t>(std::min<int64_t>(freed, static_cast<int64_t>(r.used)));
  txn.used_bytes_delta -= freed;
  return {};
}

FsResult<Attr> FileSystemImpl::PunchHole(const Credentials& cred, Ino ino, uint64_t offset,
                                         uint64_t length) {
  return ZeroRange(cred, ino, offset, length, /*release=*/true);
}

FsResult<Attr> FileSystemImpl::ZeroRange(const Credentials& cred, Ino ino, uint64_t offset,
                                         uint64_t length, bool release) {
  if (engine_.fenced()) return FsError{EROFS};
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> loaded = LoadInode(ino);
  if (!loaded.ok()) return loaded.status();
  if (loaded->is_dir()) return FsError{EISDIR};
  if (!loaded->is_reg()) return FsError{EINVAL};
  if (cred.uid != loaded->uid && !MayAccess(cred, *loaded, kMayWrite)) return FsError{EACCES};
  uint64_t end = RangeEnd(offset, length, loaded->size);
  if (offset >= end) return ToAttr(ino, *loaded);
  // Work on the engine's state only: unflushed data goes in first.
  FsStatus flushed = FlushFile(ino);
  if (!flushed.ok()) return flushed;
  FsResult<InodeRecord> stored = LoadStoredInode(ino);
  if (!stored.ok()) return stored.status();
  InodeRecord r = *stored;
  Txn txn;
  FsStatus zeroed = ZeroStoredRange(ino, r, offset, end, release, txn);
  if (!zeroed.ok()) return zeroed;
  r.mtime = r.ctime = NowTimespec();
  PutInode(txn, ino, r);
  FsStatus c = Commit(txn);
  if (!c.ok()) return c;
  return ToAttr(ino, r);
}

FsResult<std::vector<Extent>> FileSystemImpl::MapExtents(const Credentials& cred, Ino ino,
                                                         uint64_t offset, uint64_t length,
                                                         size_t max_extents) {
  InodeLocks lock(locks_, {ino});
  FsResult<InodeRecord> r = LoadInode(ino);
  if (!r.ok()) return r.status();
  if (r->is_dir()) return FsError{EISDIR};
  if (!r->is_reg()) return FsError{EINVAL};
  if (cred.uid != r->uid && !MayAccess(cred, *r, kMayRead)) return FsError{EACCES};
  std::vector<Extent> extents;
  uint64_t end = RangeEnd(offset, length, r->size);
  if (offset >= end || max_extents == 0) return extents;
  uint64_t first = offset / kChunkSize;
  uint64_t last = (end - 1) / kChunkSize;

  // Chunks with data, in order: the buffer's chunks override the engine's,
  // and the engine holds nothing at or past a dirty file's stored limit.
  DirtyFile* f = FindDirty(ino);
  uint64_t stored_end = last + 1;
  if (f != nullptr) stored_end = std::min(stored_end, f->stored_chunk_limit);
  std::map<uint64_t, DirtyChunk>::const_iterator dirty, dirty_end;
  if (f != nullptr) {
    dirty = f->chunks.lower_bound(first);
    dirty_end = f->chunks.upper_bound(last);
  }
  RangeIterator it(db_, data_, ChunkKey(ino, first), ChunkKey(ino, stored_end));

  uint64_t pos = offset;  // everything before is in `extents`
  auto add = [&](uint64_t from, uint64_t to, bool data) {
    if (to <= from) return;
    if (!extents.empty() && extents.back().data == data &&
        extents.back().offset + extents.back().length == from) {
      extents.back().length += to - from;
    } else {
      extents.push_back(Extent{from, to - from, data});
    }
    pos = to;
  };
  // One more than asked: the last is dropped unless the map ends there, so
  // a returned run is never cut short by the bound.
  while (pos < end && extents.size() <= max_extents) {
    bool stored_valid = stored_end > first && it->Valid();
    uint64_t stored_index = stored_valid ? ChunkKeyIndex(it->key().ToStringView()) : UINT64_MAX;
    // Skip the dirty chunks that are all zeros and the stored chunks the
    // buffer overrides.
    while (f != nullptr && dirty != dirty_end && !ChunkHasData(dirty->second)) {
      if (dirty->first == stored_index) {
        it->Next();
        stored_valid = it->Valid();
        stored_index = stored_valid ? ChunkKeyIndex(it->key().ToStringView()) : UINT64_MAX;
      }
      ++dirty;
    }
    uint64_t dirty_index = (f != nullptr && dirty != dirty_end) ? dirty->first : UINT64_MAX;
    uint64_t index = std::min(stored_index, dirty_index);
    if (index == UINT64_MAX || index > last) {
      add(pos, end, false);
      break;
    }
    if (index == stored_index) it->Next();
    if (index == dirty_index) ++dirty;
    if (index == stored_index && index != dirty_index && f != nullptr && f->chunks.count(index)) {
      continue;  // overridden by an all-zero buffered chunk
    }
    uint64_t from = std::max(offset, index * kChunkSize);
    uint64_t to = std::min(end, (index + 1) * kChunkSize);
    add(pos, from, false);
    add(from, to, true);
  }
  if (!it->status().ok()) return EngineError(it->status());
  if (extents.size() > max_extents) extents.resize(max_extents);
  return extents;
}

}  // namespace pail::fs
