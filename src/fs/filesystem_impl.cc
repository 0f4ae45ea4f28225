#include "fs/filesystem_impl.h"

#include <spdlog/spdlog.h>

#include "fs/permissions.h"

namespace pail::fs {

namespace {
// Inode numbers are reserved in blocks so a create does not rewrite the
// counter; a crash wastes at most one block of numbers.
constexpr uint64_t kInodeReservationBlock = 1024;
constexpr size_t kMaxQueuedReclaims = 1 << 16;
}  // namespace

FsError EngineError(const Status& s) {
  if (s.IsFenced()) return FsError{EROFS};
  spdlog::error("fs: engine failure: {}", s.ToString());
  return FsError{s.IsNoSpace() ? ENOSPC : EIO};
}

FsError EngineError(const rocksdb::Status& s) {
  spdlog::error("fs: rocksdb failure: {}", s.ToString());
  return FsError{s.IsNoSpace() ? ENOSPC : EIO};
}

std::vector<engine::ColumnFamilySpec> FileSystem::ColumnFamilies() {
  // Metadata is warmed into the disk cache after open; file data is not.
  engine::ColumnFamilySpec meta{kMetaColumnFamily, false, SegmentUsageMerge(),
                                /*warm_after_open=*/true};
  engine::ColumnFamilySpec data{kDataColumnFamily, false, nullptr};
  // Memtable insert hints by a metadata key's kind and the top seven bytes
  // of its inode: a directory's entries, a run of 256 new inode numbers, one
  // inode's records. Not for file data, which truncation deletes by range.
  meta.insert_hint_prefix_bytes = 8;
  return {meta, data};
}

Result<std::unique_ptr<FileSystem>> FileSystem::Open(engine::Engine& engine, FsOptions options) {
  auto fs = std::make_unique<FileSystemImpl>(engine, options);
  PAIL_RETURN_IF_ERROR(fs->Init());
  return std::unique_ptr<FileSystem>(std::move(fs));
}

FileSystemImpl::FileSystemImpl(engine::Engine& engine, FsOptions options)
    : engine_(engine),
      options_(options),
      inode_cache_(options.inode_cache_records),
      dentry_cache_(options.dentry_cache_entries,
                    [this](const std::string& key, const std::optional<DirEntryValue>& entry) {
                      // An absent name let go is still absent; a present one
                      // must be found in the engine again.
                      if (entry) complete_dirs_.Remove(KeyIno(key));
                    }),
      compression_(ParseDataCompression(options.compression)) {}

FileSystemImpl::~FileSystemImpl() {
  Status s = Close();
  if (!s.ok()) spdlog::error("fs: close at destruction failed: {}", s.ToString());
}

Status FileSystemImpl::Init() {
  db_ = engine_.db();
  meta_ = engine_.column_family(kMetaColumnFamily);
  data_ = engine_.column_family(kDataColumnFamily);
  if (db_ == nullptr || meta_ == nullptr || data_ == nullptr) {
    return Status::InvalidArgument(
        "engine opened without the filesystem's column families (FileSystem::ColumnFamilies)");
  }
  changes_ = std::make_unique<ChangeSequences>(meta_->GetID(), data_->GetID());
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, SystemKey(kSystemFormat), &value);
  if (rs.IsNotFound()) {
    // A new filesystem: the root directory, the format stamp, the first
    // block of inode numbers and the stats, in one batch.
    InodeRecord root;
    root.mode = S_IFDIR | 0755;
    root.nlink = 2;
    root.parent = kRootIno;
    root.next_cookie = kFirstEntryCookie;
    root.generation = NewGeneration();
    root.atime = root.mtime = root.ctime = NowTimespec();
    rocksdb::WriteBatch batch;
    batch.Put(meta_, InodeKey(kRootIno), EncodeInode(root));
    std::string version;
    PutBigEndian64(&version, kFormatVersion);
    batch.Put(meta_, SystemKey(kSystemFormat), version);
    std::string next;
    PutBigEndian64(&next, kRootIno + kInodeReservationBlock);
    batch.Put(meta_, SystemKey(kSystemNextInode), next);
    batch.Put(meta_, StatsKey(0), EncodeStats({0, 1}));
    PAIL_RETURN_IF_ERROR(Apply(&batch));
    MutexLock ino_lock(&ino_mu_);
    MutexLock shard_lock(&stats_[0].mu);
    next_ino_ = kRootIno + 1;
    reserved_ino_ = kRootIno + kInodeReservationBlock;
    stats_[0].inodes = 1;
    stored_inodes_ = 1;
  } else if (!rs.ok()) {
    return engine::FromRocks(rs).WithContext("reading the filesystem format");
  } else {
    if (value.size() != 8) return Status::Corruption("filesystem format stamp is damaged");
    uint64_t version = GetBigEndian64(value.data());
    if (version == kPreviousFormatVersion) {
      // Format 4 only adds a kind of chunk value: a format 3 bucket is
      // read as it is. Restamped so an older pailfs, which cannot read
      // the values this one writes, refuses it from now on.
      std::string stamp;
      PutBigEndian64(&stamp, kFormatVersion);
      rocksdb::WriteBatch upgrade;
      upgrade.Put(meta_, SystemKey(kSystemFormat), stamp);
      PAIL_RETURN_IF_ERROR(Apply(&upgrade));
      spdlog::info("fs: filesystem format 3 upgraded to {} (chunk values as pieces)", kFormatVersion);
      version = kFormatVersion;
    }
    if (version < kFormatVersion) {
      return Status::InvalidArgument(
          "this bucket holds filesystem format " + std::to_string(version) +
          ", written by an older pailfs (format 1: no per-inode generations; format 2: file data "
          "in RocksDB blob files, before segment objects); this pailfs reads only formats " +
          std::to_string(kPreviousFormatVersion) + " and " + std::to_string(kFormatVersion) +
          ". Copy the files into a new bucket with the older pailfs serving the old one");
    }
    if (version != kFormatVersion) {
      return Status::InvalidArgument("this bucket holds filesystem format " +
                                     std::to_string(version) +
                                     ", newer than this pailfs understands (" +
                                     std::to_string(kFormatVersion) + "); upgrade pailfs");
    }
    rs = db_->Get(rocksdb::ReadOptions(), meta_, SystemKey(kSystemNextInode), &value);
    if (!rs.ok() || value.size() != 8) {
      return Status::Corruption("filesystem has no valid inode counter");
    }
    {
      MutexLock ino_lock(&ino_mu_);
      reserved_ino_ = GetBigEndian64(value.data());
      next_ino_ = reserved_ino_;  // the next create reserves a fresh block
    }
    for (int i = 0; i < kStatsShards; ++i) {
      rs = db_->Get(rocksdb::ReadOptions(), meta_, StatsKey(i), &value);
      if (rs.IsNotFound()) continue;
      StatsValue v;
      if (!rs.ok() || !DecodeStats(value, &v)) return Status::Corruption("bad stats shard");
      MutexLock shard_lock(&stats_[i].mu);
      stats_[i].used_bytes = static_cast<int64_t>(v.used_bytes);
      stats_[i].inodes = static_cast<int64_t>(v.inodes);
      stored_used_ += stats_[i].used_bytes;
      stored_inodes_ += stats_[i].inodes;
    }
  }
  PAIL_RETURN_IF_ERROR(LoadSegments());
  upload_pool_ = std::make_unique<ThreadPool>(std::max<size_t>(1, options_.upload_parallelism), 0);
  prefetch_pool_ = std::make_unique<ThreadPool>(4, 4);
  PAIL_RETURN_IF_ERROR(ReclaimOrphansAtStart());
  // Objects a crash or a fenced writer left unnamed: one listing at open.
  if (!engine_.fenced()) {
    FsStatus swept = SweepOrphanSegments();
    if (!swept.ok()) spdlog::warn("fs: looking for unnamed data objects failed (errno {})", swept.error());
  }
  uploader_ = std::thread([this] { UploadLoop(); });
  maintenance_ = std::thread([this] { MaintenanceLoop(); });
  return Status::OK();
}

