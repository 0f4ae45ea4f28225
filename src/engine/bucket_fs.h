// BucketFileSystem: a rocksdb::FileSystem whose durable home is the bucket.
//
// Files under the database directory live in the bucket (bucket_layout.h);
// everything else (the info LOG, the LOCK file) passes through to the local
// file system. How each kind of RocksDB file is kept:
//  - SST, blob, MANIFEST, OPTIONS, IDENTITY: written to the local cache dir
//    and uploaded whole on Sync/Fsync and on Close (if changed since), so an
//    uploaded object is always a state RocksDB itself synced.
//  - CURRENT: RocksDB writes a temp file and renames it; the rename uploads.
//  - WAL (*.log): appended in memory; each Sync publishes the unsynced bytes
//    as the epoch's next WAL part (wal_part.h).
//  - Reads: from the local copy while one exists, else through DiskCache,
//    a miss fetching the kTableFetchBytes around it.
//  - DeleteFile only forgets the file; the object is deleted later by
//    CollectGarbage(), after checking that this process still owns the
//    bucket (see bucket_layout.h for why that order matters).
//
// Open() claims a new epoch (fencing every older writer), seals the older
// epochs' WALs and rebuilds the file namespace from the bucket, so a fresh
// machine with an empty cache dir recovers the full state. The member
// functions live in four files: bucket_fs.cc (the rocksdb::FileSystem),
// bucket_recovery.cc (Open), bucket_wal.cc (WAL parts), bucket_gc.cc.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include "util/mutex.h"
#include <set>
#include <string>
#include <vector>

#include <rocksdb/file_system.h>

#include "engine/disk_cache.h"
#include "objstore/object_store.h"

namespace pail::engine {

// PrefetchFile's piece: the engine's SST target size, so most tables come
// in one GET.
constexpr uint64_t kPrefetchPieceBytes = 16 << 20;
// A read of a database file that misses the disk cache fetches the aligned
// kTableFetchBytes around it (what of it is absent), not just its 64 KiB
// extent. Lookups land all over a table, and a restarted server's cold
// lookups each paid a GET for a block beside ones fetched moments before:
// stat() of random files among two million, with the warm-up off, cost
// 1.11 GETs each with 64 KiB fetches, 0.32 with 256 KiB and 0.08 with
// 1 MiB, at a lower mean latency (docs/benchmarks.md, the scale benchmark).
// Larger parts would lengthen each miss's wait for little more.
constexpr uint64_t kTableFetchBytes = 1 << 20;

struct BucketFsOptions {
  std::shared_ptr<ObjectStore> store;
  std::string cache_dir;          // local; created if missing
  uint64_t disk_cache_bytes = 1ull << 30;
};

class BucketFileSystem : public rocksdb::FileSystemWrapper {
 public:
  static Result<std::shared_ptr<BucketFileSystem>> Open(const BucketFsOptions& options);
  ~BucketFileSystem() override;

  // The path to hand RocksDB as the database name.
  const std::string& db_path() const { return db_path_; }
  uint64_t epoch() const { return epoch_; }
  bool fenced() const { return fenced_.load(); }
  // The bucket held no database: RocksDB may create one. Otherwise it must
  // not (a missing CURRENT then means damage, not a new bucket).
  bool fresh() const { return fresh_; }
  // Files RocksDB still needs; garbage collection never deletes them.
  void SetLiveFilesProvider(std::function<std::set<std::string>()> provider);
  // Deletes objects of files RocksDB dropped, unless fenced. No request is
  // made when there is nothing to delete.
  Status CollectGarbage();
  bool HasGarbage() const;
  size_t GarbageCount() const;
  // At a clean shutdown: ends this epoch's WAL sequence with a seal of its
  // own, so that no data part has to stay behind to mark the end and the
  // next opener reads nothing it does not need.
  Status SealOwnWal();

  const char* Name() const override { return "PailBucketFileSystem"; }

