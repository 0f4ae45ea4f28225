#include "engine/engine.h"

#include <atomic>
#include <set>
#include <thread>

#include <rocksdb/cache.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/write_buffer_manager.h>
#include <spdlog/spdlog.h>

#include "engine/bucket_fs.h"
#include "engine/data_objects.h"
#include "engine/rocksdb_logger.h"
#include "engine/table_warmup.h"

namespace pail::engine {

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound(s.ToString());
  if (s.IsCorruption()) return Status::Corruption(s.ToString());
  if (s.IsInvalidArgument()) return Status::InvalidArgument(s.ToString());
  if (s.IsNoSpace()) return Status::NoSpace(s.ToString());
  return Status::IOError(s.ToString());
}

namespace {

struct Compression {
  rocksdb::CompressionType type = rocksdb::kZSTD;
  int level = 3;
};

Result<Compression> ParseCompression(const std::string& spec) {
  if (spec == "lz4") return Compression{rocksdb::kLZ4Compression, rocksdb::CompressionOptions::kDefaultCompressionLevel};
  if (spec == "none") return Compression{rocksdb::kNoCompression, 0};
  if (spec.rfind("zstd", 0) == 0) {
    int level = 3;
    if (spec.size() > 4) {
      if (spec[4] != '-') return Status::InvalidArgument("compression '" + spec + "': use zstd-N, lz4 or none");
      try {
        level = std::stoi(spec.substr(5));
      } catch (...) {
        level = 0;
      }
      if (level < 1 || level > 22) {
        return Status::InvalidArgument("compression '" + spec + "': zstd level must be 1..22");
      }
    }
    return Compression{rocksdb::kZSTD, level};
  }
  return Status::InvalidArgument("compression '" + spec + "': use zstd-N (1..22), lz4 or none");
}

// The engine's Env on a clock of the caller's choosing.
class ClockedEnv : public rocksdb::EnvWrapper {
 public:
  ClockedEnv(std::unique_ptr<rocksdb::Env> target, std::shared_ptr<rocksdb::SystemClock> clock)
      : EnvWrapper(std::move(target)) {
    system_clock_ = std::move(clock);
  }
  static const char* kClassName() { return "PailClockedEnv"; }
  const char* Name() const override { return kClassName(); }
};

// Unpublished WAL bytes allowed in memory before writes wait for the bucket.
constexpr uint64_t kMaxPendingWalBytes = 256ull << 20;

class EngineImpl : public Engine {
 public:
  ~EngineImpl() override {
    Status s = Close();
    if (!s.ok()) spdlog::warn("engine: closing on destruction: {}", s.ToString());
  }