Status FileSystemImpl::Close() {
  MutexLock close_guard(&close_mu_);
  if (closed_) return Status::OK();
  {
    MutexLock g(&maint_mu_);
    stopping_ = true;
  }
  maint_cv_.SignalAll();
  {
    MutexLock g(&dirty_mu_);
    memory_cv_.SignalAll();
  }
  if (maintenance_.joinable()) maintenance_.join();
  {
    MutexLock g(&upload_mu_);
    upload_stopping_ = true;
  }
  upload_cv_.SignalAll();
  if (uploader_.joinable()) uploader_.join();
  if (upload_pool_) upload_pool_->WaitIdle();  // the uploader does not wait for its uploads
  // Read-ahead in flight must not outlive the engine it reads through.
  if (prefetch_pool_) prefetch_pool_->WaitIdle();
  FsStatus flushed = FlushAll();
  if (!flushed.ok()) {
    if (flushed.error() == EROFS) return Status::Fenced("flushing write-back buffer on close");
    return Status::IOError("flushing write-back buffer on close failed");
  }
  PAIL_RETURN_IF_ERROR(engine_.Sync());
  closed_ = true;
  return Status::OK();
}

Status FileSystemImpl::SyncAll() {
  FsStatus flushed = FlushAll();
  if (!flushed.ok()) {
    if (flushed.error() == EROFS) return Status::Fenced("flushing write-back buffer");
    return Status::IOError("flushing write-back buffer failed");
  }
  return engine_.Sync();
}

