// data_io_bench: the I/O helpers of bench/data_path_bench.sh, each a mode.
//
//   data_io_bench fill FILE --bytes N [--seed S] [--no-fsync] [--no-truncate]
//       Writes N bytes of incompressible pseudo-random data from offset 0 in
//       1 MiB write()s, then fsync()s (before the clock stops). Much faster
//       than /dev/urandom, so it never limits the file system under test.
//       --no-truncate overwrites in place (dd conv=notrunc): the rest of an
//       existing file stays.
//   data_io_bench randread FILE [--threads 8] [--reads N] [--seconds S]
//                          [--block 4096] [--seed S]
//       Random block-aligned pread()s of --block bytes from --threads
//       threads (each with its own descriptor, advised POSIX_FADV_RANDOM so
//       the kernel adds no read-ahead), until --reads in total are done or
//       --seconds have passed.
//   data_io_bench s3-randget s3://BUCKET/KEY [same options as randread]
//       The same pattern as ranged GETs of one object through pail's S3
//       client (one connection per thread, reused); credentials and endpoint
//       from S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION, S3_ENDPOINT (else the
//       AWS_* variables).
//   data_io_bench evict PATH...
//       Drops the clean page-cache pages of each file (directories are
//       walked) with POSIX_FADV_DONTNEED, so the next read is cold. Only the
//       named files are touched, never the whole machine's cache.
//
// Every mode prints one line of key=value pairs for the script to parse
// (rates in decimal MB/s and reads/s). A benchmark helper: it measures and
// never judges; the exit status is nonzero only when it could not run
// (bad usage, an I/O error).
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "objstore/s3_store.h"

namespace {

using Clock = std::chrono::steady_clock;

// fill writes in pieces of this size, as `dd bs=1M` would.
constexpr size_t kFillChunk = 1 << 20;

struct Options {
  std::string mode;
  std::vector<std::string> paths;
  uint64_t bytes = 0;
  uint64_t seed = 1;
  bool fsync = true;
  bool truncate = true;
  int threads = 8;
  uint64_t reads = 8000;
  double seconds = 60;
  uint64_t block = 4096;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "data_io_bench: %s\n"
               "usage: data_io_bench fill FILE --bytes N [--seed S] [--no-fsync] [--no-truncate]\n"
               "       data_io_bench randread FILE [--threads T] [--reads N] [--seconds S] "
               "[--block B] [--seed S]\n"
               "       data_io_bench s3-randget s3://BUCKET/KEY [--threads T] [--reads N] "
               "[--seconds S] [--block B] [--seed S]\n"
               "       data_io_bench evict PATH...\n",
               why.c_str());
  std::exit(2);
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "data_io_bench: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

uint64_t ParseNumber(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0) {
    Usage("bad value for " + flag + ": " + text);
  }
  return v;
}

Options ParseArgs(int argc, char** argv) {
  if (argc < 2) Usage("no mode given");
  Options o;
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage("missing value for " + a);
      return argv[++i];
    };
    if (a == "--bytes") {
      o.bytes = ParseNumber(value(), a);
    } else if (a == "--seed") {
      o.seed = ParseNumber(value(), a);
    } else if (a == "--no-fsync") {
      o.fsync = false;
    } else if (a == "--no-truncate") {
      o.truncate = false;
    } else if (a == "--threads") {
      uint64_t t = ParseNumber(value(), a);
      if (t == 0 || t > 1024) Usage("--threads must be 1..1024");
      o.threads = static_cast<int>(t);
    } else if (a == "--reads") {
      o.reads = ParseNumber(value(), a);
      if (o.reads == 0) Usage("--reads must be positive");
    } else if (a == "--seconds") {
      o.seconds = static_cast<double>(ParseNumber(value(), a));
      if (o.seconds <= 0) Usage("--seconds must be positive");
    } else if (a == "--block") {
      o.block = ParseNumber(value(), a);
      if (o.block == 0 || o.block > (64u << 20)) Usage("--block must be 1..64 MiB");
    } else if (a.size() > 1 && a[0] == '-') {
      Usage("unknown option " + a);
    } else {
      o.paths.push_back(a);
    }
  }
  return o;
}

