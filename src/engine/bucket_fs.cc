#include "engine/bucket_fs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "engine/bucket_files.h"
#include "engine/bucket_layout.h"
#include "engine/wal_part.h"

namespace pail::engine {

using rocksdb::IOStatus;

namespace {

constexpr char kCurrentFile[] = "CURRENT";
constexpr char kTempSuffix[] = ".dbtmp";
constexpr char kLogSuffix[] = ".log";
constexpr int kMaxEpochClaimAttempts = 100;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint64_t NowSeconds() { return static_cast<uint64_t>(std::time(nullptr)); }

// "000123.log" -> 123.
std::optional<uint64_t> LogNumberOf(const std::string& name) {
  if (!EndsWith(name, kLogSuffix)) return std::nullopt;
  std::string digits = name.substr(0, name.size() - strlen(kLogSuffix));
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(digits);
}

// RocksDB's name for log `number`: at least six digits, then ".log".
std::string LogFileName(uint64_t number) {
  std::string digits = std::to_string(number);
  return std::string(6 - std::min<size_t>(6, digits.size()), '0') + digits + kLogSuffix;
}

Status WriteLocalFile(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::IOError("cannot write cache file " + path);
  return Status::OK();
}

Result<std::string> ReadLocalFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), {});
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
                                         options.disk_cache_bytes)) {}

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