FsCounters FileSystemImpl::counters() const {
  FsCounters c;
  c.engine_writes = engine_writes_.load();
  c.inode_cache_bytes = inode_cache_.size() * kInodeCacheRecordBytes;
  c.inode_cache_capacity_bytes = inode_cache_.capacity() * kInodeCacheRecordBytes;
  c.dentry_cache_bytes = dentry_cache_.size() * kDentryCacheEntryBytes;
  c.dentry_cache_capacity_bytes = dentry_cache_.capacity() * kDentryCacheEntryBytes;
  c.chunk_puts = chunk_puts_.load();
  c.chunk_deletes = chunk_deletes_.load();
  c.reclaimed_files = reclaimed_files_.load();
  c.writer_wait_ns = writer_wait_ns_.load();
  c.write_back_bytes = static_cast<uint64_t>(std::max<int64_t>(0, dirty_memory_.load()));
  c.used_bytes = static_cast<uint64_t>(std::max<int64_t>(0, stored_used_.load() + dirty_used_.load()));
  c.used_inodes = static_cast<uint64_t>(std::max<int64_t>(0, stored_inodes_.load()));
  c.segment_puts = segment_puts_.load();
  c.segment_put_bytes = segment_put_bytes_.load();
  c.segments_deleted = segments_deleted_.load();
  c.segments_relocated = segments_relocated_.load();
  c.segment_live_bytes = static_cast<uint64_t>(std::max<int64_t>(0, segment_live_bytes_.load()));
  {
    MutexLock g(&segments_mu_);
    for (const auto& [id, st] : segments_) {
      if (st.size == 0) continue;
      c.segments++;
      c.segment_bytes += st.size;
    }
  }
  return c;
}

FsResult<InodeRecord> FileSystemImpl::LoadInode(Ino ino) {
  if (DirtyFile* f = FindDirty(ino)) return f->inode;
  return LoadStoredInode(ino);
}