  Status Init(EngineOptions options) {
    options_ = std::move(options);
    PAIL_ASSIGN_OR_RETURN(Compression compression, ParseCompression(options_.compression));
    PAIL_ASSIGN_OR_RETURN(fs_, BucketFileSystem::Open(BucketFsOptions{
                                   options_.store, options_.cache_dir, options_.disk_cache_bytes}));
    // The memory budget is split: a quarter for segments just uploaded
    // (their bodies, segment_memory.h), the rest for RocksDB's block cache.
    // Each kept body costs a fresh buffer for a later upload, whose first
    // touch is slow on a VM: a half made fresh servers' writes 15-20% slower.
    const uint64_t segment_memory = options_.memory_cache_bytes / 4;
    block_cache_capacity_ =
        std::max<uint64_t>(options_.memory_cache_bytes - segment_memory, 8 << 20);
    data_objects_ = std::make_unique<DataObjects>(fs_->store(), fs_->cache(), segment_memory,
                                                  fs_->epoch(),
                                                  [fs = fs_.get()] { return fs->CheckStillWriter(); });
    env_ = rocksdb::NewCompositeEnv(fs_);
    if (options_.clock) env_ = std::make_unique<ClockedEnv>(std::move(env_), options_.clock);

    rocksdb::Options db_options;
    db_options.env = env_.get();
    // Only into an empty bucket: over a damaged one RocksDB would start an
    // empty database and delete the old files (BucketFileSystem refuses first).
    db_options.create_if_missing = fs_->fresh();
    db_options.create_missing_column_families = true;
    db_options.info_log = NewRocksDbLogger();  // never a file: see rocksdb_logger.h
    db_options.max_manifest_file_size = 4 << 20;  // each manifest sync uploads it whole
    db_options.recycle_log_file_num = 0;
    db_options.max_open_files = -1;
    db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    // Flushing all column families together keeps SSTs a consistent cut of
    // the write sequence, whatever part of the WAL has reached the bucket.
    db_options.atomic_flush = true;
    db_options.max_background_jobs = 2;
    db_options.stats_dump_period_sec = 0;
    db_options.stats_persist_period_sec = 0;
    // Tickers only (block cache hits and misses for metrics), no timers.
    db_options.statistics = rocksdb::CreateDBStatistics();
    db_options.statistics->set_stats_level(rocksdb::kExceptHistogramOrTimers);
    // No automatic resume thread: RocksDB 7.8's DB::Close can wait forever
    // for one it has just stopped (rocksdb issue 11440), as at a shutdown
    // whose flush met an unreachable bucket. The flusher resumes instead
    // (FlushLoop), and Close() stops the flusher before closing the DB.
    db_options.max_bgerror_resume_count = 0;

    rocksdb::BlockBasedTableOptions table;
    table.block_cache = rocksdb::NewLRUCache(block_cache_capacity_);
    block_cache_ = table.block_cache;
    // Memtables live inside the block cache's share: their memory is charged
    // to the cache (which evicts blocks to make room), and together they
    // flush once they pass half of it. Uncounted, two column families' 64 MiB
    // memtables and the ones being flushed could add a quarter of a GiB to a
    // process configured for 256 MiB (issue 14: 531 MiB peak at ten million
    // files).
    const uint64_t memtable_budget = block_cache_capacity_ / 2;
    db_options.write_buffer_manager =
        std::make_shared<rocksdb::WriteBufferManager>(memtable_budget, block_cache_);
    table.block_size = 16 * 1024;
    table.cache_index_and_filter_blocks = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    // Index and filter in partitions of kMetadataBlockBytes, found through a
    // small top-level block pinned in the cache. Whole, an SST's filter
    // grows with its keys (a few MiB for a few million inodes), and a block
    // bigger than a cache shard is never kept, so every lookup read it
    // again and checked its checksum: creating the second million files
    // ran ten times slower than the first.
    constexpr size_t kMetadataBlockBytes = 4096;
    table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.partition_filters = true;
    table.metadata_block_size = kMetadataBlockBytes;
    table.pin_top_level_index_and_filter = true;
    table.cache_index_and_filter_blocks_with_high_priority = true;

    constexpr uint64_t kTargetSstBytes = 16 << 20;
    constexpr uint64_t kMaxMemtableBytes = 64 << 20;
    auto cf_options = [&](const ColumnFamilySpec& spec) {
      const bool large_values = spec.large_values;
      rocksdb::ColumnFamilyOptions cf;
      cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
      cf.compression = compression.type;
      cf.compression_opts.level = compression.level;
      cf.bottommost_compression = compression.type;
      cf.write_buffer_size = std::min<uint64_t>(kMaxMemtableBytes, memtable_budget / 2);
      // An SST is uploaded whole, its bytes and their ciphertext in memory
      // at once: compaction outputs of RocksDB's default 64 MiB (80 MiB seen
      // in a filesystem of ten million files) made every upload a passing
      // peak of over 160 MiB, beyond what the memory cache accounts for.
      cf.target_file_size_base = kTargetSstBytes;
      cf.disable_auto_compactions = !options_.background_work;
      cf.merge_operator = spec.merge_operator;
      if (spec.insert_hint_prefix_bytes != 0) {
        cf.memtable_insert_with_hint_prefix_extractor.reset(
            rocksdb::NewFixedPrefixTransform(spec.insert_hint_prefix_bytes));
      }
      if (large_values) {
        cf.enable_blob_files = true;
        cf.min_blob_size = 1024;
        cf.blob_file_size = 256 << 20;
        cf.blob_compression_type = compression.type;
        cf.enable_blob_garbage_collection = true;
        cf.blob_garbage_collection_age_cutoff = 0.5;
      }
      return cf;
    };
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors{
        {rocksdb::kDefaultColumnFamilyName, cf_options(ColumnFamilySpec{})}};
    for (const auto& spec : options_.column_families) {
      descriptors.push_back({spec.name, cf_options(spec)});
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    Status s = FromRocks(rocksdb::DB::Open(db_options, fs_->db_path(), descriptors, &handles, &db));
    if (!s.ok()) return s.WithContext("opening the database in " + options_.store->Describe());
    db_.reset(db);
    for (size_t i = 0; i < handles.size(); ++i) handles_[descriptors[i].name] = handles[i];

    fs_->SetLiveFilesProvider([this] {
      std::set<std::string> live;
      std::vector<std::string> files;
      uint64_t manifest_size = 0;
      if (db_ && db_->GetLiveFiles(files, &manifest_size, /*flush_memtable=*/false).ok()) {
        for (auto& f : files) live.insert(f.substr(f.rfind('/') + 1));
      }
      return live;
    });
    {
      MutexLock lock(&sync_mu_);
      synced_seq_ = db_->GetLatestSequenceNumber();
    }
    flusher_ = std::thread([this] { FlushLoop(); });
    std::set<std::string> warm;
    for (const auto& spec : options_.column_families) {
      if (spec.warm_after_open) warm.insert(spec.name);
    }
    if (!warm.empty() && options_.background_work) {
      // Planned here, so the thread never touches the database and Close
      // can shut it down while a piece is still on its way.
      std::vector<std::string> files = PlanWarmup(*db_, warm, fs_->cache().budget() / 4);
      warming_ = true;
      warmer_ = std::thread([this, files = std::move(files)] {
        warmed_bytes_ = WarmTables(*fs_, files, [this] {
          MutexLock lock(&stop_mu_);
          return stop_;
        });
        warming_ = false;
      });
    }
    spdlog::info("engine open on {} (epoch {})", options_.store->Describe(), fs_->epoch());
    return Status::OK();
  }

  rocksdb::DB* db() override { return db_.get(); }
  DataObjects& data_objects() override { return *data_objects_; }

  rocksdb::ColumnFamilyHandle* column_family(const std::string& name) override {
    auto it = handles_.find(name);
    return it == handles_.end() ? nullptr : it->second;
  }

  bool fenced() const override { return fs_ && fs_->fenced(); }

  EngineStats stats() const override {
    EngineStats st;
    {
      MutexLock lock(&sync_mu_);
      st.syncs = syncs_;
      st.last_sync = last_sync_time_;
    }
    st.epoch = fs_ ? fs_->epoch() : 0;
    st.fenced = fenced();
    if (!fs_ || !db_) return st;
    st.pending_wal_bytes = fs_->PendingWalBytes();
    st.disk_cache_bytes = fs_->cache().cached_bytes();
    st.disk_cache_capacity = fs_->cache().budget();
    st.disk_cache_hits = fs_->cache().hits();
    st.disk_cache_misses = fs_->cache().misses();
    st.disk_cache_local_failures = fs_->cache().local_failures();
    st.garbage_objects = fs_->GarbageCount();
    st.warmed_bytes = warmed_bytes_.load();
    st.warming = warming_.load();
    db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &st.memtable_bytes);
    db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kEstimatePendingCompactionBytes,
                                  &st.pending_compaction_bytes);
    const int levels = db_->NumberLevels();
    for (int level = 0; level < levels; ++level) {
      uint64_t files = 0, n = 0;
      for (const auto& [name, handle] : handles_) {
        if (db_->GetIntProperty(handle, rocksdb::DB::Properties::kNumFilesAtLevelPrefix + std::to_string(level), &n)) {
          files += n;
        }
      }
      st.files_per_level.push_back(files);
    }
    st.block_cache_bytes = block_cache_ ? block_cache_->GetUsage() : 0;
    st.block_cache_capacity = block_cache_capacity_;
    st.segment_memory_bytes = data_objects_ ? data_objects_->memory().charged() : 0;
    st.segment_memory_capacity = data_objects_ ? data_objects_->memory().capacity() : 0;
    st.segment_memory_hits = data_objects_ ? data_objects_->memory().hits() : 0;
    if (auto stats = db_->GetOptions().statistics) {
      st.block_cache_hits = stats->getTickerCount(rocksdb::BLOCK_CACHE_HIT);
      st.block_cache_misses = stats->getTickerCount(rocksdb::BLOCK_CACHE_MISS);
    }
    return st;
  }

