// Segments from the filesystem's side: uploading full chunks of big files
// (in the background and at commits), reading extents back with read-ahead,
// and the bookkeeping that keeps the collector away from segments still
// being filled in (docs/FORMAT.md, "Segments").
#include <algorithm>
#include <chrono>
#include <cstring>

#include <spdlog/spdlog.h>

#include "engine/data_objects.h"
#include "fs/filesystem_impl.h"
#include "util/blocking_hint.h"
#include "util/failpoint.h"

namespace pail::fs {

namespace {
// Files up to this size keep their data inline in the metadata: one small
// value costs less than a segment extent and its later collection.
constexpr uint64_t kInlineFileBytes = 64 * 1024;
// Extents of one segment closer than this are read with one request.
constexpr uint64_t kCoalesceGapBytes = 64 * 1024;
// One read of a segment is at most this long.
constexpr uint64_t kMaxRunBytes = 4ull << 20;
// How far ahead of a sequential reader segments are fetched, and in
// requests of what size.
constexpr uint64_t kReadAheadBytes = 16ull << 20;
constexpr uint64_t kReadAheadRequestBytes = 2ull << 20;
constexpr size_t kReadAheadFiles = 1024;
// An upload pass copies at most this much of a file's chunks per hold of
// the file's lock.
constexpr size_t kStageBatchBytes = 1u << 20;
// After a streaming pass found less than a segment's worth waiting, the
// uploader scans again no sooner than this (segment_bytes, 16 MiB by
// default, take far longer than this to write).
constexpr std::chrono::milliseconds kStreamingRescanDelay{10};

struct UploadMember {
  Ino ino;
  uint64_t index;
  uint64_t version;
  size_t staged;  // bytes copied into the segment
};
}  // namespace

// The uploads one pass submitted, for whoever waits for them.
struct UploadPass {
  Mutex mu;
  CondVar cv{&mu};
  int outstanding GUARDED_BY(mu) = 0;
  FsStatus first_error GUARDED_BY(mu);
  // A streaming pass that found less than a segment's worth waiting and
  // submitted nothing. Set before the pass is returned.
  bool short_of_segment = false;

  FsStatus Wait() {
    MutexLock g(&mu);
    while (outstanding > 0) cv.Wait();
    return first_error;
  }
  FsStatus ErrorSoFar() {
    MutexLock g(&mu);
    return first_error;
  }
};

bool FileSystemImpl::BelongsInSegment(uint64_t size, uint64_t index) {
  return size > kInlineFileBytes && index < size / kChunkSize;
}

FsStatus FileSystemImpl::PutSegment(SegmentBuilder& builder, Txn* txn, bool keep_in_memory) {
  const uint64_t id = builder.segment();
  std::string body = builder.Finish();
  const uint64_t body_size = body.size();
  // The body itself goes to the segment memory: data just written is read
  // back from there, with no copy made to keep it.
  Status s = engine_.data_objects().Put(id, std::move(body), keep_in_memory);
  if (s.ok()) s = Failpoint("data/after_upload");
  if (!s.ok()) return EngineError(s);
  segment_puts_++;
  segment_put_bytes_ += body_size;
  {
    MutexLock g(&segments_mu_);
    segments_[id].size = body_size;
  }
  const std::string usage = EncodeSegmentUsage({static_cast<int64_t>(body_size), 0});
  if (txn != nullptr) {
    txn->batch.Merge(meta_, SegmentKey(id), usage);
    return {};
  }
  rocksdb::WriteBatch batch;
  batch.Merge(meta_, SegmentKey(id), usage);
  Status w = Apply(&batch);
  if (!w.ok()) return EngineError(w);
  return {};
}

FsResult<uint64_t> FileSystemImpl::SegmentSize(uint64_t segment) {
  MutexLock g(&segments_mu_);
  auto it = segments_.find(segment);
  if (it == segments_.end() || it->second.size == 0) {
    spdlog::error("fs: a chunk points into segment {:016x}, which is not registered", segment);
    return FsError{EIO};
  }
  return it->second.size;
}

void FileSystemImpl::AddPending(uint64_t segment, int64_t n, bool mark_released) {
  MutexLock g(&segments_mu_);
  SegmentState& st = segments_[segment];
  st.pending += n;
  if (n < 0 && mark_released) st.released = ++release_count_;
}

Status FileSystemImpl::LoadSegments() {
  RangeIterator it(db_, meta_, KindPrefix(kKindSegment), KindPrefix(kKindSegment + 1));
  MutexLock g(&segments_mu_);
  for (; it->Valid(); it->Next()) {
    SegmentUsage u;
    if (it->key().size() != 9 || !DecodeSegmentUsage(it->value().ToStringView(), &u)) {
      return Status::Corruption("a segment usage record is damaged");
    }
    segments_[KeyIno(it->key().ToStringView())].size = static_cast<uint64_t>(u.total_bytes);
    segment_live_bytes_ += u.live_bytes;
  }
  return engine::FromRocks(it->status());
}

FsResult<std::optional<std::string>> FileSystemImpl::GetChunkValue(Ino ino, uint64_t index) {
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), data_, ChunkKey(ino, index), &value);
  if (rs.IsNotFound()) return std::optional<std::string>();
  if (!rs.ok()) return EngineError(rs);
  return std::optional<std::string>(std::move(value));
}

