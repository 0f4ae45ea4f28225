#include "objstore/local_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "objstore/object_store_util.h"

namespace pail {
namespace {

constexpr char kDirSuffix[] = ".d";
constexpr char kObjectSuffix[] = ".o";
constexpr char kTempDir[] = ".tmp";
// The bucket holds the wrapped data key (pailfs.key) and, encrypted or not,
// nobody else's business: only the server's user may read it.
constexpr mode_t kPrivateFileMode = 0600;
constexpr mode_t kPrivateDirMode = 0700;
constexpr char kLockFile[] = ".lock";
// Bodies at least this large are written with O_DIRECT when their memory is
// aligned (EncryptedStore aligns what it encrypts); see WriteTemp.
constexpr size_t kDirectWriteMinBytes = 1 << 20;
constexpr size_t kDirectWriteAlign = 4096;

Status ErrnoStatus(const std::string& what, int err) {
  std::string msg = what + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return Status::NotFound(msg);
  if (err == EACCES || err == EPERM) return Status::PermissionDenied(msg);
  if (err == ENOSPC || err == EDQUOT) return Status::NoSpace(msg);
  return Status::IOError(msg);
}

std::string EscapeComponent(std::string_view c) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : c) {
    if (std::isalnum(ch) || ch == '_' || ch == '-' || (ch == '.' && !out.empty())) {
      out.push_back(static_cast<char>(ch));
    } else {
      out.push_back('%');
      out.push_back(kHex[ch >> 4]);
      out.push_back(kHex[ch & 15]);
    }
  }
  return out;
}

std::string UnescapeComponent(std::string_view c) {
  auto hex = [](char h) -> int {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] == '%' && i + 2 < c.size() && hex(c[i + 1]) >= 0 &&
        hex(c[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(c[i + 1]) * 16 + hex(c[i + 2])));
      i += 2;
    } else {
      out.push_back(c[i]);
    }
  }
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Status FsyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  return rc == 0 ? Status::OK() : ErrnoStatus("fsync " + path, err);
}

// Creates each missing directory of `dir` below `root`, fsyncing parents so
// that the new entries survive a crash.
Status MakeDirs(const std::string& root, const std::string& dir) {
  std::string path = root;
  size_t pos = root.size();
  while (pos < dir.size()) {
    size_t next = dir.find('/', pos + 1);
    if (next == std::string::npos) next = dir.size();
    std::string child = dir.substr(0, next);
    if (::mkdir(child.c_str(), kPrivateDirMode) == 0) {
      PAIL_RETURN_IF_ERROR(FsyncPath(path));
    } else if (errno != EEXIST) {
      return ErrnoStatus("mkdir " + child, errno);
    }
    path = child;
    pos = next;
  }
  return Status::OK();
}

Result<std::string> EtagOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("stat " + path, errno);
  // A new inode per write (temp file renamed in) plus its mtime: unique per write.
  return std::to_string(st.st_ino) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + "-" + std::to_string(st.st_size);
}

class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode);
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace

Result<std::unique_ptr<LocalStore>> LocalStore::Open(const std::string& root_in) {
  std::string root = root_in;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty() || root[0] != '/') {
    return Status::InvalidArgument("file:// bucket path must be absolute: '" + root_in + "'");
  }
  std::error_code ec;
  std::filesystem::create_directories(root + "/" + kTempDir, ec);
  if (ec) return Status::IOError("cannot create bucket directory " + root + ": " + ec.message());
  if (size_t removed = SpareFiles::RemoveLeftovers(root + "/" + kTempDir)) {
    spdlog::info("file:// bucket {}: removed {} temporary files of processes that are gone", root,
                 removed);
  }
  return std::unique_ptr<LocalStore>(new LocalStore(root));
}

std::string LocalStore::PathOf(const std::string& key) const {
  std::string path = root_;
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    std::string_view comp(key.data() + start,
                          (slash == std::string::npos ? key.size() : slash) - start);
    path += '/';
    path += EscapeComponent(comp);
    if (slash == std::string::npos) {
      path += kObjectSuffix;
      return path;
    }
    path += kDirSuffix;
    start = slash + 1;
  }
}

LocalStore::LocalStore(std::string root)
    : root_(std::move(root)), spares_(root_ + "/" + kTempDir, kPrivateFileMode) {}