FsResult<InodeRecord> FileSystemImpl::LoadStoredInode(Ino ino) {
  if (ino == 0) return FsError{ESTALE};
  if (std::optional<InodeRecord> cached = inode_cache_.Find(ino)) return *std::move(cached);
  const uint64_t ticket = inode_cache_.Ticket(ino);
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, InodeKey(ino), &value);
  if (rs.IsNotFound()) return FsError{ESTALE};
  if (!rs.ok()) return EngineError(rs);
  InodeRecord r;
  if (!DecodeInode(value, &r)) {
    spdlog::error("fs: inode {} has a damaged record", ino);
    return FsError{EIO};
  }
  inode_cache_.Fill(ino, r, ticket);
  return r;
}

FsResult<std::optional<DirEntryValue>> FileSystemImpl::LookupEntry(Ino dir, std::string_view name) {
  const std::string key = DirEntryKey(dir, name);
  if (std::optional<std::optional<DirEntryValue>> cached = dentry_cache_.Find(key)) {
    return *std::move(cached);
  }
  if (complete_dirs_.Contains(dir)) return std::optional<DirEntryValue>();
  const uint64_t ticket = dentry_cache_.Ticket(key);
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), meta_, key, &value);
  if (!rs.ok() && !rs.IsNotFound()) return EngineError(rs);
  std::optional<DirEntryValue> entry;
  if (rs.ok()) {
    DirEntryValue v;
    if (!DecodeDirEntry(value, &v)) {
      spdlog::error("fs: damaged directory entry in directory {}", dir);
      return FsError{EIO};
    }
    entry = v;
  }
  dentry_cache_.Fill(key, entry, ticket);
  return entry;
}

void FileSystemImpl::PutEntry(Txn& txn, Ino dir, std::string_view name,
                              const DirEntryValue& entry) {
  std::string key = DirEntryKey(dir, name);
  txn.batch.Put(meta_, key, EncodeDirEntry(entry));
  txn.entries.emplace_back(std::move(key), entry);
}

FsResult<InodeRecord> FileSystemImpl::LoadWritableDir(const Credentials& cred, Ino dir) {
  FsResult<InodeRecord> d = LoadInode(dir);
  if (!d.ok()) return d;
  if (!d->is_dir()) return FsError{ENOTDIR};
  if (!MayAccess(cred, *d, kMayExec)) return FsError{EACCES};
  if (d->nlink == 0) return FsError{ENOENT};
  if (!MayAccess(cred, *d, kMayWrite | kMayExec)) return FsError{EACCES};
  return d;
}

void FileSystemImpl::PutInode(Txn& txn, Ino ino, InodeRecord& r) {
  // Held until the commit has updated the inode cache: two commits of one
  // record, unordered, could leave the cache holding the older.
  locks_.AssertHeld(ino);
  if (DirtyFile* f = FindDirty(ino)) CarryDirty(txn, ino, *f, r);
  txn.batch.Put(meta_, InodeKey(ino), EncodeInode(r));
  txn.inodes.emplace_back(ino, r);
}

void FileSystemImpl::AddEntry(Txn& txn, Ino dir, InodeRecord& d, std::string_view name, Ino child,
                              uint32_t type, const struct timespec& now) {
  uint64_t cookie = d.next_cookie++;
  PutEntry(txn, dir, name, {child, cookie, type});
  txn.batch.Put(meta_, DirScanKey(dir, cookie), EncodeDirScan(child, type, name));
  d.entries++;
  d.mtime = d.ctime = now;
}

void FileSystemImpl::RemoveEntry(Txn& txn, Ino dir, InodeRecord& d, std::string_view name,
                                 const DirEntryValue& entry, const struct timespec& now) {
  std::string key = DirEntryKey(dir, name);
  txn.batch.Delete(meta_, key);
  txn.entries.emplace_back(std::move(key), std::nullopt);
  txn.batch.Delete(meta_, DirScanKey(dir, entry.cookie));
  if (d.entries > 0) d.entries--;
  if (d.entries == 0) {
    d.first_cookie = d.next_cookie;
  } else if (entry.cookie == std::max(kFirstEntryCookie, d.first_cookie)) {
    // The next stored entry may be one this batch removes too (rename over
    // a name): first_cookie stays a lower bound of the live entries, which
    // is all listings need. Entries this batch adds have cookies above it.
    // Cookies are handed out in order, so when the entries left fill every
    // cookie between this one and next_cookie, the next is stored without
    // asking the engine: a directory drained in the order it was filled.
    const bool rest_dense = d.next_cookie - entry.cookie - 1 == d.entries;
    d.first_cookie = rest_dense ? entry.cookie + 1 : NextStoredCookie(dir, entry.cookie);
  }
  d.mtime = d.ctime = now;
}