void FileSystemImpl::ForgetStoredValue(Txn& txn, const StoredChunk& old) {
  for (const ChunkExtent& e : DistinctExtents(ChunkPieces(old))) {
    txn.segment_live[e.segment] -= e.stored_len;
  }
}

FsStatus FileSystemImpl::LoadChunkBytes(const StoredChunk& chunk, std::string* out) {
  if (chunk.is_inline()) {
    out->assign(chunk.inline_bytes);
    return {};
  }
  if (chunk.is_pieces) return LoadPiecesBytes(chunk.pieces, out);
  return ReadExtentBytes(chunk.extent, out);
}

FsStatus FileSystemImpl::LoadPiecesBytes(const PieceList& pieces, std::string* out) {
  out->assign(pieces.empty() ? 0 : pieces.back().end(), '\0');
  std::vector<ExtentRead> reads;
  reads.reserve(pieces.size());
  for (const ChunkPiece& p : pieces) reads.push_back({p.extent, p.from, p.length, p.start});
  return ReadExtents(reads, out->data());
}

FsStatus FileSystemImpl::ReadExtentBytes(const ChunkExtent& extent, std::string* out) {
  out->assign(extent.plain_len, '\0');
  std::vector<ExtentRead> read{{extent, 0, extent.plain_len, 0}};
  return ReadExtents(read, out->data());
}

