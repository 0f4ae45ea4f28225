#include "engine/bucket_fs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "engine/bucket_files.h"
#include "engine/bucket_layout.h"
#include "engine/current_object.h"
#include "engine/local_file.h"
#include "engine/room_making_store.h"
#include "util/failpoint.h"

namespace pail::engine {

using rocksdb::IOStatus;

namespace {

uint64_t NowSeconds() { return static_cast<uint64_t>(std::time(nullptr)); }

// The disk cache keeps at most a quarter of the process's open-file limit
// open (at most kCacheMaxOpenFiles): connections, tables being written and
// RocksDB need the rest.
size_t CacheOpenFileBound() {
  rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return kCacheMaxOpenFiles;
  }
  return std::clamp<size_t>(limit.rlim_cur / 4, 16, kCacheMaxOpenFiles);
}

}  // namespace

class NoopDirectory : public rocksdb::FSDirectory {
 public:
  IOStatus Fsync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) override {
    // Directory entries are the bucket's keys; nothing to make durable.
    return IOStatus::OK();
  }
};

BucketFileSystem::BucketFileSystem(const BucketFsOptions& options, std::string db_path)
    : FileSystemWrapper(rocksdb::FileSystem::Default()),
      store_(options.store),
      cache_dir_(options.cache_dir),
      db_path_(std::move(db_path)),
      cache_(std::make_unique<DiskCache>(options.store, options.cache_dir + "/objects",
                                         options.disk_cache_bytes, CacheOpenFileBound())) {
  if (store_->IsLocal()) store_ = std::make_shared<RoomMakingStore>(store_, cache_.get());
}

BucketFileSystem::~BucketFileSystem() {
  if (cache_lock_fd_ >= 0) ::close(cache_lock_fd_);  // releases the flock
}

Result<std::shared_ptr<BucketFileSystem>> BucketFileSystem::Open(const BucketFsOptions& options) {
  if (!options.store) return Status::InvalidArgument("engine needs an object store");
  std::error_code ec;
  std::filesystem::create_directories(options.cache_dir + "/db", ec);
  if (ec) {
    return Status::IOError("cannot create cache dir " + options.cache_dir + ": " + ec.message() +
                           "; set [cache] dir to a writable directory");
  }
  // The cache dir is wiped below: make sure no other process is using it.
  const std::string lock_path = options.cache_dir + "/.lock";
  int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return Status::IOError("cannot open " + lock_path + ": " + std::strerror(errno));
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd);
    return Status::InvalidArgument("cache dir " + options.cache_dir +
                                   " is in use by another pailfs process; give each server its own "
                                   "[cache] dir");
  }
  std::filesystem::remove_all(options.cache_dir + "/pinned", ec);
  std::filesystem::create_directories(options.cache_dir + "/pinned", ec);
  std::shared_ptr<BucketFileSystem> fs(
      new BucketFileSystem(options, options.cache_dir + "/db"));
  fs->cache_lock_fd_ = lock_fd;
  PAIL_RETURN_IF_ERROR(fs->Recover());
  return fs;
}

IOStatus BucketFileSystem::ToIOStatus(const Status& s) {
  if (s.ok()) return IOStatus::OK();
  if (s.IsFenced()) fenced_ = true;
  IOStatus io;
  switch (s.code()) {
    case Status::Code::kNotFound: io = IOStatus::NotFound(s.ToString()); break;
    case Status::Code::kCorruption: io = IOStatus::Corruption(s.ToString()); break;
    // NoSpace too: RocksDB would hand its recovery to an SstFileManager
    // that waits for free space on the local db path and answers Resume()
    // with Busy meanwhile (a full file:// bucket stayed stopped in a test).
    default: io = IOStatus::IOError(s.ToString()); break;
  }
  // RocksDB resumes by itself after retryable errors once the store heals;
  // a full bucket heals too (deleted files' space is collected).
  if (s.IsRetryable() || s.IsNoSpace()) io.SetRetryable(true);
  return io;
}

std::string BucketFileSystem::FileNameOf(const std::string& path) const {
  if (path.size() <= db_path_.size() + 1 || path.compare(0, db_path_.size(), db_path_) != 0 ||
      path[db_path_.size()] != '/') {
    return "";
  }
  std::string name = path.substr(db_path_.size() + 1);
  if (name.find('/') != std::string::npos || name == "LOCK") return "";
  return name;
}

std::shared_ptr<BucketFileSystem::Entry> BucketFileSystem::Find(const std::string& name) {
  MutexLock lock(&mu_);
  auto it = files_.find(name);
  return it == files_.end() ? nullptr : it->second;
}