  Status Write(rocksdb::WriteBatch* batch) override {
    if (fenced()) return FencedError();
    // Bounded memory: while the bucket is unreachable, writes pause here.
    if (fs_->PendingWalBytes() > kMaxPendingWalBytes) {
      Status s = Sync();
      if (!s.ok()) {
        return s.IsFenced() ? s
                            : Status::Retryable("the bucket is unreachable and " +
                                                std::to_string(kMaxPendingWalBytes >> 20) +
                                                " MiB of writes wait for it: " + s.ToString());
      }
    }
    rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), batch);
    if (!s.ok() && !fenced() && TryResume()) s = db_->Write(rocksdb::WriteOptions(), batch);
    return Classify(s);
  }

  Status SyncThrough(uint64_t sequence) override {
    if (fenced()) return FencedError();
    const uint64_t wanted = std::min(sequence, db_->GetLatestSequenceNumber());
    // No BlockingHint here, although a sync waits for the bucket: handing
    // the FUSE request loop on at every sync made fsync 3-4x slower and
    // concurrent renames up to half as fast under stress-ng's ten stressors
    // on 2 vCPUs (docs/benchmarks.md, "What cost the concurrent
    // stressors"). FUSE answers its fsyncs off the loop instead (fuse_ops.cc).
    MutexLock lock(&sync_mu_);
    // Group commit: one upload covers every caller that arrived before it began.
    while (sync_running_) {
      sync_cv_.Wait();
      if (synced_seq_ >= wanted && last_sync_ok_) return Status::OK();
    }
    if (synced_seq_ >= wanted && last_sync_ok_) return Status::OK();
    sync_running_ = true;
    sync_mu_.Unlock();
    WriteSyncRecord();
    const uint64_t covering = db_->GetLatestSequenceNumber();
    Status s = fs_->PublishWals();
    sync_mu_.Lock();
    sync_running_ = false;
    last_sync_ok_ = s.ok();
    if (s.ok()) {
      synced_seq_ = std::max(synced_seq_, covering);
      ++syncs_;
      last_sync_time_ = std::chrono::system_clock::now();
    }
    sync_cv_.SignalAll();
    return fenced() ? FencedError() : s;
  }

  Status CollectGarbage() override {
    if (fenced()) return FencedError();
    return fs_->CollectGarbage();
  }

  Status Close() override {
    {
      MutexLock lock(&stop_mu_);
      if (closed_) return Status::OK();
      closed_ = true;
      stop_ = true;
    }
    stop_cv_.SignalAll();
    if (flusher_.joinable()) flusher_.join();
    Status result;
    if (db_) {
      // A fenced engine cannot make its unsynced writes durable: say so
      // rather than report a clean shutdown.
      if (fenced()) {
        result = FencedError();
      } else {
        // The record then also covers the requests since the last upload.
        WriteSyncRecord();
        result = SyncForShutdown();
        // Flushing the memtables makes the WAL obsolete: the next open then
        // replays nothing and downloads no WAL part. Only an optimisation:
        // every write is in a published WAL part already.
        if (result.ok()) {
          std::vector<rocksdb::ColumnFamilyHandle*> all;
          for (auto& [name, handle] : handles_) all.push_back(handle);
          rocksdb::Status flushed = db_->Flush(rocksdb::FlushOptions(), all);
          if (!flushed.ok()) spdlog::warn("flush at shutdown (the WAL keeps the writes): {}", flushed.ToString());
        }
      }
      for (auto& [name, handle] : handles_) db_->DestroyColumnFamilyHandle(handle);
      handles_.clear();
      rocksdb::Status s = db_->Close();
      if (!s.ok()) spdlog::warn("closing the database: {}", s.ToString());
      db_.reset();
      // The seal and the collection only save the next opener work; their
      // failure loses nothing.
      if (result.ok() && !fenced()) {
        Status sealed = fs_->SealOwnWal();
        Status gc = sealed.ok() ? fs_->CollectGarbage() : sealed;
        if (!gc.ok() && !gc.IsFenced()) spdlog::warn("tidying the bucket at shutdown: {}", gc.ToString());
      }
    }
    // Last: a warm-up piece still on its way (an unreachable bucket retries
    // it) overlaps the final sync instead of delaying it.
    if (warmer_.joinable()) warmer_.join();
    return result;
  }

 private:
  Status FencedError() const {
    return Status::Fenced("another pailfs process has opened bucket " + options_.store->Describe() +
                          " and fenced this one; writes are refused. Stop this server.");
  }

  Status Classify(const rocksdb::Status& s) const {
    if (s.ok()) return Status::OK();
    if (fenced()) return FencedError();
    return FromRocks(s);
  }

  // The last Sync of a shutdown: retried while the store's failures are
  // retryable, for at most shutdown_sync_timeout, so that a server whose
  // bucket is gone still stops. What it could not publish is lost, and the
  // error says so.
  Status SyncForShutdown() {
    const auto deadline = std::chrono::steady_clock::now() + options_.shutdown_sync_timeout;
    auto pause = std::chrono::milliseconds(50);
    Status s = Sync();
    while (s.IsRetryable() && std::chrono::steady_clock::now() + pause < deadline) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
      s = Sync();
    }
    if (s.ok() || s.IsFenced()) return s;
    const uint64_t lost = fs_->PendingWalBytes();
    return Status::IOError("shutting down: " + std::to_string(lost) +
                           " bytes of writes made since the last successful sync could not be made "
                           "durable in " + options_.store->Describe() + " and are lost (" +
                           s.ToString() + "); every write synced before stays in the bucket");
  }

  // Rides along with the upload Sync() is about to make; a failure only
  // delays the record to the next upload.
  void WriteSyncRecord() {
    if (options_.sync_record_key.empty() || !options_.sync_record_value) return;
    const std::string value = options_.sync_record_value();
    if (value.empty()) return;
    rocksdb::WriteBatch batch;
    if (!batch.Put(options_.sync_record_key, value).ok()) return;
    rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch);
    if (!s.ok()) spdlog::warn("engine: sync record not written: {}", s.ToString());
  }

  // After a store outage RocksDB may stop writes until resumed; one attempt.
  bool TryResume() {
    rocksdb::Status s = db_->Resume();
    if (!s.ok()) spdlog::warn("engine: resume after error failed: {}", s.ToString());
    return s.ok();
  }

  void FlushLoop() {
    MutexLock lock(&stop_mu_);
    while (!stop_) {
      const auto tick = std::chrono::steady_clock::now() + options_.flush_interval;
      while (!stop_ && stop_cv_.WaitUntil(tick)) {
      }
      if (stop_) break;
      stop_mu_.Unlock();
      // Only when something is dirty: an idle engine sends no request.
      bool dirty;
      {
        MutexLock sync_lock(&sync_mu_);
        dirty = db_->GetLatestSequenceNumber() > synced_seq_ || !last_sync_ok_;
      }
      if (!fenced() && dirty) {
        Status s = Sync();
        if (!s.ok()) spdlog::warn("periodic flush failed: {}", s.ToString());
      }
      // A background flush or compaction that met a store error stopped
      // RocksDB's background work; try again each round (no request when
      // nothing is stopped).
      if (options_.background_work && !fenced()) {
        rocksdb::Status resumed = db_->Resume();
        if (!resumed.ok() && !resumed.IsBusy()) {
          spdlog::warn("engine: resume after a store error failed: {}", resumed.ToString());
        }
      }
      if (!fenced() && fs_->HasGarbage()) {
        Status s = fs_->CollectGarbage();
        if (!s.ok() && !s.IsFenced()) spdlog::warn("garbage collection: {}", s.ToString());
      }
      stop_mu_.Lock();
    }
  }

  EngineOptions options_;
  std::shared_ptr<BucketFileSystem> fs_;
  std::unique_ptr<DataObjects> data_objects_;
  std::unique_ptr<rocksdb::Env> env_;
  std::unique_ptr<rocksdb::DB> db_;
  std::map<std::string, rocksdb::ColumnFamilyHandle*> handles_;

  mutable Mutex sync_mu_;
  CondVar sync_cv_{&sync_mu_};
  bool sync_running_ GUARDED_BY(sync_mu_) = false;
  bool last_sync_ok_ GUARDED_BY(sync_mu_) = true;
  uint64_t synced_seq_ GUARDED_BY(sync_mu_) = 0;
  uint64_t syncs_ GUARDED_BY(sync_mu_) = 0;
  std::chrono::system_clock::time_point last_sync_time_ GUARDED_BY(sync_mu_){};
  std::shared_ptr<rocksdb::Cache> block_cache_;
  uint64_t block_cache_capacity_ = 0;

  Mutex stop_mu_;
  CondVar stop_cv_{&stop_mu_};
  bool stop_ GUARDED_BY(stop_mu_) = false;
  bool closed_ GUARDED_BY(stop_mu_) = false;
  std::thread flusher_;
  std::thread warmer_;  // WarmTables after open, when a column family asks
  std::atomic<uint64_t> warmed_bytes_{0};
  std::atomic<bool> warming_{false};
};

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Open(EngineOptions options) {
  auto engine = std::make_unique<EngineImpl>();
  PAIL_RETURN_IF_ERROR(engine->Init(std::move(options)));
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace pail::engine