FsStatus FileSystemImpl::ReadExtents(std::vector<ExtentRead>& reads, char* out) {
  // The bytes of the segment a read needs: just the wanted slice of a
  // stored (uncompressed) extent, the whole extent of a compressed one.
  auto span = [](const ExtentRead& r) {
    if (r.extent.codec == ChunkCodec::kNone) {
      return std::pair<uint64_t, uint64_t>(r.extent.offset + r.from, r.extent.offset + r.from + r.length);
    }
    return std::pair<uint64_t, uint64_t>(r.extent.offset, r.extent.offset + r.extent.stored_len);
  };
  std::sort(reads.begin(), reads.end(), [&](const ExtentRead& a, const ExtentRead& b) {
    return a.extent.segment != b.extent.segment ? a.extent.segment < b.extent.segment
                                                : span(a).first < span(b).first;
  });
  ByteBuffer buffer;  // not zeroed: every byte is read into
  std::string plain;
  for (size_t i = 0; i < reads.size();) {
    const uint64_t segment = reads[i].extent.segment;
    auto [run_start, run_end] = span(reads[i]);
    size_t j = i + 1;
    while (j < reads.size() && reads[j].extent.segment == segment) {
      auto [s, e] = span(reads[j]);
      if (s > run_end + kCoalesceGapBytes || std::max(run_end, e) - run_start > kMaxRunBytes) break;
      run_end = std::max(run_end, e);
      ++j;
    }
    FsResult<uint64_t> size = SegmentSize(segment);
    if (!size.ok()) return size.status();
    // A run of stored extents back to back, in the segment and in `out`
    // (a sequential read of a sequentially written file), is read straight
    // into `out`, with no copy through `buffer`.
    bool direct = true;
    for (size_t k = i; k < j && direct; ++k) {
      direct = reads[k].extent.codec == ChunkCodec::kNone &&
               span(reads[k]).first - run_start == reads[k].dst - reads[i].dst &&
               (k == i || span(reads[k]).first == span(reads[k - 1]).second);
    }
    const size_t len = run_end - run_start;
    char* into = out + reads[i].dst;
    if (!direct) {
      if (buffer.size() < len) buffer = ByteBuffer(len);
      into = buffer.data();
    }
    Result<size_t> n = size_t{0};
    if (BucketReadsRefused::active()) {
      Result<std::optional<size_t>> cached =
          engine_.data_objects().ReadCached(segment, *size, run_start, len, into);
      if (!cached.ok()) return EngineError(cached.status());
      if (!cached->has_value()) return FsError{EWOULDBLOCK};
      n = **cached;
    } else {
      n = engine_.data_objects().Read(segment, *size, run_start, len, into);
    }
    if (!n.ok()) return EngineError(n.status());
    if (*n != len) {
      spdlog::error("fs: segment {:016x} is shorter than its extents", segment);
      return FsError{EIO};
    }
    if (direct) {
      i = j;
      continue;
    }
    for (size_t k = i; k < j; ++k) {
      const ExtentRead& r = reads[k];
      const char* stored = buffer.data() + (span(r).first - run_start);
      if (r.extent.codec == ChunkCodec::kNone) {
        std::memcpy(out + r.dst, stored, r.length);
        continue;
      }
      plain.resize(r.extent.plain_len);
      if (!DecompressChunk(r.extent.codec, std::string_view(stored, r.extent.stored_len),
                           r.extent.plain_len, plain.data())) {
        spdlog::error("fs: an extent of segment {:016x} at {} does not decompress", segment,
                      r.extent.offset);
        return FsError{EIO};
      }
      std::memcpy(out + r.dst, plain.data() + r.from, r.length);
    }
    i = j;
  }
  return {};
}

void FileSystemImpl::RequestUpload(bool all) {
  {
    MutexLock g(&upload_mu_);
    upload_requested_ = true;
    upload_all_ = upload_all_ || all;
  }
  upload_cv_.Signal();
}

void FileSystemImpl::UploadLoop() {
  // The loop does not wait for its uploads: it stages the next segment
  // while they run, held back only by the pool's bound on uploads in
  // flight. Waiting for each pass instead left the pool idle between
  // passes while writers waited for memory the next pass would free.
  std::shared_ptr<UploadPass> last;
  MutexLock g(&upload_mu_);
  while (!upload_stopping_) {
    while (!upload_requested_ && !upload_stopping_) upload_cv_.Wait();
    if (upload_stopping_) break;
    if (last != nullptr) {
      FsStatus s = last->ErrorSoFar();
      if (!s.ok()) {
        // Failed chunks stay in memory for the next pass; not at once.
        spdlog::warn("fs: uploading file data failed (errno {}); retrying", s.error());
        last.reset();
        upload_cv_.WaitFor(std::chrono::seconds(1));
        continue;
      }
    }
    const bool all = upload_all_;
    upload_requested_ = upload_all_ = false;
    upload_mu_.Unlock();
    last = StartUploads(all);
    upload_mu_.Lock();
    if (last->short_of_segment) {
      // That scan walked every buffered chunk and found less than a
      // segment's worth. While uploads are in flight the buffer stays full
      // and every write asks again, so scanning at once would walk the
      // chunks after each write, under the files' locks (a sixth of the
      // CPU of random 4 KiB writes). A flush's request is not delayed.
      const auto until = std::chrono::steady_clock::now() + kStreamingRescanDelay;
      while (!upload_all_ && !upload_stopping_ && upload_cv_.WaitUntil(until)) {
      }
    }
  }
}

