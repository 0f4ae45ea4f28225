// Engine: a RocksDB database whose only durable home is an object-store bucket.
//
// The layers above see RocksDB column families and three promises:
//  - Write() applies one batch atomically; it is acknowledged from memory.
//  - Sync() returns once everything written before it is in the bucket;
//    SyncThrough(sequence) once the writes up to a sequence number are,
//    at once when an earlier upload carried them. Concurrent calls are
//    grouped into one upload.
//  - A background flusher makes written data durable every flush_interval
//    when (and only when) something is dirty; an idle engine sends no
//    request to the bucket.
// Once another process has opened the same bucket, this engine is fenced:
// every later Write()/Sync() fails with Status::kFenced.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/system_clock.h>
#include <rocksdb/write_batch.h>

#include "objstore/object_store.h"
#include "util/status.h"

namespace pail::engine {

struct ColumnFamilySpec {
  std::string name;
  // Values mostly large (file data chunks): kept in blob files, out of the
  // path of compaction.
  bool large_values = false;
  // Optional (for counters updated by merge operands).
  std::shared_ptr<rocksdb::MergeOperator> merge_operator;
  // Its tables are read into the disk cache in the background after open
  // (table_warmup.h): for metadata nearly every operation reads, so a
  // restarted server answers from local disk within seconds rather than
  // with a GET for each cold block.
  bool warm_after_open = false;
  // Keys sharing their first this many bytes are inserted into the memtable
  // near the last key of that prefix that went in, instead of by a search
  // from the top of the skip list (0: always from the top). Metadata
  // operations write a few keys of unrelated kinds per batch, so the list's
  // one shared insert position never helps them, and with a memtable of a
  // few hundred thousand entries each top-down search was most of an
  // insert (docs/benchmarks.md, "Memtable inserts near their prefix").
  // Never in a column family that takes DeleteRange: RocksDB 7.8 keeps one
  // hint per prefix for the point and the range-deletion memtables alike,
  // and a range deletion's hint then misplaces the next point insert (its
  // debug build asserts; fs_test's truncations hit it).
  size_t insert_hint_prefix_bytes = 0;
};

class DataObjects;

struct EngineOptions {
  // The bucket, already wrapped for encryption, retries and counting.
  std::shared_ptr<ObjectStore> store;
  // Local cache directory; may be empty or missing (a fresh machine).
  std::string cache_dir;
  uint64_t disk_cache_bytes = 10ull << 30;
  uint64_t memory_cache_bytes = 1ull << 30;
  // "zstd-N" (N in 1..22), "lz4" or "none".
  std::string compression = "zstd-3";
  std::chrono::milliseconds flush_interval{1000};
  // Close() retries its final sync this long while the bucket is
  // unreachable, then gives up and reports the unpublished writes lost.
  std::chrono::milliseconds shutdown_sync_timeout{30000};
  // Column families besides "default".
  std::vector<ColumnFamilySpec> column_families;
  // Written into the "default" column family before every upload of the WAL,
  // so the record reaches the bucket with the normal flushes and never costs
  // a request of its own (used for the cumulative request counters). Empty
  // key or an empty value: nothing written.
  std::string sync_record_key;
  std::function<std::string()> sync_record_value;
  // False: no automatic compaction and no automatic resume after a store
  // error; compaction runs only on CompactRange and a stopped database
  // resumes at the next Write. The deterministic simulation sets this so
  // that only its own steps make the engine talk to the bucket.
  bool background_work = true;
  // RocksDB's clock; null means the system's. The simulation passes one
  // whose sleeps return at once (RocksDB waits a second after a failed flush).
  std::shared_ptr<rocksdb::SystemClock> clock;
};

struct EngineStats {
  uint64_t syncs = 0;  // durable points reached (grouped Sync calls count once)
  uint64_t epoch = 0;  // this writer's epoch in the bucket
  uint64_t pending_wal_bytes = 0;  // written, not yet published to the bucket
  // For metrics; read from memory only, never from the bucket.
  bool fenced = false;
  // Wall-clock time of the last successful upload (epoch 0: none yet).
  std::chrono::system_clock::time_point last_sync{};
  uint64_t memtable_bytes = 0;
  uint64_t pending_compaction_bytes = 0;
  std::vector<uint64_t> files_per_level;
  uint64_t block_cache_bytes = 0;
  uint64_t block_cache_capacity = 0;     // the memory budget's share for it
  uint64_t block_cache_hits = 0;
  uint64_t block_cache_misses = 0;
  uint64_t segment_memory_bytes = 0;  // segment bodies kept after upload
  uint64_t segment_memory_capacity = 0;
  uint64_t segment_memory_hits = 0;   // segment reads they served
  uint64_t disk_cache_bytes = 0;
  uint64_t disk_cache_capacity = 0;  // disk_size_gb, capped by the disk's room at start
  uint64_t disk_cache_hits = 0;    // reads served without a request
  uint64_t disk_cache_misses = 0;  // reads that fetched from the bucket
  uint64_t disk_cache_local_failures = 0;  // writes the cache's disk refused (DiskCache::NoteLocalFailure)
  uint64_t garbage_objects = 0;    // obsolete objects awaiting deletion
  uint64_t warmed_bytes = 0;       // table bytes the warm-up after open fetched
  bool warming = false;            // that warm-up still runs
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Open(EngineOptions options);
  virtual ~Engine() = default;

  virtual rocksdb::DB* db() = 0;
  // nullptr for an unknown name.
  virtual rocksdb::ColumnFamilyHandle* column_family(const std::string& name) = 0;

  // The bucket's file-data objects (data_objects.h).
  virtual DataObjects& data_objects() = 0;

  virtual Status Write(rocksdb::WriteBatch* batch) = 0;
  // `sequence` is a db()->GetLatestSequenceNumber() read after the writes to
  // cover: a caller that notes it per file makes the fsync of a file that
  // changed since the last upload pay for one, and of any other nothing.
  virtual Status SyncThrough(uint64_t sequence) = 0;
  Status Sync() { return SyncThrough(kEveryWrite); }
  static constexpr uint64_t kEveryWrite = ~uint64_t{0};
  // Deletes the objects of files the database no longer needs, unless a newer
  // writer owns the bucket. The background flusher does this on its own.
  virtual Status CollectGarbage() = 0;
  // Makes everything durable in the bucket and closes the database, in
  // bounded time: while the bucket is unreachable the final sync is retried
  // for shutdown_sync_timeout, then Close() fails, naming the bytes of
  // unsynced writes lost. Synced writes are never lost. Idempotent.
  virtual Status Close() = 0;

  virtual bool fenced() const = 0;
  virtual EngineStats stats() const = 0;
};

// Maps a RocksDB status to ours, keeping the message.
Status FromRocks(const rocksdb::Status& s);

}  // namespace pail::engine
