// bigdir_bench: one directory with very many entries, on any directory (a
// pailfs FUSE mount, a local directory), for bench/scale_bench.sh.
//
//   bigdir_bench create --dir D --files N [--dirs K] [--block B] [--processes P]
//   bigdir_bench stat --dir D --files N [--dirs K] --samples K [--seed S]
//
// create: makes the empty files D/f000000000 .. in order, B (default
// 100000) at a time; each block is split between P processes (default 4)
// that create their slices at once, and the block's rate (files/s over
// its wall time) is printed, so the rate of the last block can be set
// beside the first. With --dirs K the files are spread over K directories
// D/d00000 .. (made first, timed apart), N/K to each, filled one after
// another. stat: K stat() calls on names drawn at random from the first N
// (every one must exist); prints the mean and p99 latency.
// Prints numbers only; exit 1 when an operation fails.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string mode;
  std::string dir;
  long files = 0;
  long dirs = 0;  // 0: every file in --dir itself
  long block = 100000;
  int processes = 4;
  long samples = 0;
  unsigned seed = 42;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "bigdir_bench: %s\n"
               "usage: bigdir_bench create --dir D --files N [--dirs K] [--block B] [--processes P]\n"
               "       bigdir_bench stat --dir D --files N [--dirs K] --samples K [--seed S]\n",
               why);
  std::exit(2);
}

long Positive(const char* s, const char* flag) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v <= 0 || v > 1000000000L) {
    std::fprintf(stderr, "bigdir_bench: bad value for %s\n", flag);
    std::exit(2);
  }
  return v;
}

long FilesPerDir(const Options& o) { return (o.files + o.dirs - 1) / o.dirs; }

std::string DirName(const Options& o, long d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "/d%05ld", d);
  return o.dir + buf;
}

std::string Name(const Options& o, long i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "/f%09ld", i);
  return (o.dirs > 0 ? DirName(o, i / FilesPerDir(o)) : o.dir) + buf;
}

// Creates [from, to); exits the child with 1 on the first failure.
void CreateRange(const Options& o, long from, long to) {
  for (long i = from; i < to; ++i) {
    std::string path = Name(o, i);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 || close(fd) != 0) {
      std::fprintf(stderr, "bigdir_bench: create %s: %s\n", path.c_str(), std::strerror(errno));
      _exit(1);
    }
  }
  _exit(0);
}

int Create(const Options& o) {
  if (o.dirs > 0) {
    Clock::time_point t0 = Clock::now();
    for (long d = 0; d < o.dirs; ++d) {
      if (mkdir(DirName(o, d).c_str(), 0755) != 0) {
        std::fprintf(stderr, "bigdir_bench: mkdir %s: %s\n", DirName(o, d).c_str(),
                     std::strerror(errno));
        return 1;
      }
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("%ld directories made in %.2f s (%.1f/s), %ld files each\n", o.dirs, s,
                static_cast<double>(o.dirs) / s, FilesPerDir(o));
  }
  std::printf("%-24s %12s %10s\n", "files", "files/s", "seconds");
  double first_rate = 0, last_rate = 0;
  for (long start = 0; start < o.files; start += o.block) {
    long end = std::min(o.files, start + o.block);
    long per = (end - start + o.processes - 1) / o.processes;
    Clock::time_point t0 = Clock::now();
    std::vector<pid_t> children;
    for (int p = 0; p < o.processes; ++p) {
      long from = start + per * p, to = std::min(end, from + per);
      if (from >= to) break;
      std::fflush(stdout);
      pid_t pid = fork();
      if (pid < 0) {
        std::perror("bigdir_bench: fork");
        return 1;
      }
      if (pid == 0) CreateRange(o, from, to);
      children.push_back(pid);
    }
    bool ok = true;
    for (pid_t pid : children) {
      int status = 0;
      ok &= waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    if (!ok) return 1;
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    double rate = static_cast<double>(end - start) / s;
    if (start == 0) first_rate = rate;
    last_rate = rate;
    char range[48];
    std::snprintf(range, sizeof range, "%ld-%ld", start, end);
    std::printf("%-24s %12.1f %10.2f\n", range, rate, s);
    std::fflush(stdout);
  }
  std::printf("first block %.1f files/s, last block %.1f files/s, last / first %.2f\n", first_rate,
              last_rate, first_rate > 0 ? last_rate / first_rate : 0.0);
  return 0;
}

int Stat(const Options& o) {
  std::mt19937_64 rng(o.seed);
  std::vector<double> us;
  us.reserve(static_cast<size_t>(o.samples));
  for (long k = 0; k < o.samples; ++k) {
    std::string path = Name(o, static_cast<long>(rng() % static_cast<uint64_t>(o.files)));
    struct stat st;
    Clock::time_point t0 = Clock::now();
    if (stat(path.c_str(), &st) != 0) {
      std::fprintf(stderr, "bigdir_bench: stat %s: %s\n", path.c_str(), std::strerror(errno));
      return 1;
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  std::printf("stat: %ld random files, mean %.1f us, p50 %.1f us, p99 %.1f us\n", o.samples,
              sum / static_cast<double>(us.size()), us[us.size() / 2],
              us[std::min(us.size() - 1, us.size() * 99 / 100)]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) Usage("missing mode");
  Options o;
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) Usage("missing value");
    const char* v = argv[++i];
    if (a == "--dir") {
      o.dir = v;
    } else if (a == "--files") {
      o.files = Positive(v, "--files");
    } else if (a == "--dirs") {
      o.dirs = std::min(Positive(v, "--dirs"), 100000L);
    } else if (a == "--block") {
      o.block = Positive(v, "--block");
    } else if (a == "--processes") {
      o.processes = static_cast<int>(std::min(Positive(v, "--processes"), 256L));
    } else if (a == "--samples") {
      o.samples = Positive(v, "--samples");
    } else if (a == "--seed") {
      o.seed = static_cast<unsigned>(Positive(v, "--seed"));
    } else {
      Usage("unknown argument");
    }
  }
  if (o.dir.empty() || o.files == 0) Usage("--dir and --files are required");
  if (o.mode == "create") return Create(o);
  if (o.mode == "stat") {
    if (o.samples == 0) Usage("stat needs --samples");
    return Stat(o);
  }
  Usage("mode is create or stat");
}