FsStatus FileSystemImpl::UploadEligible(bool all) {
  std::shared_ptr<UploadPass> pass = StartUploads(all);
  BlockingHint::AboutToBlock();
  return pass->Wait();
}

std::shared_ptr<UploadPass> FileSystemImpl::StartUploads(bool all) {
  const size_t target = std::max<size_t>(
      4 * kChunkSize, std::min(options_.segment_bytes, options_.write_back_bytes / 4));
  auto pass = std::make_shared<UploadPass>();
  // Streaming: only when a whole segment's worth waits. Every write asks
  // while the buffer is full, and the buffer is mostly on its way to the
  // bucket then: walking every chunk to find that out took 8% of the
  // server's CPU in long runs of random 4 KiB writes. What is neither
  // staged nor uploaded bounds what a walk can find.
  if (!all && dirty_memory_.load() - staged_memory_.load() < static_cast<int64_t>(target)) {
    pass->short_of_segment = true;
    return pass;
  }
  std::vector<Ino> inos;
  {
    MutexLock g(&dirty_mu_);
    inos.reserve(dirty_.size());
    for (const auto& [ino, f] : dirty_) inos.push_back(ino);
  }
  std::sort(inos.begin(), inos.end());
  if (!all) {
    size_t eligible = 0;
    for (Ino ino : inos) {
      InodeLocks lock(locks_, {ino});
      DirtyFile* f = FindDirty(ino);
      if (f == nullptr) continue;
      for (auto it = f->chunks.begin(); it != f->chunks.end() && eligible < target; ++it) {
        if (AwaitsUpload(*f, it->first, it->second)) eligible += it->second.data.size();
      }
      if (eligible >= target) break;
    }
    if (eligible < target) {
      pass->short_of_segment = true;
      return pass;
    }
  }
  std::vector<UploadMember> members;
  // The chunks are staged straight into the segment's body (see
  // SegmentBuilder::Stage): one copy out of the buffer, made under the
  // file's lock, and none after it for incompressible bytes.
  std::optional<SegmentBuilder> builder;
  size_t collected = 0;
  auto submit = [&] {
    if (members.empty()) return;
    const uint64_t id = builder->segment();
    // Protected from the collector from before its record exists.
    AddPending(id, static_cast<int64_t>(members.size()));
    {
      MutexLock g(&pass->mu);
      pass->outstanding++;
    }
    upload_pool_->Submit([this, pass, id, members = std::move(members),
                          builder = std::move(*builder)]() mutable {
      const std::vector<ChunkExtent> extents = builder.CompressStaged();
      FsStatus s = PutSegment(builder, nullptr);
      int64_t unused = 0;
      for (size_t i = 0; i < members.size(); ++i) {
        const UploadMember& m = members[i];
        staged_memory_ -= static_cast<int64_t>(m.staged);
        InodeLocks lock(locks_, {m.ino});
        DirtyFile* f = FindDirty(m.ino);
        auto it = f == nullptr ? decltype(f->chunks)::iterator() : f->chunks.find(m.index);
        if (f == nullptr || it == f->chunks.end() || it->second.version != m.version ||
            it->second.uploaded) {
          unused++;  // rewritten or committed meanwhile: this extent is garbage
          continue;
        }
        DirtyChunk& c = it->second;
        c.uploading = false;
        if (!s.ok()) continue;
        AddMemory(*f, -static_cast<int64_t>(c.data.size()));
        std::string().swap(c.data);
        c.uploaded = true;
        c.extent = extents[i];
      }
      AddPending(id, s.ok() ? -unused : -static_cast<int64_t>(members.size()));
      {
        MutexLock g(&dirty_mu_);
        if (!s.ok()) {
          upload_failures_++;
          background_error_ = s.error();
        }
        memory_cv_.SignalAll();
      }
      MutexLock g(&pass->mu);
      if (!s.ok() && pass->first_error.ok()) pass->first_error = s;
      pass->outstanding--;
      pass->cv.SignalAll();
    });
    members.clear();
    builder.reset();
    collected = 0;
  };
  // The file's lock is taken for at most kStageBatchBytes of copying at a
  // time, so writers to the file are not held up for a whole segment.
  uint64_t resume = 0;  // the next chunk index of inos[i] to look at
  for (size_t i = 0; i < inos.size();) {
    bool file_done = true;
    {
      InodeLocks lock(locks_, {inos[i]});
      DirtyFile* f = FindDirty(inos[i]);
      if (f != nullptr) {
        size_t batch = 0;
        auto it = f->chunks.lower_bound(resume);
        for (; it != f->chunks.end(); ++it) {
          if (collected >= target || batch >= kStageBatchBytes) break;
          auto& [index, c] = *it;
          if (!AwaitsUpload(*f, index, c)) continue;
          // An overlay's blocks are stored whole: its pieces name them.
          const size_t len = c.overlay() ? c.data.size() : PlainLength(c.data);
          if (len == 0) continue;
          if (!builder) {
            // Room for a whole target and the chunk that passes it, so
            // the body is never regrown (and copied).
            builder.emplace(engine_.data_objects().NewId(), compression_, target + kChunkSize);
          }
          c.uploading = true;
          members.push_back({inos[i], index, c.version, len});
          staged_memory_ += static_cast<int64_t>(len);
          builder->Stage(inos[i], index, std::string_view(c.data.data(), len));
          collected += len;
          batch += len;
        }
        if (it != f->chunks.end()) {
          file_done = false;
          resume = it->first;
        }
      }
    }
    // Submitting may wait for a free upload slot: never with a lock held.
    if (collected >= target) submit();
    if (file_done) {
      ++i;
      resume = 0;
    }
  }
  submit();
  return pass;
}

