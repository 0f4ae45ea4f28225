// Local store benchmark: durable puts per second into a file:// bucket by
// 1, 2, 4 and 8 threads at once, put-if-absent of fresh keys in one
// directory (as WAL parts and data objects go up).
//
//   local_store_bench [--dir D] [--seconds S] [--bytes N]
//
// Each put is a temp file written and fsynced, linked into place and its
// directory fsynced, so the rate is set by the disk's flushes; what the
// thread counts show is whether puts overlap their flushes or queue behind
// each other. It prints numbers; it never passes or fails.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "objstore/local_store.h"

namespace {

using Clock = std::chrono::steady_clock;

// Puts per second by `threads` writers for `seconds`, or -1 after an error.
double PutRate(pail::ObjectStore& store, int threads, double seconds, const std::string& body) {
  std::atomic<uint64_t> puts{0};
  std::atomic<bool> failed{false};
  const auto start = Clock::now();
  const auto stop = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t) {
    writers.emplace_back([&, t] {
      for (uint64_t i = 0; Clock::now() < stop && !failed; ++i) {
        auto put = store.PutIfAbsent(
            "parts/" + std::to_string(threads) + "-" + std::to_string(t) + "-" + std::to_string(i),
            body);
        if (!put.ok()) {
          std::fprintf(stderr, "put: %s\n", put.status().ToString().c_str());
          failed = true;
          return;
        }
        ++puts;
      }
    });
  }
  for (auto& w : writers) w.join();
  if (failed) return -1;
  return static_cast<double>(puts) / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"durable puts per second into a file:// bucket, by concurrent writers"};
  std::string dir = "/tmp/pailfs-local-store-bench";
  double seconds = 3;
  size_t bytes = 4096;
  app.add_option("--dir", dir, "bucket directory (emptied first; on the disk to measure)");
  app.add_option("--seconds", seconds, "per thread count")->check(CLI::PositiveNumber);
  app.add_option("--bytes", bytes, "object size");
  CLI11_PARSE(app, argc, argv);

  const std::string body(bytes, 'p');
  std::printf("file:// put-if-absent of %zu-byte objects, %.0f s per row\n", bytes, seconds);
  std::printf("%8s %12s %14s\n", "threads", "puts/s", "vs 1 thread");
  double single = 0;
  for (int threads : {1, 2, 4, 8}) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    auto store = pail::LocalStore::Open(dir);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      return 1;
    }
    const double rate = PutRate(**store, threads, seconds, body);
    if (rate < 0) return 1;
    if (threads == 1) single = rate;
    std::printf("%8d %12.0f %13.2fx\n", threads, rate, rate / single);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