  rocksdb::IOStatus NewSequentialFile(const std::string& f, const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSSequentialFile>* r,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomAccessFile(const std::string& f, const rocksdb::FileOptions& o,
                                        std::unique_ptr<rocksdb::FSRandomAccessFile>* r,
                                        rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                       std::unique_ptr<rocksdb::FSWritableFile>* r,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(const std::string& f, const std::string& old,
                                      const rocksdb::FileOptions& o,
                                      std::unique_ptr<rocksdb::FSWritableFile>* r,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomRWFile(const std::string& f, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSRandomRWFile>* r,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& o,
                                 std::unique_ptr<rocksdb::FSDirectory>* r,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus FileExists(const std::string& f, const rocksdb::IOOptions& o,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetChildren(const std::string& dir, const rocksdb::IOOptions& o,
                                std::vector<std::string>* r,
                                rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& f, const rocksdb::IOOptions& o,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFileSize(const std::string& f, const rocksdb::IOOptions& o,
                                uint64_t* size, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFileModificationTime(const std::string& f, const rocksdb::IOOptions& o,
                                            uint64_t* mtime, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& dst,
                               const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LinkFile(const std::string& src, const std::string& dst,
                             const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;

  // Used by the file classes in bucket_files.cc.
  struct Entry;
  rocksdb::IOStatus UploadWhole(const std::string& name, const std::string& local_path);
  // Publishes every WAL byte appended so far, oldest log first, as WAL
  // parts. On failure the bytes stay pending for the next call. When no
  // part goes up it checks that this process is still the writer instead.
  // Call it only when something was written since its last success.
  Status PublishWals();
  uint64_t PendingWalBytes();

  // What a WAL file holds that is not yet in the bucket.
  // Its mu is taken after the file system's mu_ and wal_mu_.
  struct WalState {
    Mutex mu;
    std::string pending GUARDED_BY(mu);     // appended, not yet published
    uint64_t published GUARDED_BY(mu) = 0;  // bytes of the log already in the bucket
  };
  // A closed, uploaded file: its local copy now belongs to the DiskCache.
  void FinishWrite(const std::string& name);
  DiskCache& cache() { return *cache_; }
  // The store the engine writes through (the bucket's, made to free the
  // cache's room when a local bucket's disk fills: room_making_store.h).
  const std::shared_ptr<ObjectStore>& store() const { return store_; }
  // Fetches the parts of database file `name` the disk cache lacks, in
  // pieces of at most kPrefetchPieceBytes (one GET each, held in memory
  // while written to the cache), asking `stopping` before each. Returns the
  // bytes it covered; 0 for a file only local or unknown (deleted
  // meanwhile).
  Result<uint64_t> PrefetchFile(const std::string& name, const std::function<bool()>& stopping);
  // Lists fence/: Fenced when an epoch newer than ours exists. Fences below
  // the newest are collected, so this lists rather than HEADs fence/<e+1>.
  // Every deletion (of database files and of data objects) calls it first.
  Status CheckStillWriter();
  rocksdb::IOStatus ToIOStatus(const Status& s);

 private:
  BucketFileSystem(const BucketFsOptions& options, std::string db_path);
  Status Recover();
  Status ClaimEpoch();
  // The epochs the files of this writer's state live in (current_object.h).
  std::set<uint64_t> Lineage();
  Status SealOlderEpochs(const std::vector<ObjectMeta>& listing,
                         std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>>* parts);
  Status RebuildNamespace(
      const std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>>& wal_parts)
      REQUIRES(mu_);
  // The file name if `path` is in the database directory, else "".
  std::string FileNameOf(const std::string& path) const;
  std::shared_ptr<Entry> Find(const std::string& name);
  rocksdb::IOStatus EnsureLocal(const std::string& name, std::string* local_path);
  void QueueDeletion(const std::vector<std::string>& keys) REQUIRES(mu_);

  std::shared_ptr<ObjectStore> store_;
  std::string cache_dir_;
  std::string db_path_;
  std::unique_ptr<DiskCache> cache_;
  int cache_lock_fd_ = -1;  // flock held while this process uses cache_dir
  uint64_t epoch_ = 0;
  std::vector<uint64_t> older_fences_;  // fences below ours, listed at the claim
  bool fresh_ = false;
  std::atomic<bool> fenced_{false};
  // This epoch's CURRENT is in the bucket: from then on no opener uses an
  // older epoch's CURRENT, so objects outside our lineage may go.
  std::atomic<bool> current_published_{false};

  // Guards files_ (and the entries in it), garbage_, live_files_.
  mutable Mutex mu_ ACQUIRED_AFTER(wal_mu_);
  std::map<std::string, std::shared_ptr<Entry>> files_ GUARDED_BY(mu_);
  std::vector<std::string> garbage_ GUARDED_BY(mu_);
  std::function<std::set<std::string>()> live_files_ GUARDED_BY(mu_);

  // Publishes `bytes` (log `log_number` from `offset`) as the next part and
  // returns how many of them are now in the bucket: fewer than all when a
  // part of ours whose response was lost is found at our sequence number.
  Result<size_t> PublishWalPart(uint64_t log_number, uint64_t offset, std::string_view bytes)
      REQUIRES(wal_mu_);
  // Records this epoch's part `key` of `log_number`, now in the bucket.
  void RecordPublishedPart(uint64_t log_number, const std::string& key) EXCLUDES(parts_mu_);

  std::map<uint64_t, std::shared_ptr<WalState>> wal_states_ GUARDED_BY(mu_);
  Mutex wal_mu_;  // serialises WAL part publication, in sequence order
  uint64_t next_wal_seq_ GUARDED_BY(wal_mu_) = 0;
  uint64_t parts_put_ GUARDED_BY(wal_mu_) = 0;  // parts this process created
  Mutex parts_mu_ ACQUIRED_AFTER(mu_, wal_mu_);  // a leaf lock over the two members below
  // This epoch's parts.
  std::map<uint64_t, std::vector<std::string>> wal_parts_by_log_ GUARDED_BY(parts_mu_);
  // Never deleted: it marks where the sequence is.
  std::string newest_wal_part_ GUARDED_BY(parts_mu_);
  std::vector<std::string> retained_wal_parts_ GUARDED_BY(mu_);
  // Each older epoch's last data part before its seal. Collected, its key
  // is overwritten by a seal instead of deleted (bucket_gc.cc).
  std::set<std::string> ends_of_sealed_wals_ GUARDED_BY(mu_);
};

}  // namespace pail::engine
