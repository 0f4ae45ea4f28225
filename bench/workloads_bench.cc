// workloads_bench: the ten workloads of the reference bench suite, on any
// directory (a pailfs FUSE mount, a local directory, another FUSE file
// system), so the same run compares them.
//
//   workloads_bench --dir D [--ops N] [--size BYTES] [--only name[,name]]
//                   [--processes P] [--around CMD]
//
// Each workload gets a fresh subdirectory of D and an untimed setup, then
// runs N operations one after another, timing each one alone, and finally
// calls sync(). ops/s counts successful operations over the loop plus that
// final sync(); latencies (mean, p50, p99) cover the operations only. The
// work directory is removed afterwards (untimed).
//
// With --processes P, P forked processes run each workload at once, each in
// a directory of its own with its own setup and N operations; they start
// the timed loop together (after every setup is done), and ops/s is the
// aggregate: all successful operations over the time from that start until
// the last process has finished its loop and sync(). Latencies are over
// every process's operations.
//
// With --around CMD, `CMD start WORKLOAD` runs (through the shell) right
// before a workload's timed loop begins and `CMD end WORKLOAD` right after it
// ends, outside the timing; e.g. to read a server's request counters for the
// timed part alone.
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "workloads_shape.h"

namespace {

using workloads::Name6;

using Clock = std::chrono::steady_clock;

struct Options {
  std::string dir;
  int ops = 10000;
  size_t size = 4096;
  int processes = 1;
  std::set<std::string> only;
  std::string around;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "workloads_bench: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

// Returns false (errno set) on any failure, the way each timed op reports.
bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadExact(int fd, char* data, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, data, n);
    if (r <= 0) {
      if (r == 0) errno = EIO;  // short file
      return false;
    }
    data += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool CreateWithContent(const std::string& path, const std::string& content) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0) return false;
  bool ok = WriteAll(fd, content.data(), content.size());
  int saved = errno;
  if (close(fd) != 0 && ok) return false;
  errno = saved;
  return ok;
}

void MustCreate(const std::string& path, const std::string& content) {
  if (!CreateWithContent(path, content)) Die("setup: create " + path);
}

void MustMkdir(const std::string& path) {
  if (mkdir(path.c_str(), 0777) != 0) Die("setup: mkdir " + path);
}

int RemoveOne(const char* path, const struct stat*, int, struct FTW*) {
  remove(path);
  return 0;
}

void RemoveTree(const std::string& path) { nftw(path.c_str(), RemoveOne, 32, FTW_DEPTH | FTW_PHYS); }

// One full recursive listing with a stat of every entry; false on error.
bool Walk(const std::string& dir, size_t* entries) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool ok = true;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    std::string path = dir + "/" + e->d_name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      ok = false;
      break;
    }
    ++*entries;
    if (S_ISDIR(st.st_mode) && !Walk(path, entries)) {
      ok = false;
      break;
    }
  }
  int saved = errno;
  closedir(d);
  errno = saved;
  return ok;
}

void BuildTree(const std::string& dir, int depth) {
  for (int j = 0; j < workloads::kFilesPerDir; ++j) {
    MustCreate(dir + "/" + workloads::TreeFileName(j), workloads::TreeFileContent(j, depth));
  }
  if (depth == workloads::kTreeDepth) return;
  for (int i = 0; i < workloads::kTreeFanout; ++i) {
    std::string sub = dir + "/" + workloads::TreeDirName(depth, i);
    MustMkdir(sub);
    BuildTree(sub, depth + 1);
  }
}

// Runs `o.around PHASE WORKLOAD` when --around was given.
void RunAround(const Options& o, const char* phase, const char* workload) {
  if (o.around.empty()) return;
  std::fflush(stdout);
  std::string cmd = o.around + " " + phase + " " + workload;
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::fprintf(stderr, "workloads_bench: --around command `%s` failed (%d)\n", cmd.c_str(), rc);
    std::exit(1);
  }
}