void BucketFileSystem::QueueDeletion(const std::vector<std::string>& keys) {
  garbage_.insert(garbage_.end(), keys.begin(), keys.end());
}

// The order of uploads is what makes a crash at any point safe: a table or
// blob file goes up before the manifest that names it, a manifest before the
// CURRENT that names it. A failpoint sits at each of these steps.
IOStatus BucketFileSystem::UploadWhole(const std::string& name, const std::string& local_path) {
  if (fenced_) return ToIOStatus(Status::Fenced("another process has taken over the bucket"));
  auto body = ReadLocalFile(local_path);
  if (!body.ok()) return ToIOStatus(body.status());
  const bool is_current = name == kCurrentFile;
  const bool is_manifest = name.rfind("MANIFEST-", 0) == 0;
  const uint64_t size = body->size();
  // The file itself is the object (no copy: an SST can be tens of MiB),
  // except CURRENT, which is encoded with the lineage.
  std::string object = std::move(*body);
  if (is_manifest || is_current) {
    // A writer fenced without knowing it yet would otherwise publish a state
    // a newer writer never saw; an opener pinning it must not be misled.
    Status s = Failpoint(is_current ? "engine/before_current_upload" : "engine/before_manifest_upload");
    if (s.ok() && is_current && !current_published_) s = Failpoint("engine/open_before_current");
    if (s.ok()) s = CheckStillWriter();
    if (!s.ok()) return ToIOStatus(s.WithContext("uploading " + name));
    if (is_current) object = EncodeCurrentObject(object, Lineage());
  }
  std::string key = FileKey(epoch_, name);
  auto put = store_->Put(key, object);
  if (!put.ok()) return ToIOStatus(put.status().WithContext("uploading " + name));
  {
    MutexLock lock(&mu_);
    auto it = files_.find(name);
    if (it != files_.end()) {
      it->second->keys = {key};
      it->second->size = size;
    }
  }
  if (is_current) current_published_ = true;
  if (IsTableOrBlob(name)) {
    Status s = Failpoint(current_published_ ? "engine/after_table_upload" : "engine/open_after_recovery_flush");
    if (!s.ok()) return ToIOStatus(s);
  }
  return IOStatus::OK();
}

void BucketFileSystem::FinishWrite(const std::string& name) {
  MutexLock lock(&mu_);
  auto it = files_.find(name);
  if (it == files_.end() || it->second->keys.empty()) return;
  it->second->local_path.clear();
  cache_->AddComplete(it->second->keys.front(), it->second->size);
}

// ---- rocksdb::FileSystem ----

IOStatus BucketFileSystem::EnsureLocal(const std::string& name, std::string* local_path) {
  auto e = Find(name);
  if (!e) return IOStatus::PathNotFound(name);
  std::string key;
  {
    MutexLock lock(&mu_);
    if (!e->local_path.empty()) {
      *local_path = e->local_path;
      return IOStatus::OK();
    }
    if (e->keys.empty() || e->kind != Entry::Kind::kWhole) {
      return IOStatus::IOError(name + " cannot be read back while it is being written");
    }
    key = e->keys.front();
  }
  auto body = store_->Get(key);
  if (!body.ok()) return ToIOStatus(body.status());
  if (name == kCurrentFile) {
    // RocksDB reads only its own line; the lineage stays in the bucket.
    auto current = DecodeCurrentObject(*body, key);
    if (!current.ok()) return ToIOStatus(current.status());
    *body = current->rocksdb_current;
  }
  std::string path = cache_dir_ + "/pinned/" + name;
  Status s = WriteLocalFile(path, *body);
  if (!s.ok()) return ToIOStatus(s);
  MutexLock lock(&mu_);
  e->local_path = path;
  *local_path = path;
  return IOStatus::OK();
}

IOStatus BucketFileSystem::NewSequentialFile(const std::string& f, const rocksdb::FileOptions& o,
                                             std::unique_ptr<rocksdb::FSSequentialFile>* r,
                                             rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->NewSequentialFile(f, o, r, dbg);
  std::string path;
  IOStatus s = EnsureLocal(name, &path);
  if (!s.ok()) return s;
  return target()->NewSequentialFile(path, o, r, dbg);
}

