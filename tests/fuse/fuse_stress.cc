// pail_fuse_stress: several threads make random creates, writes, renames,
// links, unlinks, truncates and directory changes in one small tree, so
// their operations collide, for a fixed time. Afterwards the tree is walked
// and every link count is checked against the names found.
//
//   pail_fuse_stress --dir D [--threads N] [--seconds S] [--seed N]
//
// Errors that races make legitimate (ENOENT, EEXIST, ENOTEMPTY, ...) are
// counted; any other error, or a wrong link count, fails the run (exit 1).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// The tree: kDirs directories (two of them nested), kNames names in each.
// Few names make threads hit each other's files constantly.
constexpr int kDirs = 6;
constexpr int kNames = 24;
constexpr size_t kMaxWriteBytes = 300000;  // crosses chunk boundaries

struct Options {
  std::string dir;
  int threads = 4;
  int seconds = 20;
  uint64_t seed = 1;
};

std::atomic<uint64_t> g_ops{0};
std::atomic<uint64_t> g_expected_errors{0};
std::atomic<uint64_t> g_unexpected_errors{0};
std::mutex g_report_mu;

const char* kDirNames[kDirs] = {"a", "b", "c", "a/x", "b/y", "a/x/z"};

// Errors another thread's concurrent change can cause; anything else is a bug.
bool RaceError(int e) {
  switch (e) {
    case ENOENT:
    case EEXIST:
    case ENOTEMPTY:
    case EISDIR:
    case ENOTDIR:
    case EINVAL:  // renaming a directory into its own subtree
    case ESTALE:  // an inode deleted between the kernel's lookup and our use of it
    case ELOOP:   // a symlink named n1 may point at itself
      return true;
    default:
      return false;
  }
}

void Check(bool ok, const char* op, const std::string& path) {
  g_ops++;
  if (ok) return;
  int e = errno;
  if (RaceError(e)) {
    g_expected_errors++;
    return;
  }
  g_unexpected_errors++;
  std::lock_guard<std::mutex> g(g_report_mu);
  std::fprintf(stderr, "unexpected: %s %s: %s\n", op, path.c_str(), std::strerror(e));
}

class Worker {
 public:
  Worker(const Options& o, int id) : root_(o.dir), rng_(o.seed * 1000003 + static_cast<uint64_t>(id)) {}

  void Run(std::chrono::steady_clock::time_point deadline) {
    std::string buf(kMaxWriteBytes, '\0');
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(rng_());
    while (std::chrono::steady_clock::now() < deadline) Step(buf);
  }

 private:
  std::string RandomDir() { return root_ + "/" + kDirNames[rng_() % kDirs]; }
  std::string RandomPath() { return RandomDir() + "/n" + std::to_string(rng_() % kNames); }