struct Workload {
  const char* name;
  // Untimed preparation in the workload's own directory; returns the
  // timed operation for op index i, which returns false (errno set) on failure.
  std::function<std::function<bool(int)>(const std::string& dir, const Options& o)> prepare;
};

std::vector<Workload> AllWorkloads() {
  return {
      {"sequential-writes",
       [](const std::string& dir, const Options& o) -> std::function<bool(int)> {
         auto data = std::make_shared<std::string>(workloads::SequentialData(o.size));
         return [dir, data](int i) {
           return CreateWithContent(dir + "/" + Name6("file_", i, ".dat"), *data);
         };
       }},
      {"data-modifications",
       [](const std::string& dir, const Options& o) -> std::function<bool(int)> {
         std::string path = dir + "/data.dat";
         MustCreate(path, std::string(o.size * workloads::kModifyFileBlocks, 'd'));
         auto rng = std::make_shared<std::mt19937_64>(workloads::kRandomSeed);
         auto patch = std::make_shared<std::string>(workloads::ModifyPatch(*rng, o.size));
         size_t span = o.size * (workloads::kModifyFileBlocks - 1);
         return [path, rng, patch, span](int) {
           off_t offset = static_cast<off_t>((*rng)() % span);
           int fd = open(path.c_str(), O_WRONLY);
           if (fd < 0) return false;
           bool ok = lseek(fd, offset, SEEK_SET) == offset && WriteAll(fd, patch->data(), patch->size());
           return close(fd) == 0 && ok;
         };
       }},
      {"single-file-append",
       [](const std::string& dir, const Options& o) -> std::function<bool(int)> {
         std::string path = dir + "/append.dat";
         MustCreate(path, "");
         auto data = std::make_shared<std::string>(o.size, 'a');
         return [path, data](int) {
           int fd = open(path.c_str(), O_WRONLY | O_APPEND);
           if (fd < 0) return false;
           bool ok = WriteAll(fd, data->data(), data->size());
           return close(fd) == 0 && ok;
         };
       }},
      {"empty-files",
       [](const std::string& dir, const Options&) -> std::function<bool(int)> {
         return [dir](int i) {
           int fd = open((dir + "/" + Name6("empty_", i, ".txt")).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
           return fd >= 0 && close(fd) == 0;
         };
       }},
      {"empty-dirs",
       [](const std::string& dir, const Options&) -> std::function<bool(int)> {
         return [dir](int i) { return mkdir((dir + "/" + Name6("dir_", i, "")).c_str(), 0777) == 0; };
       }},
      {"random-reads",
       [](const std::string& dir, const Options& o) -> std::function<bool(int)> {
         std::string path = dir + "/data.dat";
         MustCreate(path, workloads::RandomReadFile(o.size));
         auto rng = std::make_shared<std::mt19937_64>(workloads::kRandomSeed);
         auto buf = std::make_shared<std::string>(o.size, '\0');
         size_t span = o.size * (workloads::kReadFileBlocks - 1);
         return [path, rng, buf, span](int) {
           off_t offset = static_cast<off_t>((*rng)() % span);
           int fd = open(path.c_str(), O_RDONLY);
           if (fd < 0) return false;
           bool ok = lseek(fd, offset, SEEK_SET) == offset && ReadExact(fd, buf->data(), buf->size());
           return close(fd) == 0 && ok;
         };
       }},
      {"file-moves",
       [](const std::string& dir, const Options& o) -> std::function<bool(int)> {
         MustMkdir(dir + "/src");
         MustMkdir(dir + "/dst");
         std::string data(o.size, 'm');
         for (int i = 0; i < o.ops; ++i) MustCreate(dir + "/src/" + Name6("file_", i, ".dat"), data);
         return [dir](int i) {
           std::string name = Name6("file_", i, ".dat");
           return rename((dir + "/src/" + name).c_str(), (dir + "/dst/" + name).c_str()) == 0;
         };
       }},
      {"file-deletion",
       [](const std::string& dir, const Options& o) -> std::function<bool(int)> {
         std::string data(o.size, 'x');
         for (int i = 0; i < o.ops; ++i) MustCreate(dir + "/" + Name6("file_", i, ".dat"), data);
         return [dir](int i) { return unlink((dir + "/" + Name6("file_", i, ".dat")).c_str()) == 0; };
       }},
      {"directory-traversal",
       [](const std::string& dir, const Options&) -> std::function<bool(int)> {
         BuildTree(dir, 0);
         return [dir](int) {
           size_t entries = 0;
           return Walk(dir, &entries);
         };
       }},
      {"metadata-ops",
       [](const std::string& dir, const Options&) -> std::function<bool(int)> {
         auto paths = std::make_shared<std::vector<std::string>>();
         for (int i = 0; i < workloads::kMetadataFiles; ++i) {
           paths->push_back(dir + "/" + workloads::MetadataFileName(i));
           MustCreate(paths->back(), std::string(workloads::MetadataFileSize(i), 'z'));
         }
         return [paths](int i) {
           struct stat st;
           if (stat((*paths)[static_cast<size_t>(i) % paths->size()].c_str(), &st) != 0) return false;
           // Read the fields the reference reads: length, type, mtime.
           volatile bool used = st.st_size > 0 && S_ISREG(st.st_mode) && st.st_mtim.tv_sec > 0;
           (void)used;
           return true;
         };
       }},
  };
}

struct Result {
  int ok_ops = 0;
  int failed_ops = 0;
  int first_errno = 0;  // of the first failed operation
  double seconds = 0;  // loop + final sync
  std::vector<double> latencies_us;
};

// The timed loop of one process: N operations, then sync().
void TimedLoop(const std::function<bool(int)>& op, const Options& o, Result* r) {
  r->latencies_us.reserve(static_cast<size_t>(o.ops));
  for (int i = 0; i < o.ops; ++i) {
    Clock::time_point t0 = Clock::now();
    bool ok = op(i);
    Clock::time_point t1 = Clock::now();
    if (ok) {
      ++r->ok_ops;
      r->latencies_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    } else {
      ++r->failed_ops;
      if (r->first_errno == 0) r->first_errno = errno;
    }
  }
  sync();
}

Result Run(const Workload& w, const std::string& dir, const Options& o) {
  std::function<bool(int)> op = w.prepare(dir, o);
  sync();  // setup's dirty data must not be charged to the timed run
  Result r;
  RunAround(o, "start", w.name);
  Clock::time_point start = Clock::now();
  TimedLoop(op, o, &r);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  RunAround(o, "end", w.name);
  return r;
}

// What a child of RunProcesses leaves in shared memory: counts, the first
// error's errno, then `ops` latencies.
struct ChildReport {
  int ok_ops;
  int failed_ops;
  int first_errno;
  double latencies_us[1];  // really `ops` entries
};

size_t ChildReportBytes(const Options& o) {
  return sizeof(ChildReport) + sizeof(double) * static_cast<size_t>(o.ops);
}

// --processes: every child prepares its own directory dir/pN, reports ready
// on one pipe, waits for a byte on another, runs the loop and exits.
Result RunProcesses(const Workload& w, const std::string& dir, const Options& o) {
  const size_t stride = ChildReportBytes(o);
  const size_t total = stride * static_cast<size_t>(o.processes);
  void* shared = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) Die("mmap");
  auto report = [&](int p) {
    return reinterpret_cast<ChildReport*>(static_cast<char*>(shared) + stride * static_cast<size_t>(p));
  };
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) Die("pipe");
  std::fflush(stdout);
  std::vector<pid_t> children;
  for (int p = 0; p < o.processes; ++p) {
    pid_t pid = fork();
    if (pid < 0) Die("fork");
    if (pid == 0) {
      close(ready[0]);
      close(go[1]);
      std::string mine = dir + "/p" + std::to_string(p);
      MustMkdir(mine);
      std::function<bool(int)> op = w.prepare(mine, o);
      sync();
      char byte = 'r';
      char start;
      if (write(ready[1], &byte, 1) != 1 || read(go[0], &start, 1) != 1) _exit(3);
      Result r;
      TimedLoop(op, o, &r);
      ChildReport* out = report(p);
      out->ok_ops = r.ok_ops;
      out->failed_ops = r.failed_ops;
      out->first_errno = r.first_errno;
      std::copy(r.latencies_us.begin(), r.latencies_us.end(), out->latencies_us);
      _exit(0);
    }
    children.push_back(pid);
  }
  close(ready[1]);
  close(go[0]);
  for (int p = 0; p < o.processes; ++p) {
    char byte;
    if (read(ready[0], &byte, 1) != 1) Die("a child failed its setup");
  }
  RunAround(o, "start", w.name);
  Clock::time_point start = Clock::now();
  std::string bytes(static_cast<size_t>(o.processes), 'g');
  if (write(go[1], bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) Die("go pipe");
  Result r;
  for (pid_t pid : children) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      errno = ECHILD;
      Die("a workload process failed");
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  RunAround(o, "end", w.name);
  close(ready[0]);
  close(go[1]);
  for (int p = 0; p < o.processes; ++p) {
    const ChildReport* c = report(p);
    r.ok_ops += c->ok_ops;
    r.failed_ops += c->failed_ops;
    if (r.first_errno == 0) r.first_errno = c->first_errno;
    r.latencies_us.insert(r.latencies_us.end(), c->latencies_us, c->latencies_us + c->ok_ops);
  }
  munmap(shared, total);
  return r;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  CLI::App app("workloads_bench: the ten small-file workloads in a directory, ops/s of each");
  app.add_option("--dir", o.dir, "the directory to work in (on the filesystem measured)")->required();
  app.add_option("--ops", o.ops, "timed operations per workload and process")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--size", o.size, "bytes per file or write")->check(CLI::Range(1, 100000000));
  app.add_option("--processes", o.processes, "processes running each workload at once")
      ->check(CLI::Range(1, 1024));
  workloads::ParseCommandLine(app, argc, argv, &o.around, &o.only);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  struct statfs sf;
  if (statfs(o.dir.c_str(), &sf) != 0) Die("statfs " + o.dir);
  std::string work = o.dir + "/workloads_bench." + std::to_string(getpid());
  MustMkdir(work);
  std::printf("dir %s (fs type 0x%lx), %d ops of %zu bytes per workload", o.dir.c_str(),
              static_cast<unsigned long>(sf.f_type), o.ops, o.size);
  if (o.processes > 1) std::printf(" and process, %d processes at once (aggregate ops/s)", o.processes);
  std::printf("\n");
  std::printf("%-20s %8s %10s %10s %10s %10s %7s\n", "workload", "ops", "ops/s", "mean_us",
              "p50_us", "p99_us", "errors");
  int total_failed = 0;
  for (const Workload& w : AllWorkloads()) {
    if (!o.only.empty() && !o.only.count(w.name)) continue;
    std::string dir = work + "/" + w.name;
    MustMkdir(dir);
    Result r = o.processes > 1 ? RunProcesses(w, dir, o) : Run(w, dir, o);
    std::vector<double>& lat = r.latencies_us;
    std::sort(lat.begin(), lat.end());
    double sum = 0;
    for (double v : lat) sum += v;
    double mean = lat.empty() ? 0 : sum / static_cast<double>(lat.size());
    std::printf("%-20s %8d %10.1f %10.1f %10.1f %10.1f %7d%s%s\n", w.name, r.ok_ops,
                r.seconds > 0 ? r.ok_ops / r.seconds : 0.0, mean, workloads::Percentile(lat, 0.50),
                workloads::Percentile(lat, 0.99), r.failed_ops, r.first_errno == 0 ? "" : "  first error: ",
                r.first_errno == 0 ? "" : std::strerror(r.first_errno));
    std::fflush(stdout);
    total_failed += r.failed_ops;
    RemoveTree(dir);
  }
  RemoveTree(work);
  return total_failed == 0 ? 0 : 1;
}