Result<uint64_t> BucketFileSystem::PrefetchFile(const std::string& name,
                                                const std::function<bool()>& stopping) {
  std::string key;
  uint64_t size = 0;
  {
    MutexLock lock(&mu_);
    auto it = files_.find(name);
    if (it == files_.end()) return uint64_t{0};
    const Entry& e = *it->second;
    if (e.kind != Entry::Kind::kWhole || e.keys.empty() || !e.local_path.empty()) {
      return uint64_t{0};
    }
    key = e.keys.front();
    size = e.size;
  }
  uint64_t offset = 0;
  // A paused cache (its disk is full) keeps nothing: stop warming.
  for (; offset < size && !stopping() && !cache_->paused(); offset += kPrefetchPieceBytes) {
    Status s = cache_->Prefetch(key, size, offset,
                                static_cast<size_t>(std::min(kPrefetchPieceBytes, size - offset)));
    // Deleted meanwhile (a compaction replaced it): nothing left to warm.
    if (s.IsNotFound()) return uint64_t{0};
    if (!s.ok()) return s;
  }
  return std::min(offset, size);
}

IOStatus BucketFileSystem::NewRandomAccessFile(const std::string& f, const rocksdb::FileOptions& o,
                                               std::unique_ptr<rocksdb::FSRandomAccessFile>* r,
                                               rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->NewRandomAccessFile(f, o, r, dbg);
  auto e = Find(name);
  if (!e) return IOStatus::PathNotFound(f);
  r->reset(new BucketReader(this, e, &mu_));
  return IOStatus::OK();
}

IOStatus BucketFileSystem::NewWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                           std::unique_ptr<rocksdb::FSWritableFile>* r,
                                           rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->NewWritableFile(f, o, r, dbg);
  if (fenced_) return ToIOStatus(Status::Fenced("another process has taken over the bucket"));
  auto e = std::make_shared<Entry>();
  e->epoch = epoch_;
  e->mtime = NowSeconds();
  std::shared_ptr<Entry> replaced;
  if (auto log = LogNumberOf(name)) {
    e->kind = Entry::Kind::kWal;
    auto state = std::make_shared<WalState>();
    {
      MutexLock lock(&mu_);
      wal_states_[*log] = state;
    }
    r->reset(new WalWriter(state));
  } else {
    std::string path = cache_->PathFor(FileKey(epoch_, name));
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return IOStatus::IOError("create " + path + ": " + std::strerror(errno));
    e->local_path = path;
    r->reset(new WholeFileWriter(this, name, path, fd, !EndsWith(name, kTempSuffix)));
  }
  MutexLock lock(&mu_);
  auto it = files_.find(name);
  if (it != files_.end()) {
    for (auto& key : it->second->keys) {
      if (key != FileKey(epoch_, name)) garbage_.push_back(key);
    }
  }
  files_[name] = e;
  return IOStatus::OK();
}

IOStatus BucketFileSystem::ReopenWritableFile(const std::string& f, const rocksdb::FileOptions& o,
                                              std::unique_ptr<rocksdb::FSWritableFile>* r,
                                              rocksdb::IODebugContext* dbg) {
  if (FileNameOf(f).empty()) return target()->ReopenWritableFile(f, o, r, dbg);
  return IOStatus::NotSupported("bucket files are immutable once written");
}

IOStatus BucketFileSystem::ReuseWritableFile(const std::string& f, const std::string& old,
                                             const rocksdb::FileOptions& o,
                                             std::unique_ptr<rocksdb::FSWritableFile>* r,
                                             rocksdb::IODebugContext* dbg) {
  if (FileNameOf(f).empty()) return target()->ReuseWritableFile(f, old, o, r, dbg);
  return IOStatus::NotSupported("WAL recycling is not supported on a bucket");
}

IOStatus BucketFileSystem::NewRandomRWFile(const std::string& f, const rocksdb::FileOptions& o,
                                           std::unique_ptr<rocksdb::FSRandomRWFile>* r,
                                           rocksdb::IODebugContext* dbg) {
  if (FileNameOf(f).empty()) return target()->NewRandomRWFile(f, o, r, dbg);
  return IOStatus::NotSupported("bucket files are immutable once written");
}

IOStatus BucketFileSystem::NewDirectory(const std::string& name, const rocksdb::IOOptions& o,
                                        std::unique_ptr<rocksdb::FSDirectory>* r,
                                        rocksdb::IODebugContext* dbg) {
  if (name != db_path_) return target()->NewDirectory(name, o, r, dbg);
  r->reset(new NoopDirectory());
  return IOStatus::OK();
}

IOStatus BucketFileSystem::FileExists(const std::string& f, const rocksdb::IOOptions& o,
                                      rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->FileExists(f, o, dbg);
  return Find(name) ? IOStatus::OK() : IOStatus::NotFound(f);
}

