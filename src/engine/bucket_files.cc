#include "engine/bucket_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pail::engine {

using rocksdb::IOStatus;

namespace {

IOStatus PosixError(const std::string& what, int err) {
  IOStatus io = IOStatus::IOError(what + ": " + std::strerror(err));
  // A full disk heals (the cache gives way, other files go): retryable, so
  // that the engine's Resume() restarts the flush. A plain IOError during a
  // flush is fatal to RocksDB 7.8 until the process restarts; NoSpace would
  // hand recovery to an SstFileManager that answers Resume() with Busy.
  if (err == ENOSPC || err == EDQUOT) io.SetRetryable(true);
  return io;
}

}  // namespace

WholeFileWriter::WholeFileWriter(BucketFileSystem* fs, std::string name, std::string path, int fd,
                                 bool upload)
    : fs_(fs), name_(std::move(name)), path_(std::move(path)), fd_(fd), upload_(upload) {}

WholeFileWriter::~WholeFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

IOStatus WholeFileWriter::Append(const rocksdb::Slice& data, const rocksdb::IOOptions&,
                                 rocksdb::IODebugContext*) {
  size_t done = 0;
  bool cache_gave_way = false;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, size_ + done);
    const int err = n < 0 ? errno : 0;
    if (err == EINTR) continue;
    if ((err == ENOSPC || err == EDQUOT) && !cache_gave_way) {
      // The disk cache shares this disk and gives way to the tables: it
      // evicts, then the write is tried once more.
      fs_->cache().NoteLocalFailure("writing " + path_, err);
      cache_gave_way = true;
      continue;
    }
    if (err != 0) return PosixError("write " + path_, err);
    done += static_cast<size_t>(n);
  }
  size_ += data.size();
  dirty_ = true;
  return IOStatus::OK();
}

IOStatus WholeFileWriter::Truncate(uint64_t size, const rocksdb::IOOptions&,
                                   rocksdb::IODebugContext*) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return PosixError("truncate " + path_, errno);
  if (size != size_) dirty_ = true;
  size_ = size;
  return IOStatus::OK();
}

IOStatus WholeFileWriter::Sync(const rocksdb::IOOptions&, rocksdb::IODebugContext*) {
  if (!upload_ || !dirty_) return IOStatus::OK();
  IOStatus s = fs_->UploadWhole(name_, path_);
  if (s.ok()) dirty_ = false;
  return s;
}

IOStatus WholeFileWriter::Close(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) {
  if (fd_ < 0) return IOStatus::OK();
  IOStatus s = Sync(o, dbg);
  ::close(fd_);
  fd_ = -1;
  if (s.ok() && upload_) fs_->FinishWrite(name_);
  return s;
}

IOStatus WalWriter::Append(const rocksdb::Slice& data, const rocksdb::IOOptions&,
                           rocksdb::IODebugContext*) {
  MutexLock lock(&state_->mu);
  state_->pending.append(data.data(), data.size());
  return IOStatus::OK();
}

uint64_t WalWriter::GetFileSize(const rocksdb::IOOptions&, rocksdb::IODebugContext*) {
  MutexLock lock(&state_->mu);
  return state_->published + state_->pending.size();
}

BucketReader::BucketReader(BucketFileSystem* fs, std::shared_ptr<BucketFileSystem::Entry> entry,
                           Mutex* entry_mu)
    : fs_(fs), entry_(std::move(entry)), entry_mu_(entry_mu) {}

BucketReader::~BucketReader() {
  if (local_fd_ >= 0) ::close(local_fd_);
}

IOStatus BucketReader::Read(uint64_t offset, size_t n, const rocksdb::IOOptions&,
                            rocksdb::Slice* result, char* scratch,
                            rocksdb::IODebugContext*) const {
  std::string local_path, key;
  uint64_t size;
  {
    MutexLock lock(entry_mu_);
    local_path = entry_->local_path;
    key = entry_->keys.empty() ? "" : entry_->keys.front();
    size = entry_->size;
  }
  if (!local_path.empty()) {
    // Not uploaded yet (or pinned): the local copy is the only one.
    MutexLock lock(&fd_mu_);
    if (local_fd_ < 0 || local_fd_path_ != local_path) {
      if (local_fd_ >= 0) ::close(local_fd_);
      local_fd_ = ::open(local_path.c_str(), O_RDONLY | O_CLOEXEC);
      local_fd_path_ = local_path;
      if (local_fd_ < 0) return PosixError("open " + local_path, errno);
    }
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(local_fd_, scratch + done, n - done, offset + done);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return PosixError("read " + local_path, errno);
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *result = rocksdb::Slice(scratch, done);
    return IOStatus::OK();
  }
  if (key.empty()) return IOStatus::IOError("file has neither a local copy nor an object");
  auto r = fs_->cache().Read(key, size, offset, n, scratch, kTableFetchBytes);
  if (!r.ok()) return fs_->ToIOStatus(r.status());
  *result = rocksdb::Slice(scratch, *r);
  return IOStatus::OK();
}

}  // namespace pail::engine