  void Step(const std::string& buf) {
    std::string p = RandomPath();
    switch (rng_() % 11) {
      case 0:
      case 1: {  // create or overwrite with data
        int fd = open(p.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        Check(fd >= 0, "create", p);
        if (fd < 0) return;
        size_t n = rng_() % kMaxWriteBytes;
        Check(write(fd, buf.data(), n) == static_cast<ssize_t>(n), "write", p);
        Check(close(fd) == 0, "close", p);
        return;
      }
      case 2: {  // write in the middle
        int fd = open(p.c_str(), O_WRONLY);
        Check(fd >= 0, "open", p);
        if (fd < 0) return;
        size_t n = rng_() % 70000;
        off_t off = static_cast<off_t>(rng_() % 500000);
        Check(pwrite(fd, buf.data(), n, off) == static_cast<ssize_t>(n), "pwrite", p);
        if (rng_() % 8 == 0) Check(fsync(fd) == 0, "fsync", p);
        Check(close(fd) == 0, "close", p);
        return;
      }
      case 3: {  // read back whatever is there
        int fd = open(p.c_str(), O_RDONLY);
        Check(fd >= 0, "open", p);
        if (fd < 0) return;
        std::string in(65536, '\0');
        Check(pread(fd, in.data(), in.size(), static_cast<off_t>(rng_() % 200000)) >= 0, "pread", p);
        Check(close(fd) == 0, "close", p);
        return;
      }
      case 4:
      case 5: {
        std::string q = RandomPath();
        Check(rename(p.c_str(), q.c_str()) == 0, "rename", p + " -> " + q);
        return;
      }
      case 6: {
        std::string q = RandomPath();
        Check(link(p.c_str(), q.c_str()) == 0 || errno == EPERM, "link", p + " -> " + q);
        return;
      }
      case 7:
        Check(unlink(p.c_str()) == 0 || errno == EPERM || errno == EISDIR, "unlink", p);
        return;
      case 8:
        Check(truncate(p.c_str(), static_cast<off_t>(rng_() % 400000)) == 0, "truncate", p);
        return;
      case 9:
        if (rng_() % 2) {
          Check(mkdir(p.c_str(), 0755) == 0, "mkdir", p);
        } else {
          Check(rmdir(p.c_str()) == 0, "rmdir", p);
        }
        return;
      default:
        Check(symlink("n1", p.c_str()) == 0, "symlink", p);
        return;
    }
  }

  std::string root_;
  std::mt19937_64 rng_;
};

struct WalkState {
  std::map<ino_t, nlink_t> reported;  // lstat's link count per inode
  std::map<ino_t, nlink_t> counted;   // names (and subdirectories) found
  std::map<ino_t, std::string> some_path;
};

// Counts, for every inode under `dir`, the names that point to it; a
// directory's count is 2 plus its subdirectories (their "..").
bool Walk(const std::string& dir, ino_t dir_ino, WalkState* s) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    std::fprintf(stderr, "opendir %s: %s\n", dir.c_str(), std::strerror(errno));
    return false;
  }
  bool ok = true;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      std::fprintf(stderr, "lstat %s: %s\n", path.c_str(), std::strerror(errno));
      ok = false;
      continue;
    }
    s->reported[st.st_ino] = st.st_nlink;
    s->some_path[st.st_ino] = path;
    if (S_ISDIR(st.st_mode)) {
      s->counted[st.st_ino] += 2;
      s->counted[dir_ino] += 1;
      ok = Walk(path, st.st_ino, s) && ok;
    } else {
      s->counted[st.st_ino] += 1;
    }
  }
  closedir(d);
  return ok;
}

bool CheckLinkCounts(const std::string& root) {
  WalkState s;
  struct stat st;
  if (lstat(root.c_str(), &st) != 0) return false;
  bool ok = Walk(root, st.st_ino, &s);
  // The root's own count includes its parent's entry; check only below it.
  s.counted.erase(st.st_ino);
  int bad = 0;
  for (const auto& [ino, n] : s.counted) {
    if (s.reported[ino] != n) {
      std::fprintf(stderr, "link count of %s is %lu, %lu names found\n", s.some_path[ino].c_str(),
                   static_cast<unsigned long>(s.reported[ino]), static_cast<unsigned long>(n));
      ++bad;
    }
  }
  std::printf("checked link counts of %zu inodes: %d wrong\n", s.counted.size(), bad);
  return ok && bad == 0;
}

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "pail_fuse_stress: %s\nusage: pail_fuse_stress --dir D [--threads N] [--seconds S] "
               "[--seed N]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) Usage("missing value");
    std::string v = argv[++i];
    if (a == "--dir") {
      o.dir = v;
    } else if (a == "--threads") {
      o.threads = std::atoi(v.c_str());
    } else if (a == "--seconds") {
      o.seconds = std::atoi(v.c_str());
    } else if (a == "--seed") {
      o.seed = std::strtoull(v.c_str(), nullptr, 10);
    } else {
      Usage("unknown argument");
    }
  }
  if (o.dir.empty() || o.threads < 1 || o.threads > 64 || o.seconds < 1 || o.seconds > 3600)
    Usage("need --dir, 1..64 threads, 1..3600 seconds");

  o.dir += "/stress";
  if (mkdir(o.dir.c_str(), 0755) != 0) {
    std::fprintf(stderr, "mkdir %s: %s\n", o.dir.c_str(), std::strerror(errno));
    return 1;
  }
  for (const char* d : kDirNames) {
    std::string p = o.dir + "/" + d;
    if (mkdir(p.c_str(), 0755) != 0) {
      std::fprintf(stderr, "mkdir %s: %s\n", p.c_str(), std::strerror(errno));
      return 1;
    }
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&o, t, deadline] { Worker(o, t).Run(deadline); });
  }
  for (auto& t : threads) t.join();
  std::printf("%lu operations, %lu race errors, %lu unexpected errors\n",
              static_cast<unsigned long>(g_ops.load()),
              static_cast<unsigned long>(g_expected_errors.load()),
              static_cast<unsigned long>(g_unexpected_errors.load()));
  bool links_ok = CheckLinkCounts(o.dir);
  return g_unexpected_errors.load() == 0 && links_ok && g_ops.load() > 0 ? 0 : 1;
}