Result<std::string> LocalStore::WriteTemp(std::string_view body) {
  // The aligned bulk of a large body goes straight to the disk (O_DIRECT):
  // objects are written once and read back in small ranges, if at all, and
  // copying them into the page cache cost a sequential write more CPU than
  // its encryption. Any refusal (unaligned memory, a filesystem without
  // O_DIRECT) falls back to ordinary writes, which report real errors.
  size_t direct_len = 0;
  if (body.size() >= kDirectWriteMinBytes &&
      reinterpret_cast<uintptr_t>(body.data()) % kDirectWriteAlign == 0) {
    direct_len = body.size() / kDirectWriteAlign * kDirectWriteAlign;
  }
  int fd;
  std::string path;
  if (std::optional<SpareFile> spare = spares_.Take()) {
    fd = spare->fd;
    path = std::move(spare->path);
    if (direct_len > 0 && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_DIRECT) != 0) direct_len = 0;
  } else {
    path = SpareFiles::UniqueName(root_ + "/" + kTempDir);
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
    fd = ::open(path.c_str(), flags | (direct_len > 0 ? O_DIRECT : 0), kPrivateFileMode);
    if (fd < 0 && direct_len > 0 && errno == EINVAL) {
      direct_len = 0;
      fd = ::open(path.c_str(), flags, kPrivateFileMode);
    }
    if (fd < 0) return ErrnoStatus("create " + path, errno);
  }
  size_t done = 0;
  if (direct_len > 0) {
    while (done < direct_len) {
      ssize_t n = ::write(fd, body.data() + done, direct_len - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
      if (done % kDirectWriteAlign != 0) break;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_DIRECT);
  }
  while (done < body.size()) {
    ssize_t n = ::pwrite(fd, body.data() + done, body.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return ErrnoStatus("write " + path, err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(path.c_str());
    return ErrnoStatus("fsync " + path, err);
  }
  ::close(fd);
  return path;
}

Status LocalStore::Place(const std::string& temp, const std::string& key,
                         const std::string& path, WriteMode mode, const std::string& etag) {
  if (mode == WriteMode::kIfAbsent) {
    // link() refuses an existing name atomically, even against other
    // processes, so it needs no lock: a conditional replace holds the lock
    // while the name exists, and Delete's unlink is as atomic as the link.
    if (::link(temp.c_str(), path.c_str()) == 0) return Status::OK();
    if (errno == EEXIST) return Status::PreconditionFailed("file://" + key + " exists");
    return ErrnoStatus("link " + path, errno);
  }
  // The lock makes a conditional replace's check and rename one step.
  FileLock lock(root_ + "/" + kLockFile);
  if (!lock.ok()) return ErrnoStatus("lock " + root_, errno);
  if (mode == WriteMode::kIfMatch) {
    auto current = EtagOf(path);
    if (!current.ok() && !current.status().IsNotFound()) return current.status();
    if (!current.ok() || *current != etag) {
      return Status::PreconditionFailed("file://" + key + ": etag does not match");
    }
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) return ErrnoStatus("rename to " + path, errno);
  return Status::OK();
}

Result<std::string> LocalStore::Write(const std::string& key, std::string_view body, WriteMode mode,
                                      const std::string& etag) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  const std::string path = PathOf(key);
  const std::string dir = path.substr(0, path.rfind('/'));
  PAIL_ASSIGN_OR_RETURN(std::string temp, WriteTemp(body));
  // Linking or renaming moves the temp file's inode into place, so the
  // object's etag is known before it has a name.
  auto written = EtagOf(temp);
  Status placed = written.ok() ? Place(temp, key, path, mode, etag) : written.status();
  if (placed.IsNotFound()) {
    // The key's directories are made when its first object is written:
    // trying the name first spares every later put a mkdir per level.
    placed = MakeDirs(root_, dir);
    if (placed.ok()) placed = Place(temp, key, path, mode, etag);
  }
  // A link leaves the temp name behind, and a failure may.
  if (mode == WriteMode::kIfAbsent || !placed.ok()) ::unlink(temp.c_str());
  PAIL_RETURN_IF_ERROR(placed);
  // The name's durability needs no lock: other writers go on with their
  // names meanwhile, and directory syncs that overlap share one journal
  // commit. (A reader could always see the name before this sync.)
  PAIL_RETURN_IF_ERROR(FsyncPath(dir));
  return written;
}

Result<std::string> LocalStore::Put(const std::string& key, std::string_view body) {
  return Write(key, body, WriteMode::kReplace, "");
}

Result<std::string> LocalStore::PutIfAbsent(const std::string& key, std::string_view body) {
  return Write(key, body, WriteMode::kIfAbsent, "");
}

Result<std::string> LocalStore::PutIfMatch(const std::string& key, std::string_view body,
                                           const std::string& etag) {
  return Write(key, body, WriteMode::kIfMatch, etag);
}

Result<std::string> LocalStore::GetRange(const std::string& key, uint64_t offset,
                                         uint64_t length) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  const std::string path = PathOf(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("file://" + key, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("stat " + path, err);
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  // The caller asks for exactly what it needs (and reads ahead itself):
  // the kernel's read-ahead would only add disk reads to a random one.
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
  std::string out;
  if (offset < size) {
    out.resize(std::min(length, size - offset));
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = ::pread(fd, out.data() + done, out.size() - done, offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int err = n < 0 ? errno : EIO;
        ::close(fd);
        return ErrnoStatus("read " + path, err);
      }
      done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return out;
}

Result<std::string> LocalStore::Get(const std::string& key) {
  return GetRange(key, 0, UINT64_MAX);
}

Result<ObjectMeta> LocalStore::Head(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  const std::string path = PathOf(key);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus("file://" + key, errno);
  PAIL_ASSIGN_OR_RETURN(std::string etag, EtagOf(path));
  return ObjectMeta{key, static_cast<uint64_t>(st.st_size), std::move(etag)};
}

Result<ListPage> LocalStore::List(const std::string& prefix, const std::string& token,
                                  int max_keys) {
  // Walk only below the deepest directory the prefix fully names.
  std::string start_dir = root_;
  std::string key_base;
  size_t last_slash = prefix.rfind('/');
  if (last_slash != std::string::npos) {
    std::string dir_key = prefix.substr(0, last_slash);
    std::string p = PathOf(dir_key + "/x");
    start_dir = p.substr(0, p.rfind('/'));
    key_base = dir_key + "/";
  }
  std::vector<ObjectMeta> found;
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> stack{{start_dir, key_base}};
  while (!stack.empty()) {
    auto [dir, base] = stack.back();
    stack.pop_back();
    std::filesystem::directory_iterator it(dir, ec), end;
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) continue;
      return Status::IOError("list " + dir + ": " + ec.message());
    }
    for (; it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name == kTempDir || name == kLockFile) continue;
      if (EndsWith(name, kDirSuffix)) {
        std::string sub = base + UnescapeComponent(name.substr(0, name.size() - 2)) + "/";
        // Descend only where keys with the prefix can be.
        size_t n = std::min(sub.size(), prefix.size());
        if (sub.compare(0, n, prefix, 0, n) == 0) stack.push_back({it->path().string(), sub});
      } else if (EndsWith(name, kObjectSuffix)) {
        std::string key = base + UnescapeComponent(name.substr(0, name.size() - 2));
        if (key.compare(0, prefix.size(), prefix) != 0) continue;
        if (!token.empty() && key <= token) continue;
        struct stat st;
        if (::stat(it->path().c_str(), &st) != 0) continue;  // deleted meanwhile
        auto etag = EtagOf(it->path().string());
        if (!etag.ok()) continue;
        found.push_back(ObjectMeta{std::move(key), static_cast<uint64_t>(st.st_size), *etag});
      }
    }
  }
  std::sort(found.begin(), found.end(),
            [](const ObjectMeta& a, const ObjectMeta& b) { return a.key < b.key; });
  ListPage page;
  if (static_cast<int>(found.size()) > max_keys) {
    found.resize(max_keys);
    page.next_token = found.back().key;
  }
  page.objects = std::move(found);
  return page;
}

Status LocalStore::Delete(const std::string& key) {
  PAIL_RETURN_IF_ERROR(ValidateKey(key));
  const std::string path = PathOf(key);
  FileLock lock(root_ + "/" + kLockFile);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) {
    return ErrnoStatus("delete " + path, errno);
  }
  return Status::OK();
}

}  // namespace pail
