// Engine benchmark: puts/s, gets/s with a hot and a cold cache, object-store
// requests per 1,000 puts and bucket bytes written per byte put.
//
//   engine_bench [--store memory|file] [--puts N] [--value-bytes N]
//                [--store-latency-us N] [--gets N]
//
// --store-latency-us adds a delay to every object-store request, to see how
// the engine behaves on a store with S3-like latency. It prints numbers; it
// never passes or fails.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "crypto/encrypted_store.h"
#include "crypto/key_file.h"
#include "engine/engine.h"
#include "objstore/counting_store.h"
#include "objstore/fault_store.h"
#include "objstore/local_store.h"
#include "objstore/memory_store.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string Key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "key%016llx", (unsigned long long)(i * 0x9E3779B97F4A7C15ull));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pailfs engine benchmark"};
  std::string store_kind = "file";
  uint64_t puts = 200000, gets = 20000;
  size_t value_bytes = 100;
  int latency_us = 0;
  app.add_option("--store", store_kind, "memory or file");
  app.add_option("--puts", puts);
  app.add_option("--gets", gets);
  app.add_option("--value-bytes", value_bytes);
  app.add_option("--store-latency-us", latency_us);
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);

  auto dir = std::filesystem::temp_directory_path() / ("pail-engine-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::shared_ptr<pail::ObjectStore> backend;
  if (store_kind == "memory") {
    backend = std::make_shared<pail::MemoryStore>();
  } else {
    backend = std::move(pail::LocalStore::Open((dir / "bucket").string())).value();
  }
  pail::FaultOptions delay;
  delay.latency = std::chrono::microseconds(latency_us);
  auto counting = std::make_shared<pail::CountingStore>(std::make_shared<pail::FaultStore>(backend, delay));
  auto key = pail::crypto::LoadOrCreateDataKey(*counting, "bench");
  auto store = std::make_shared<pail::crypto::EncryptedStore>(counting, *key);

  auto options = [&](const std::string& cache) {
    pail::engine::EngineOptions o;
    o.store = store;
    o.cache_dir = (dir / cache).string();
    pail::engine::ColumnFamilySpec meta;
    meta.name = "meta";
    o.column_families = {meta};
    return o;
  };
  std::printf("engine_bench: store=%s puts=%llu value=%zuB store_latency=%dus\n", store_kind.c_str(),
              (unsigned long long)puts, value_bytes, latency_us);

  uint64_t user_bytes = 0;
  pail::RequestCounts before_puts, after_puts;
  {
    auto engine = pail::engine::Engine::Open(options("cache-write"));
    if (!engine.ok()) {
      std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
      return 1;
    }
    auto* cf = (*engine)->column_family("meta");
    std::string value(value_bytes, 'v');
    std::mt19937_64 rng(1);
    before_puts = counting->Snapshot();
    auto start = Clock::now();
    for (uint64_t i = 0; i < puts; ++i) {
      for (auto& c : value) c = static_cast<char>('a' + rng() % 26);
      rocksdb::WriteBatch batch;
      std::string k = Key(i);
      batch.Put(cf, k, value);
      user_bytes += k.size() + value.size();
      if (!(*engine)->Write(&batch).ok()) return 1;
    }
    double put_secs = Seconds(start);
    auto s = (*engine)->Sync();
    double synced_secs = Seconds(start);
    (*engine)->db()->Flush(rocksdb::FlushOptions());
    if (pail::Status closed = (*engine)->Close(); !closed.ok()) {
      std::fprintf(stderr, "close: %s\n", closed.ToString().c_str());
      return 1;
    }
    after_puts = counting->Snapshot();
    std::printf("puts/s                      %12.0f   (%.0f including the final Sync: %s)\n",
                puts / put_secs, puts / synced_secs, s.ToString().c_str());
  }
  uint64_t requests = after_puts.total_requests() - before_puts.total_requests();
  uint64_t written = after_puts.bytes_written() - before_puts.bytes_written();
  std::printf("requests per 1,000 puts     %12.2f   (%llu requests, flush + close included)\n",
              1000.0 * requests / puts, (unsigned long long)requests);
  std::printf("bucket bytes per byte put   %12.3f   (%llu bytes for %llu user bytes)\n",
              double(written) / user_bytes, (unsigned long long)written, (unsigned long long)user_bytes);

  auto before_open = counting->Snapshot();
  auto open_start = Clock::now();
  auto engine = pail::engine::Engine::Open(options("cache-read"));
  if (!engine.ok()) return 1;
  std::printf("open with an empty cache     %9.1f ms   (%llu store requests, %.1f MiB read)\n",
              Seconds(open_start) * 1000,
              (unsigned long long)(counting->Snapshot().total_requests() - before_open.total_requests()),
              (counting->Snapshot().bytes_read() - before_open.bytes_read()) / 1048576.0);
  auto* cf = (*engine)->column_family("meta");
  std::mt19937_64 rng(2);
  auto run_gets = [&](const char* label) {
    auto before = counting->Snapshot();
    auto start = Clock::now();
    std::string value;
    uint64_t found = 0;
    for (uint64_t i = 0; i < gets; ++i) {
      if ((*engine)->db()->Get(rocksdb::ReadOptions(), cf, Key(rng() % puts), &value).ok()) ++found;
    }
    double secs = Seconds(start);
    auto after = counting->Snapshot();
    std::printf("gets/s, %-20s %12.0f   (%llu/%llu found, %llu store requests)\n", label, gets / secs,
                (unsigned long long)found, (unsigned long long)gets,
                (unsigned long long)(after.total_requests() - before.total_requests()));
  };
  run_gets("cold cache");
  run_gets("hot cache");
  if (pail::Status closed = (*engine)->Close(); !closed.ok()) {
    std::fprintf(stderr, "close: %s\n", closed.ToString().c_str());
    return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