uint64_t FileSystemImpl::NextStoredCookie(Ino dir, uint64_t cookie) {
  // Names are mostly removed in the order they were made (a build's
  // scratch files, rm -r, every stress-ng stressor), so the next cookie is
  // usually stored. A point lookup, which the tables' filters mostly
  // answer, finds it for a fraction of what an iterator costs: that seeks
  // in every table.
  std::string next_entry;
  rocksdb::Status next = db_->Get(rocksdb::ReadOptions(), meta_, DirScanKey(dir, cookie + 1),
                                  &next_entry);
  if (!next.IsNotFound()) return cookie + 1;
  const std::string prefix = DirScanPrefix(dir);
  const std::string upper = DirScanPrefix(dir + 1);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, meta_));
  it->Seek(DirScanKey(dir, cookie + 1));
  if (!it->Valid() || it->key().size() != prefix.size() + 8) return cookie + 1;
  return GetBigEndian64(it->key().data() + prefix.size());
}

uint32_t FileSystemImpl::OpenCount(Ino ino) {
  MutexLock g(&handles_mu_);
  auto it = open_counts_.find(ino);
  return it == open_counts_.end() ? 0 : it->second;
}

void FileSystemImpl::DropInode(Txn& txn, Ino ino, InodeRecord& r) {
  r.nlink = 0;
  if (OpenCount(ino) > 0) {
    // Still open: the record stays so handles keep working; the orphan mark
    // lets the next start reclaim it if we crash before the last close.
    PutInode(txn, ino, r);
    txn.batch.Put(meta_, OrphanKey(ino), "");
    return;
  }
  DeleteInode(txn, ino, r, /*has_orphan_mark=*/false);
}

void FileSystemImpl::DeleteInode(Txn& txn, Ino ino, const InodeRecord& r, bool has_orphan_mark) {
  locks_.AssertHeld(ino);
  uint64_t chunk_limit = r.is_reg() ? ChunkCount(r.size) : 0;
  uint64_t stored_used = r.is_reg() ? r.used : 0;
  if (DirtyFile* f = FindDirty(ino)) {
    chunk_limit = f->stored_chunk_limit;
    stored_used = f->engine_used;
    txn.discarded.push_back(ino);
  }
  txn.batch.Delete(meta_, InodeKey(ino));
  txn.inodes.emplace_back(ino, std::nullopt);
  // Deletes of keys that never existed would still leave tombstones for
  // later scans to step over.
  if (has_orphan_mark) txn.batch.Delete(meta_, OrphanKey(ino));
  // An inode without attributes has no totals key (docs/FORMAT.md). Asking
  // for it is a point lookup that the tables' filters mostly answer; an
  // iterator seeks in every table and cost an unlink a quarter of its time.
  // Should the lookup fail, the attributes are looked for all the same.
  // An inode known to have had none needs no lookup at all.
  std::string totals;
  rocksdb::Status totals_read =
      xattr_free_.Contains(ino)
          ? rocksdb::Status::NotFound()
          : db_->Get(rocksdb::ReadOptions(), meta_, XattrTotalsKey(ino), &totals);
  // The number is never made again in this process: forget it.
  xattr_free_.Remove(ino);
  complete_dirs_.Remove(ino);
  if (!totals_read.IsNotFound()) {
    RangeIterator it(db_, meta_, XattrPrefix(ino), XattrPrefix(ino + 1));
    for (; it->Valid(); it->Next()) txn.batch.Delete(meta_, it->key());
    txn.batch.Delete(meta_, XattrTotalsKey(ino));
  }
  if (chunk_limit > 0) {
    std::string count;
    PutBigEndian64(&count, chunk_limit);
    txn.batch.Put(meta_, ReclaimKey(ino), count);
    txn.reclaims.emplace_back(ino, chunk_limit);
  }
  txn.used_bytes_delta -= static_cast<int64_t>(stored_used);
  txn.inodes_delta -= 1;
}

