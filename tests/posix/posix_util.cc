#include "posix_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace pail::posix {

namespace {

[[noreturn]] void SetupFailed(const std::string& what) {
  throw CaseFailure{"setup: " + what + ": " + std::strerror(errno)};
}

// Major/minor numbers of the device nodes cases create; any value works,
// the nodes are never opened.
constexpr unsigned kTestDeviceMajor = 7;
constexpr unsigned kTestDeviceMinor = 11;

}  // namespace

const char* NodeTypeName(NodeType type) {
  switch (type) {
    case NodeType::kRegular: return "regular";
    case NodeType::kDirectory: return "directory";
    case NodeType::kFifo: return "fifo";
    case NodeType::kSymlink: return "symlink";
    case NodeType::kSocket: return "socket";
    case NodeType::kCharDevice: return "chardev";
    case NodeType::kBlockDevice: return "blockdev";
  }
  return "?";
}

mode_t NodeTypeBits(NodeType type) {
  switch (type) {
    case NodeType::kRegular: return S_IFREG;
    case NodeType::kDirectory: return S_IFDIR;
    case NodeType::kFifo: return S_IFIFO;
    case NodeType::kSymlink: return S_IFLNK;
    case NodeType::kSocket: return S_IFSOCK;
    case NodeType::kCharDevice: return S_IFCHR;
    case NodeType::kBlockDevice: return S_IFBLK;
  }
  return 0;
}

void MakeNode(NodeType type, const std::string& name, mode_t mode) {
  int rc = 0;
  switch (type) {
    case NodeType::kRegular: {
      int fd = open(name.c_str(), O_CREAT | O_EXCL | O_WRONLY, mode);
      if (fd >= 0) close(fd);
      rc = fd < 0 ? -1 : 0;
      break;
    }
    case NodeType::kDirectory: rc = mkdir(name.c_str(), mode); break;
    case NodeType::kFifo: rc = mkfifo(name.c_str(), mode); break;
    case NodeType::kSymlink: rc = symlink("target", name.c_str()); break;
    case NodeType::kSocket: rc = mknod(name.c_str(), S_IFSOCK | mode, 0); break;
    case NodeType::kCharDevice:
      rc = mknod(name.c_str(), S_IFCHR | mode, makedev(kTestDeviceMajor, kTestDeviceMinor));
      break;
    case NodeType::kBlockDevice:
      rc = mknod(name.c_str(), S_IFBLK | mode, makedev(kTestDeviceMajor, kTestDeviceMinor));
      break;
  }
  if (rc != 0) SetupFailed(std::string("create ") + NodeTypeName(type) + " " + name);
}

void WriteFile(const std::string& name, const std::string& content, mode_t mode) {
  int fd = open(name.c_str(), O_CREAT | O_TRUNC | O_WRONLY, mode);
  if (fd < 0) SetupFailed("open " + name);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n <= 0) {
      close(fd);
      SetupFailed("write " + name);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) SetupFailed("close " + name);
}

std::string ReadFile(const std::string& name) {
  int fd = open(name.c_str(), O_RDONLY);
  if (fd < 0) SetupFailed("open " + name);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      close(fd);
      SetupFailed("read " + name);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

void MakeDir(const std::string& name, mode_t mode) {
  if (mkdir(name.c_str(), mode) != 0) SetupFailed("mkdir " + name);
}

struct stat Lstat(const std::string& name) {
  struct stat st;
  if (lstat(name.c_str(), &st) != 0) SetupFailed("lstat " + name);
  return st;
}

struct stat Stat(const std::string& name) {
  struct stat st;
  if (stat(name.c_str(), &st) != 0) SetupFailed("stat " + name);
  return st;
}

bool Exists(const std::string& name) {
  struct stat st;
  return lstat(name.c_str(), &st) == 0;
}

mode_t PermBits(const std::string& name) { return Lstat(name).st_mode & 07777; }
mode_t TypeBits(const std::string& name) { return Lstat(name).st_mode & S_IFMT; }

std::set<std::string> ListDir(const std::string& name) {
  DIR* d = opendir(name.c_str());
  if (d == nullptr) SetupFailed("opendir " + name);
  std::set<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.insert(n);
  }
  closedir(d);
  return names;
}

std::string Pattern(size_t length, unsigned seed) {
  std::string s(length, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < length; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>((x >> 16) ^ (i / 4096));
  }
  return s;
}

bool Before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

bool SameTime(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

void WaitPast(const timespec& t) {
  for (;;) {
    timespec now;
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (Before(t, now)) return;
    timespec nap{0, 2'000'000};
    nanosleep(&nap, nullptr);
  }
}

Times TimesOf(const std::string& name) {
  struct stat st = Lstat(name);
  return {st.st_atim, st.st_mtim, st.st_ctim};
}

Times TimesBeforeChange(const std::string& name) {
  Times t = TimesOf(name);
  WaitPast(t.atime);
  WaitPast(t.mtime);
  WaitPast(t.ctime);
  return t;
}

std::string TooLongName() { return std::string(256, 'n'); }
std::string MaxName() { return std::string(255, 'm'); }

}  // namespace pail::posix