// splitmix64: a fast generator whose output zstd cannot compress, which is
// all the benchmark needs of "random" data.
struct SplitMix {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int Fill(const Options& o) {
  if (o.paths.size() != 1) Usage("fill takes one FILE");
  if (o.bytes == 0) Usage("fill needs --bytes");
  int fd = open(o.paths[0].c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (o.truncate ? O_TRUNC : 0),
                0644);
  if (fd < 0) Die("open " + o.paths[0]);
  std::vector<uint64_t> words(kFillChunk / sizeof(uint64_t));
  SplitMix rng{o.seed};
  auto start = Clock::now();
  uint64_t left = o.bytes;
  while (left > 0) {
    for (uint64_t& w : words) w = rng.Next();
    size_t n = static_cast<size_t>(std::min<uint64_t>(left, kFillChunk));
    const char* p = reinterpret_cast<const char*>(words.data());
    size_t done = 0;
    while (done < n) {
      ssize_t w = write(fd, p + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) Die("write " + o.paths[0]);
      done += static_cast<size_t>(w);
    }
    left -= n;
  }
  if (o.fsync && fsync(fd) != 0) Die("fsync " + o.paths[0]);
  double seconds = SecondsSince(start);
  if (close(fd) != 0) Die("close " + o.paths[0]);
  std::printf("bytes=%llu seconds=%.3f mb_per_s=%.1f\n", static_cast<unsigned long long>(o.bytes),
              seconds, static_cast<double>(o.bytes) / 1e6 / seconds);
  return 0;
}

// Runs `read_one(thread, offset)` from o.threads threads over `size` bytes
// until o.reads are done or o.seconds pass; prints the rate. read_one
// returns false on a failed or short read.
int RandomReads(const Options& o, uint64_t size,
                const std::function<bool(int thread, uint64_t offset)>& read_one) {
  const uint64_t blocks = size / o.block;
  if (blocks == 0) {
    std::fprintf(stderr, "data_io_bench: the target (%llu bytes) is smaller than one block\n",
                 static_cast<unsigned long long>(size));
    return 1;
  }
  std::atomic<uint64_t> claimed{0}, done{0}, failed{0};
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      SplitMix rng{o.seed * 1000003 + static_cast<uint64_t>(t)};
      while (claimed.fetch_add(1) < o.reads && Clock::now() < deadline) {
        uint64_t offset = rng.Next() % blocks * o.block;
        if (read_one(t, offset)) {
          done.fetch_add(1);
        } else {
          failed.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  double seconds = SecondsSince(start);
  std::printf("reads=%llu failed=%llu seconds=%.3f reads_per_s=%.1f threads=%d block=%llu\n",
              static_cast<unsigned long long>(done.load()),
              static_cast<unsigned long long>(failed.load()), seconds,
              static_cast<double>(done.load()) / seconds, o.threads,
              static_cast<unsigned long long>(o.block));
  return failed.load() == 0 ? 0 : 1;
}

int RandRead(const Options& o) {
  if (o.paths.size() != 1) Usage("randread takes one FILE");
  const std::string& path = o.paths[0];
  std::vector<int> fds;
  for (int t = 0; t < o.threads; ++t) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Die("open " + path);
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    fds.push_back(fd);
  }
  struct stat st;
  if (fstat(fds[0], &st) != 0) Die("stat " + path);
  std::vector<std::vector<char>> buffers(static_cast<size_t>(o.threads),
                                         std::vector<char>(o.block));
  int rc = RandomReads(o, static_cast<uint64_t>(st.st_size), [&](int t, uint64_t offset) {
    char* buf = buffers[static_cast<size_t>(t)].data();
    ssize_t r;
    do {
      r = pread(fds[static_cast<size_t>(t)], buf, o.block, static_cast<off_t>(offset));
    } while (r < 0 && errno == EINTR);
    return r == static_cast<ssize_t>(o.block);
  });
  for (int fd : fds) close(fd);
  return rc;
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  if (v != nullptr && *v != '\0') return v;
  v = fallback != nullptr ? std::getenv(fallback) : nullptr;
  return v != nullptr ? v : "";
}

int S3RandGet(const Options& o) {
  if (o.paths.size() != 1) Usage("s3-randget takes one s3://BUCKET/KEY");
  const std::string& url = o.paths[0];
  const std::string scheme = "s3://";
  size_t slash = url.find('/', scheme.size());
  if (url.compare(0, scheme.size(), scheme) != 0 || slash == std::string::npos ||
      slash + 1 == url.size()) {
    Usage("not an s3://BUCKET/KEY url: " + url);
  }
  const std::string bucket_url = url.substr(0, slash);
  const std::string key = url.substr(slash + 1);
  pail::AwsOptions options;
  options.access_key_id = Env("S3_ACCESS_KEY", "AWS_ACCESS_KEY_ID");
  options.secret_access_key = Env("S3_SECRET_KEY", "AWS_SECRET_ACCESS_KEY");
  options.region = Env("S3_REGION", "AWS_REGION");
  options.endpoint = Env("S3_ENDPOINT", "AWS_ENDPOINT_URL");
  options.allow_http = options.endpoint.rfind("http://", 0) == 0;
  options.path_style = !options.endpoint.empty();
  auto store = pail::S3Store::Open(bucket_url, options);
  if (!store.ok()) {
    std::fprintf(stderr, "data_io_bench: %s\n", store.status().ToString().c_str());
    return 1;
  }
  auto meta = (*store)->Head(key);
  if (!meta.ok()) {
    std::fprintf(stderr, "data_io_bench: %s\n", meta.status().ToString().c_str());
    return 1;
  }
  pail::S3Store& s3 = **store;
  return RandomReads(o, meta->size, [&](int, uint64_t offset) {
    auto got = s3.GetRange(key, offset, o.block);
    return got.ok() && got->size() == o.block;
  });
}

uint64_t evicted_files = 0;

int EvictOne(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type != FTW_F || !S_ISREG(st->st_mode)) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return 0;  // gone meanwhile, or unreadable: nothing cached to drop
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  ++evicted_files;
  return 0;
}

int Evict(const Options& o) {
  if (o.paths.empty()) Usage("evict takes at least one PATH");
  for (const std::string& path : o.paths) {
    if (nftw(path.c_str(), EvictOne, 64, FTW_PHYS) != 0) Die("walk " + path);
  }
  std::printf("files=%llu\n", static_cast<unsigned long long>(evicted_files));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  if (o.mode == "fill") return Fill(o);
  if (o.mode == "randread") return RandRead(o);
  if (o.mode == "s3-randget") return S3RandGet(o);
  if (o.mode == "evict") return Evict(o);
  Usage("unknown mode " + o.mode);
}