FsStatus FileSystemImpl::Commit(Txn& txn) {
  if (txn.batch.Count() == 0 && txn.carried.empty() && txn.discarded.empty()) return {};
  if (!txn.carried.empty()) {
    FsStatus encoded = EncodeCarried(txn);
    if (!encoded.ok()) return encoded;
  }
  for (const auto& [segment, delta] : txn.segment_live) {
    if (delta != 0) txn.batch.Merge(meta_, SegmentKey(segment), EncodeSegmentUsage({0, delta}));
  }
  Status s;
  if (txn.used_bytes_delta != 0 || txn.inodes_delta != 0) {
    // Shards hold absolute values; holding the shard across the write keeps
    // batches that carry the same shard in order.
    int shard = static_cast<int>(shard_rr_.fetch_add(1) % kStatsShards);
    StatsShard& sh = stats_[shard];
    MutexLock g(&sh.mu);
    int64_t used = sh.used_bytes + txn.used_bytes_delta;
    int64_t inodes = sh.inodes + txn.inodes_delta;
    txn.batch.Put(meta_, StatsKey(shard),
                  EncodeStats({static_cast<uint64_t>(used), static_cast<uint64_t>(inodes)}));
    s = Apply(&txn.batch);
    if (s.ok()) {
      sh.used_bytes = used;
      sh.inodes = inodes;
      stored_used_ += txn.used_bytes_delta;
      stored_inodes_ += txn.inodes_delta;
    }
  } else {
    s = Apply(&txn.batch);
  }
  for (const auto& [ino, record] : txn.inodes) {
    if (s.ok()) {
      inode_cache_.Store(ino, record ? &*record : nullptr);
    } else {
      inode_cache_.Forget(ino);
    }
  }
  for (const auto& [key, entry] : txn.entries) {
    if (s.ok()) {
      dentry_cache_.Store(key, &entry);
    } else {
      complete_dirs_.Remove(KeyIno(key));
      dentry_cache_.Forget(key);
    }
  }
  if (!s.ok()) return EngineError(s);
  for (const auto& [segment, delta] : txn.segment_live) segment_live_bytes_ += delta;
  AfterCommit(txn);
  if (!txn.reclaims.empty()) {
    {
      MutexLock g(&maint_mu_);
      if (reclaim_queue_.size() + txn.reclaims.size() > kMaxQueuedReclaims) {
        reclaim_rescan_ = true;  // the keys are durable; a scan finds them
      } else {
        reclaim_queue_.insert(reclaim_queue_.end(), txn.reclaims.begin(), txn.reclaims.end());
      }
    }
    maint_cv_.Signal();
  }
  return {};
}

Status FileSystemImpl::Apply(rocksdb::WriteBatch* batch) {
  Status s = engine_.Write(batch);
  engine_writes_++;
  if (s.ok()) changes_->Note(*batch, db_->GetLatestSequenceNumber());
  return s;
}

FsResult<Ino> FileSystemImpl::AllocateIno() {
  MutexLock g(&ino_mu_);
  if (next_ino_ >= reserved_ino_) {
    uint64_t reserved = next_ino_ + kInodeReservationBlock;
    rocksdb::WriteBatch batch;
    std::string value;
    PutBigEndian64(&value, reserved);
    batch.Put(meta_, SystemKey(kSystemNextInode), value);
    Status s = Apply(&batch);
    if (!s.ok()) return EngineError(s);
    reserved_ino_ = reserved;
  }
  return next_ino_++;
}

}  // namespace pail::fs