Status BucketFileSystem::ClaimEpoch() {
  for (int attempt = 0; attempt < kMaxEpochClaimAttempts; ++attempt) {
    PAIL_ASSIGN_OR_RETURN(auto fences, ListAll(*store_, kFencePrefix));
    uint64_t newest = 0;
    for (const auto& meta : fences) {
      if (auto e = ParseFenceKey(meta.key)) newest = std::max(newest, *e);
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string owner = std::string(host) + " pid " + std::to_string(::getpid()) + " at " +
                        std::to_string(NowSeconds());
    auto put = store_->PutIfAbsent(FenceKey(newest + 1), owner);
    if (put.ok()) {
      epoch_ = newest + 1;
      return Status::OK();
    }
    if (!put.status().IsPreconditionFailed()) return put.status().WithContext("claiming writer epoch");
  }
  return Status::Retryable("could not claim a writer epoch: too many concurrent openers");
}

// Reads every older epoch's WAL parts in order, sealing each epoch that has
// no seal yet, and writes each log's bytes to a pinned local file.
// `logs` receives, per epoch, (log number, part key) in sequence order.
Status BucketFileSystem::SealOlderEpochs(
    const std::vector<ObjectMeta>& listing,
    std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>>* logs) {
  std::map<uint64_t, std::map<uint64_t, std::string>> parts;  // epoch -> seq -> key
  std::set<uint64_t> only_a_seal;  // epochs whose one listed part is a seal
  for (uint64_t e = 1; e < epoch_; ++e) parts[e];              // epochs with no part yet too
  for (const auto& meta : listing) {
    auto k = ParseDbKey(meta.key);
    if (!k || !k->is_wal_part || k->epoch >= epoch_) continue;
    parts[k->epoch][k->wal_seq] = meta.key;
    if (parts[k->epoch].size() == 1 && meta.size == kWalSealBytes) {
      only_a_seal.insert(k->epoch);
    } else {
      only_a_seal.erase(k->epoch);
    }
  }
  for (auto& [epoch, seqs] : parts) {
    // A finished epoch (sealed, its data collected) costs no request: nothing
    // can follow a seal, so there is nothing to read or to seal.
    if (only_a_seal.count(epoch)) continue;
    std::map<uint64_t, uint64_t> next_offset;  // log -> bytes written to its pinned file
    // Listed parts in order (gaps are parts of dropped logs), then the
    // sequence's end, which is sealed unless the writer gets there first.
    std::vector<uint64_t> order;
    for (auto& [seq, key] : seqs) order.push_back(seq);
    uint64_t end = order.empty() ? 0 : order.back() + 1;
    for (size_t i = 0;; ++i) {
      bool listed = i < order.size();
      uint64_t seq = listed ? order[i] : end++;
      std::string key = WalPartKey(epoch, seq);
      Result<std::string> body = Status::NotFound(key);
      if (listed) {
        body = store_->Get(key);
        if (!body.ok() && body.status().IsNotFound()) continue;  // deleted since the listing
      } else {
        auto sealed = store_->PutIfAbsent(key, EncodeWalSeal(epoch_));
        if (sealed.ok()) break;
        if (!sealed.status().IsPreconditionFailed()) return sealed.status().WithContext("sealing WAL");
        body = store_->Get(key);
      }
      if (!body.ok()) return body.status().WithContext("reading WAL part " + key);
      PAIL_ASSIGN_OR_RETURN(WalPart part, DecodeWalPart(std::move(*body), key));
      if (part.is_seal) break;
      std::string path = cache_dir_ + "/pinned/" + PadNumber(epoch) + "-" + LogFileName(part.log_number);
      uint64_t& expected = next_offset[part.log_number];
      if (part.offset == expected) {
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
        ssize_t n = ::write(fd, part.bytes.data(), part.bytes.size());
        ::close(fd);
        if (n != static_cast<ssize_t>(part.bytes.size())) return Status::IOError("short write " + path);
        expected += part.bytes.size();
      } else {
        // A log whose earlier parts were deleted: RocksDB already dropped it.
        expected = UINT64_MAX;
        ::unlink(path.c_str());
      }
      (*logs)[epoch].push_back({part.log_number, key});
    }
  }
  return Status::OK();
}

Status BucketFileSystem::RebuildNamespace(
    const std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>>& wal_parts) {
  // Which CURRENT? The newest epoch's: each open writes a CURRENT of its own
  // before it acknowledges anything.
  PAIL_ASSIGN_OR_RETURN(auto first_listing, ListAll(*store_, kDbPrefix));
  uint64_t current_epoch = 0;
  for (const auto& meta : first_listing) {
    auto k = ParseDbKey(meta.key);
    if (k && !k->is_wal_part && k->file == kCurrentFile && k->epoch < epoch_) {
      current_epoch = std::max(current_epoch, k->epoch);
    }
  }
  // Pin CURRENT and its MANIFEST before listing the files they reference:
  // a manifest is uploaded only after its files, so the listing below
  // cannot miss one.
  std::string manifest_name;
  auto pin = [&](uint64_t epoch, const std::string& name) -> Status {
    std::string key = FileKey(epoch, name);
    PAIL_ASSIGN_OR_RETURN(std::string body, store_->Get(key));
    std::string path = cache_dir_ + "/pinned/" + name;
    PAIL_RETURN_IF_ERROR(WriteLocalFile(path, body));
    auto e = std::make_shared<Entry>();
    e->kind = Entry::Kind::kWhole;
    e->size = body.size();
    e->epoch = epoch;
    e->keys = {key};
    e->local_path = path;
    e->mtime = NowSeconds();
    files_[name] = e;
    if (name == kCurrentFile) {
      manifest_name = body.substr(0, body.find('\n'));
    }
    return Status::OK();
  };
  if (current_epoch != 0) {
    PAIL_RETURN_IF_ERROR(pin(current_epoch, kCurrentFile));
    if (manifest_name.empty() || manifest_name.find('/') != std::string::npos) {
      return Status::Corruption("CURRENT of epoch " + std::to_string(current_epoch) +
                                " does not name a manifest");
    }
    PAIL_RETURN_IF_ERROR(pin(current_epoch, manifest_name));
  }

  PAIL_ASSIGN_OR_RETURN(auto listing, ListAll(*store_, kDbPrefix));
  for (const auto& meta : listing) {
    auto k = ParseDbKey(meta.key);
    if (!k || k->is_wal_part || k->epoch >= epoch_) continue;
    if (k->file == kCurrentFile || k->file == manifest_name || EndsWith(k->file, kTempSuffix)) continue;
    if (LogNumberOf(k->file)) continue;  // logs come from WAL parts
    auto& slot = files_[k->file];
    if (slot && slot->epoch > k->epoch) continue;  // the newer epoch's file is live
    auto e = std::make_shared<Entry>();
    e->kind = Entry::Kind::kWhole;
    e->size = meta.size;
    e->epoch = k->epoch;
    e->keys = {meta.key};
    e->mtime = NowSeconds();
    slot = e;
  }
  // Logs: one per (epoch, log number); only those whose parts start at 0.
  for (const auto& [epoch, parts] : wal_parts) {
    std::map<uint64_t, std::vector<std::string>> by_log;
    for (const auto& [log, key] : parts) by_log[log].push_back(key);
    for (auto& [log, keys] : by_log) {
      std::string name = LogFileName(log);
      std::string path = cache_dir_ + "/pinned/" + PadNumber(epoch) + "-" + name;
      auto e = std::make_shared<Entry>();
      e->kind = Entry::Kind::kWal;
      e->epoch = epoch;
      e->keys = std::move(keys);
      e->mtime = NowSeconds();
      std::error_code ec;
      uint64_t size = std::filesystem::file_size(path, ec);
      if (ec) {
        // Every byte of it was deleted already: only the objects remain to go.
        QueueDeletion(e->keys);
        continue;
      }
      e->size = size;
      e->local_path = path;
      auto& slot = files_[name];
      if (slot && slot->epoch > epoch) continue;
      slot = e;
    }
  }
  return Status::OK();
}

Status BucketFileSystem::Recover() {
  PAIL_RETURN_IF_ERROR(ClaimEpoch());
  PAIL_ASSIGN_OR_RETURN(auto listing, ListAll(*store_, kDbPrefix));
  std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>> wal_parts;
  PAIL_RETURN_IF_ERROR(SealOlderEpochs(listing, &wal_parts));
  std::lock_guard lock(mu_);
  PAIL_RETURN_IF_ERROR(RebuildNamespace(wal_parts));
  spdlog::info("bucket {}: writer epoch {}, {} database files", store_->Describe(), epoch_,
               files_.size());
  return Status::OK();
}

IOStatus BucketFileSystem::ToIOStatus(const Status& s) {
  if (s.ok()) return IOStatus::OK();
  if (s.IsFenced()) fenced_ = true;
  IOStatus io;
  switch (s.code()) {
    case Status::Code::kNotFound: io = IOStatus::NotFound(s.ToString()); break;
    case Status::Code::kCorruption: io = IOStatus::Corruption(s.ToString()); break;
    default: io = IOStatus::IOError(s.ToString()); break;
  }
  // RocksDB resumes by itself after retryable errors once the store heals.
  if (s.IsRetryable()) io.SetRetryable(true);
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
  std::lock_guard lock(mu_);
  auto it = files_.find(name);
  return it == files_.end() ? nullptr : it->second;
}

void BucketFileSystem::QueueDeletion(const std::vector<std::string>& keys) {
  garbage_.insert(garbage_.end(), keys.begin(), keys.end());
}

IOStatus BucketFileSystem::UploadWhole(const std::string& name, const std::string& local_path) {
  if (fenced_) return ToIOStatus(Status::Fenced("another process has taken over the bucket"));
  auto body = ReadLocalFile(local_path);
  if (!body.ok()) return ToIOStatus(body.status());
  std::string key = FileKey(epoch_, name);
  auto put = store_->Put(key, *body);
  if (!put.ok()) return ToIOStatus(put.status().WithContext("uploading " + name));
  std::lock_guard lock(mu_);
  auto it = files_.find(name);
  if (it != files_.end()) {
    it->second->keys = {key};
    it->second->size = body->size();
  }
  return IOStatus::OK();
}

void BucketFileSystem::FinishWrite(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = files_.find(name);
  if (it == files_.end() || it->second->keys.empty()) return;
  it->second->local_path.clear();
  cache_->AddComplete(it->second->keys.front(), it->second->size);
}

Status BucketFileSystem::PublishWalPart(uint64_t log_number, uint64_t offset,
                                        std::string_view bytes) {
  if (fenced_) return Status::Fenced("another process has taken over the bucket");
  std::string key = WalPartKey(epoch_, next_wal_seq_);
  auto put = store_->PutIfAbsent(key, EncodeWalPart(log_number, offset, bytes));
  if (put.status().IsPreconditionFailed()) {
    fenced_ = true;
    spdlog::error("writer epoch {} is fenced: a newer process opened bucket {}; refusing writes",
                  epoch_, store_->Describe());
    return Status::Fenced("another process has taken over the bucket " + store_->Describe() +
                          "; this server accepts no more writes");
  }
  if (!put.ok()) return put.status().WithContext("publishing WAL part");
  ++next_wal_seq_;
  std::lock_guard lock(parts_mu_);
  newest_wal_part_ = key;
  wal_parts_by_log_[log_number].push_back(key);
  return Status::OK();
}

Status BucketFileSystem::PublishWals() {
  std::lock_guard publish_lock(wal_mu_);
  std::vector<std::pair<uint64_t, std::shared_ptr<WalState>>> logs;
  {
    std::lock_guard lock(mu_);
    logs.assign(wal_states_.begin(), wal_states_.end());
  }
  for (auto& [log, state] : logs) {
    std::string bytes;
    uint64_t offset;
    {
      std::lock_guard lock(state->mu);
      bytes.swap(state->pending);
      offset = state->published;
    }
    if (bytes.empty()) continue;
    Status s = PublishWalPart(log, offset, bytes);
    std::lock_guard lock(state->mu);
    if (!s.ok()) {
      // Keep the bytes, in order, for the next attempt.
      state->pending.insert(0, bytes);
      return s;
    }
    state->published += bytes.size();
  }
  return Status::OK();
}

Status BucketFileSystem::SealOwnWal() {
  std::lock_guard publish_lock(wal_mu_);
  if (fenced_) return Status::Fenced("another process has taken over the bucket");
  std::string key = WalPartKey(epoch_, next_wal_seq_);
  auto put = store_->PutIfAbsent(key, EncodeWalSeal(epoch_));
  if (put.status().IsPreconditionFailed()) {
    fenced_ = true;
    return Status::Fenced("another process has taken over the bucket");
  }
  if (!put.ok()) return put.status().WithContext("sealing this writer's WAL");
  ++next_wal_seq_;
  std::lock_guard lock(parts_mu_);
  newest_wal_part_ = key;
  return Status::OK();
}

uint64_t BucketFileSystem::PendingWalBytes() {
  std::lock_guard lock(mu_);
  uint64_t total = 0;
  for (auto& [log, state] : wal_states_) {
    std::lock_guard state_lock(state->mu);
    total += state->pending.size();
  }
  return total;
}

void BucketFileSystem::SetLiveFilesProvider(std::function<std::set<std::string>()> provider) {
  std::lock_guard lock(mu_);
  live_files_ = std::move(provider);
}

bool BucketFileSystem::HasGarbage() const {
  std::lock_guard lock(mu_);
  return !garbage_.empty();
}

size_t BucketFileSystem::GarbageCount() const {
  std::lock_guard lock(mu_);
  return garbage_.size();
}

Status BucketFileSystem::CollectGarbage() {
  std::vector<std::string> keys;
  std::function<std::set<std::string>()> live_provider;
  {
    std::lock_guard lock(mu_);
    if (garbage_.empty() || fenced_) return Status::OK();
    keys.swap(garbage_);
    keys.insert(keys.end(), retained_wal_parts_.begin(), retained_wal_parts_.end());
    retained_wal_parts_.clear();
    live_provider = live_files_;
  }
  // Only the bucket's current owner may delete: a newer writer may still
  // need what this one considers obsolete.
  auto newer = store_->Head(FenceKey(epoch_ + 1));
  if (newer.ok()) {
    fenced_ = true;
    return Status::Fenced("a newer writer owns the bucket; not deleting");
  }
  if (!newer.status().IsNotFound()) {
    std::lock_guard lock(mu_);
    garbage_.insert(garbage_.end(), keys.begin(), keys.end());
    return newer.status();
  }
  std::set<std::string> live = live_provider ? live_provider() : std::set<std::string>{};
  std::string newest_part;
  {
    std::lock_guard lock(parts_mu_);
    newest_part = newest_wal_part_;
  }
  std::vector<std::string> failed, kept;
  for (const auto& key : keys) {
    // The newest WAL part stays while it is the newest: it tells a future
    // sealer where the sequence ends.
    if (key == newest_part) {
      kept.push_back(key);
      continue;
    }
    auto k = ParseDbKey(key);
    if (k && !k->is_wal_part && live.count(k->file)) {
      // Belt and braces: RocksDB says it still needs a file of this name.
      std::lock_guard lock(mu_);
      auto it = files_.find(k->file);
      if (it != files_.end() && !it->second->keys.empty() && it->second->keys.front() == key) continue;
    }
    if (!store_->Delete(key).ok()) failed.push_back(key);
  }
  std::lock_guard lock(mu_);
  garbage_.insert(garbage_.end(), failed.begin(), failed.end());
  // Kept parts wait outside garbage_, so they alone never wake the collector.
  retained_wal_parts_.insert(retained_wal_parts_.end(), kept.begin(), kept.end());
  return Status::OK();
}

// ---- rocksdb::FileSystem ----

IOStatus BucketFileSystem::EnsureLocal(const std::string& name, std::string* local_path) {
  auto e = Find(name);
  if (!e) return IOStatus::PathNotFound(name);
  std::string key;
  {
    std::lock_guard lock(mu_);
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
  std::string path = cache_dir_ + "/pinned/" + name;
  Status s = WriteLocalFile(path, *body);
  if (!s.ok()) return ToIOStatus(s);
  std::lock_guard lock(mu_);
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
      std::lock_guard lock(mu_);
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
  std::lock_guard lock(mu_);
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
  std::lock_guard lock(mu_);
  for (const auto& [name, e] : files_) r->push_back(name);
  return IOStatus::OK();
}

IOStatus BucketFileSystem::DeleteFile(const std::string& f, const rocksdb::IOOptions& o,
                                      rocksdb::IODebugContext* dbg) {
  std::string name = FileNameOf(f);
  if (name.empty()) return target()->DeleteFile(f, o, dbg);
  std::shared_ptr<Entry> e;
  {
    std::lock_guard lock(mu_);
    auto it = files_.find(name);
    if (it == files_.end()) return IOStatus::PathNotFound(f);
    e = it->second;
    files_.erase(it);
    std::vector<std::string> keys = e->keys;
    if (e->kind == Entry::Kind::kWal && e->epoch == epoch_) {
      if (auto log = LogNumberOf(name)) {
        // Its data is in SSTs now; unpublished bytes need not go up.
        wal_states_.erase(*log);
        std::lock_guard parts_lock(parts_mu_);
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
  std::lock_guard lock(mu_);
  auto it = files_.find(name);
  if (it == files_.end()) return IOStatus::PathNotFound(f);
  *size = it->second->size;
  auto log = LogNumberOf(name);
  if (log && it->second->epoch == epoch_ && wal_states_.count(*log)) {
    auto& state = wal_states_[*log];
    std::lock_guard state_lock(state->mu);
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
    std::lock_guard lock(mu_);
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
  std::lock_guard lock(mu_);
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
