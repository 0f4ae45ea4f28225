// block_io_bench: nbd_bench's four workloads (block_workloads.h) on a block
// device, for a kernel client (bench/nbd_vm_job.sh runs it on /dev/nbdN in
// the test VM); fsync, the client's FLUSH, closes the writes. All with
// O_DIRECT, so every request reaches the server; --depth threads keep that
// many requests in flight. Prints one line per workload; never fails on the
// numbers.
//
//   block_io_bench DEVICE [--seq-mib 256] [--random-ops 16384] [--depth 16]
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "block_workloads.h"

namespace {

using block_workloads::kMiB;
constexpr size_t kAlign = 4096;  // O_DIRECT buffers

struct Run {
  double seconds = 0;
  uint64_t ops = 0;
  size_t block = 0;
  uint64_t errors = 0;
};

// `ops` requests of `block` bytes from `depth` threads, request i at
// offset(i); writes end with an fsync, inside the time.
Run Execute(int fd, bool write, uint64_t ops, size_t block, unsigned depth,
            const std::function<uint64_t(uint64_t)>& offset, const block_workloads::Workloads& w) {
  std::atomic<uint64_t> next{0}, errors{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < depth; ++t) {
    threads.emplace_back([&] {
      void* buffer = nullptr;
      if (posix_memalign(&buffer, kAlign, block) != 0) {
        errors++;
        return;
      }
      for (uint64_t i; (i = next.fetch_add(1)) < ops;) {
        ssize_t n;
        if (write) {
          std::memcpy(buffer, w.WriteData(i, block).data(), block);
          n = pwrite(fd, buffer, block, static_cast<off_t>(offset(i)));
        } else {
          n = pread(fd, buffer, block, static_cast<off_t>(offset(i)));
        }
        if (n != static_cast<ssize_t>(block)) errors++;
      }
      free(buffer);
    });
  }
  for (auto& t : threads) t.join();
  if (write && fsync(fd) != 0) errors++;
  Run r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.ops = ops;
  r.block = block;
  r.errors = errors;
  return r;
}

void Report(const char* workload, const Run& r) {
  std::printf("%-11s %9.0f IOPS %9.1f MiB/s %7.2f s%s\n", workload, r.ops / r.seconds,
              r.ops * r.block / r.seconds / kMiB, r.seconds,
              r.errors ? (" ERRORS " + std::to_string(r.errors)).c_str() : "");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string device;
  uint64_t seq_mib = 256, random_ops = 16384;
  unsigned depth = 16;
  CLI::App app("nbd_bench's workloads on a block device, through the kernel");
  app.add_option("device", device, "block device (or file) to read and write")->required();
  app.add_option("--seq-mib", seq_mib, "bytes moved by the sequential runs (and the random range)");
  app.add_option("--random-ops", random_ops, "4 KiB requests per random run");
  app.add_option("--depth", depth, "requests in flight (threads)");
  CLI11_PARSE(app, argc, argv);
  if (seq_mib == 0 || depth == 0) {
    std::fprintf(stderr, "block_io_bench: --seq-mib and --depth must be at least 1\n");
    return 2;
  }
  int fd = open(device.c_str(), O_RDWR | O_DIRECT);
  if (fd < 0) {
    std::fprintf(stderr, "block_io_bench: open %s: %s\n", device.c_str(), std::strerror(errno));
    return 1;
  }
  const block_workloads::Workloads w = block_workloads::Make(seq_mib, random_ops);
  auto seq = block_workloads::Workloads::SeqOffset;
  Report("seq-write", Execute(fd, true, seq_mib, kMiB, depth, seq, w));
  Report("seq-read", Execute(fd, false, seq_mib, kMiB, depth, seq, w));
  Report("rand-write", Execute(fd, true, random_ops, block_workloads::kRandomBlock, depth,
                               [&](uint64_t i) { return w.write_offsets[i]; }, w));
  Report("rand-read", Execute(fd, false, random_ops, block_workloads::kRandomBlock, depth,
                              [&](uint64_t i) { return w.read_offsets[i]; }, w));
  close(fd);
  return 0;
}