IOStatus BucketFileSystem::GetChildren(const std::string& dir, const rocksdb::IOOptions& o,
                                       std::vector<std::string>* r, rocksdb::IODebugContext* dbg) {
  if (dir != db_path_) return target()->GetChildren(dir, o, r, dbg);
  r->clear();
  MutexLock lock(&mu_);
  for (const auto& [name, e] : files_) r->push_back(name);
  return IOStatus::OK();
}

IOStatus BucketFileSystem::DeleteFile(const std::string& f, const rocksdb::IOOptions& o,
                                      rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->DeleteFile(f, o, dbg);
  std::shared_ptr<Entry> e;
  {
    MutexLock lock(&mu_);
    auto it = files_.find(name);
    if (it == files_.end()) return IOStatus::PathNotFound(f);
    e = it->second;
    files_.erase(it);
    std::vector<std::string> keys = e->keys;
    if (e->kind == Entry::Kind::kWal && e->epoch == epoch_) {
      if (auto log = LogNumberOf(name)) {
        // Its data is in SSTs now; unpublished bytes need not go up.
        wal_states_.erase(*log);
        MutexLock parts_lock(&parts_mu_);
        keys = wal_parts_by_log_[*log];
        wal_parts_by_log_.erase(*log);
      }
    }
    QueueDeletion(keys);
  }
  if (!e->local_path.empty()) ::unlink(e->local_path.c_str());
  if (e->kind == Entry::Kind::kWhole && !e->keys.empty()) cache_->Remove(e->keys.front());
  return IOStatus::OK();
}

IOStatus BucketFileSystem::GetFileSize(const std::string& f, const rocksdb::IOOptions& o,
                                       uint64_t* size, rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->GetFileSize(f, o, size, dbg);
  MutexLock lock(&mu_);
  auto it = files_.find(name);
  if (it == files_.end()) return IOStatus::PathNotFound(f);
  *size = it->second->size;
  auto log = LogNumberOf(name);
  if (log && it->second->epoch == epoch_ && wal_states_.count(*log)) {
    auto& state = wal_states_[*log];
    MutexLock state_lock(&state->mu);
    *size = state->published + state->pending.size();
  }
  return IOStatus::OK();
}

IOStatus BucketFileSystem::GetFileModificationTime(const std::string& f, const rocksdb::IOOptions& o,
                                                   uint64_t* mtime, rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->GetFileModificationTime(f, o, mtime, dbg);
  auto e = Find(name);
  if (!e) return IOStatus::PathNotFound(f);
  *mtime = e->mtime;
  return IOStatus::OK();
}

IOStatus BucketFileSystem::RenameFile(const std::string& src, const std::string& dst,
                                      const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) {
  std::string from = FileNameOf(src), to = FileNameOf(dst);
  if (from.empty() && to.empty()) return target()->RenameFile(src, dst, o, dbg);
  if (from.empty() || to.empty()) return IOStatus::NotSupported("rename across the bucket boundary");
  std::string local;
  IOStatus s = EnsureLocal(from, &local);
  if (!s.ok()) return s;
  // The rename is the commit point (CURRENT): upload under the new name.
  std::string new_path = cache_->PathFor(FileKey(epoch_, to));
  if (::rename(local.c_str(), new_path.c_str()) != 0) {
    return IOStatus::IOError("rename " + local + ": " + std::strerror(errno));
  }
  {
    MutexLock lock(&mu_);
    auto e = std::make_shared<Entry>();
    e->epoch = epoch_;
    e->local_path = new_path;
    e->mtime = NowSeconds();
    auto& slot = files_[to];
    // An older epoch's file of this name (its CURRENT) is superseded.
    if (slot) {
      for (auto& key : slot->keys) {
        if (key != FileKey(epoch_, to)) garbage_.push_back(key);
      }
    }
    slot = e;
  }
  s = UploadWhole(to, new_path);
  if (!s.ok()) return s;
  MutexLock lock(&mu_);
  auto old_from = files_.find(from);
  if (old_from != files_.end()) {
    QueueDeletion(old_from->second->keys);
    files_.erase(old_from);
  }
  return IOStatus::OK();
}

IOStatus BucketFileSystem::LinkFile(const std::string& src, const std::string& dst,
                                    const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) {
  if (FileNameOf(src).empty() && FileNameOf(dst).empty()) return target()->LinkFile(src, dst, o, dbg);
  return IOStatus::NotSupported("hard links are not supported on a bucket");
}

}  // namespace pail::engine