void FileSystemImpl::ReadAhead(Ino ino, uint64_t offset, uint64_t end, uint64_t size) {
  uint64_t from, to;
  {
    MutexLock g(&readahead_mu_);
    if (readahead_.size() > kReadAheadFiles) readahead_.clear();
    ReadAheadState& st = readahead_[ino];
    const bool sequential = offset == st.next_offset;
    st.next_offset = end;
    if (!sequential) {
      st.prefetched = 0;
      return;
    }
    from = std::max(end, st.prefetched);
    to = std::min(size, end + kReadAheadBytes);
    // Top the window up in big steps, not one request per read.
    if (to <= from || (to - from < kReadAheadBytes / 2 && to != size)) return;
    st.prefetched = to;
  }
  // The extents ahead, as the engine has them now; a value replaced
  // meanwhile only makes the read-ahead useless, never wrong.
  rocksdb::ReadOptions ro;
  std::string upper = ChunkKey(ino, ChunkCount(to));
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, data_));
  struct Run {
    uint64_t segment, start, end;
  };
  std::vector<Run> runs;
  for (it->Seek(ChunkKey(ino, from / kChunkSize)); it->Valid(); it->Next()) {
    StoredChunk c;
    if (!DecodeChunk(it->value().ToStringView(), &c)) continue;
    for (const ChunkExtent& x : DistinctExtents(ChunkPieces(c))) {
      const uint64_t s = x.offset, e = s + x.stored_len;
      if (!runs.empty() && runs.back().segment == x.segment && s >= runs.back().end &&
          s <= runs.back().end + kCoalesceGapBytes &&
          e - runs.back().start <= kReadAheadRequestBytes) {
        runs.back().end = e;
      } else {
        runs.push_back({x.segment, s, e});
      }
    }
  }
  for (const Run& run : runs) {
    FsResult<uint64_t> seg_size = SegmentSize(run.segment);
    if (!seg_size.ok()) return;
    const bool queued = prefetch_pool_->TrySubmit([this, run, total = *seg_size] {
      Status s = engine_.data_objects().Prefetch(run.segment, total, run.start, run.end - run.start);
      if (!s.ok()) spdlog::debug("fs: read-ahead of segment {:016x}: {}", run.segment, s.ToString());
    });
    if (!queued) {
      // The pool is busy: what is not queued is fetched when read.
      MutexLock g(&readahead_mu_);
      readahead_[ino].prefetched = 0;
      return;
    }
  }
}

}  // namespace pail::fs
