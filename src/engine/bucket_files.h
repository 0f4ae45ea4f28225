// The rocksdb file objects of BucketFileSystem (one job each):
// WholeFileWriter uploads a file whole when synced or closed, WalWriter
// publishes WAL parts on sync, BucketReader serves random reads from the
// local copy or the DiskCache.
#pragma once

#include <memory>
#include "util/mutex.h"
#include <string>

#include <rocksdb/file_system.h>

#include "engine/bucket_fs.h"

namespace pail::engine {

struct BucketFileSystem::Entry {
  enum class Kind { kWhole, kWal };
  Kind kind = Kind::kWhole;
  uint64_t size = 0;
  uint64_t epoch = 0;               // epoch that wrote it
  std::vector<std::string> keys;    // objects holding it (whole: 0 or 1; WAL: parts)
  std::string local_path;           // a complete local copy, or ""
  uint64_t mtime = 0;               // seconds; for RocksDB's age-based rules
};

class WholeFileWriter : public rocksdb::FSWritableFile {
 public:
  // `upload`: false for temp files (*.dbtmp), which only go up when renamed.
  WholeFileWriter(BucketFileSystem* fs, std::string name, std::string path, int fd, bool upload);
  ~WholeFileWriter() override;

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& o,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Close(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return Sync(o, dbg);
  }
  uint64_t GetFileSize(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return size_;
  }

 private:
  BucketFileSystem* fs_;
  std::string name_;
  std::string path_;
  int fd_;
  bool upload_;
  uint64_t size_ = 0;
  bool dirty_ = true;  // an empty file is a state worth uploading too
};

// Appends WAL bytes to the log's pending state. Publication is the
// engine's job (BucketFileSystem::PublishWals), never RocksDB's: RocksDB
// treats a failed WAL sync as fatal to the log writer, while a store outage
// is something the engine must ride out. RocksDB's own Sync is therefore a
// no-op here; with atomic_flush no RocksDB invariant rests on it.
class WalWriter : public rocksdb::FSWritableFile {
 public:
  explicit WalWriter(std::shared_ptr<BucketFileSystem::WalState> state) : state_(std::move(state)) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Close(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Flush(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    return rocksdb::IOStatus::OK();
  }
  bool IsSyncThreadSafe() const override { return true; }
  uint64_t GetFileSize(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override;

 private:
  std::shared_ptr<BucketFileSystem::WalState> state_;
};

class BucketReader : public rocksdb::FSRandomAccessFile {
 public:
  BucketReader(BucketFileSystem* fs, std::shared_ptr<BucketFileSystem::Entry> entry,
               Mutex* entry_mu);
  ~BucketReader() override;
  rocksdb::IOStatus Read(uint64_t offset, size_t n, const rocksdb::IOOptions& o,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override;

 private:
  BucketFileSystem* fs_;
  std::shared_ptr<BucketFileSystem::Entry> entry_;
  Mutex* entry_mu_;  // the file system's lock over entries
  mutable Mutex fd_mu_;
  mutable int local_fd_ GUARDED_BY(fd_mu_) = -1;
  mutable std::string local_fd_path_ GUARDED_BY(fd_mu_);
};

}  // namespace pail::engine
