// Child process of the crash and fencing tests. It opens the engine on a
// bucket and writes numbered batches forever, printing "ready" once open and
// "synced N" each time Sync() returns with batches up to N durable. The test
// kills it at random moments. With "fence" as the last argument it syncs
// after every batch and, once Sync() reports fencing, prints "fenced" and
// exits 3.
//
// usage: engine_crash_child URL CACHE_DIR FIRST_BATCH [fence]
// Batch n writes keys b/<n>/0..2 (all three or none must survive) and sets
// "last" to n, in one write batch.
// Environment: PAIL_CRASH_TAG prefixes every key (writers racing on one
// bucket keep apart); PAIL_CRASH_LATENCY_MS delays each store request (an
// open then takes long enough for another process to take over during it);
// PAIL_FAILPOINTS (util/failpoint.h) crashes the child at an exact step.
// It prints "opening" before it opens the engine.
#include <cstdio>
#include <random>
#include <string>
#include <thread>

#include "durability_store.h"
#include "engine/engine.h"
#include "objstore/fault_store.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s URL CACHE_DIR FIRST_BATCH [fence]\n", argv[0]);
    return 2;
  }
  const std::string url = argv[1];
  const bool fence_mode = argc > 4 && std::string(argv[4]) == "fence";
  auto store = pail::testing::OpenDurabilityStore(url);
  if (!store.ok()) {
    std::fprintf(stderr, "open store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  const char* tag_env = std::getenv("PAIL_CRASH_TAG");
  const std::string tag = tag_env ? tag_env : "";
  std::shared_ptr<pail::ObjectStore> bucket = *store;
  if (const char* latency = std::getenv("PAIL_CRASH_LATENCY_MS")) {
    pail::FaultOptions slow;
    slow.latency = std::chrono::milliseconds(std::atoi(latency));
    bucket = std::make_shared<pail::FaultStore>(bucket, slow);
  }
  pail::engine::EngineOptions options;
  options.store = bucket;
  options.cache_dir = argv[2];
  options.flush_interval = std::chrono::milliseconds(50);
  options.column_families = {{"meta", false, nullptr}};
  std::printf("opening\n");
  std::fflush(stdout);
  auto engine = pail::engine::Engine::Open(options);
  if (!engine.ok()) {
    std::fprintf(stderr, "open engine: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  std::mt19937_64 rng(std::random_device{}());
  auto* cf = (*engine)->column_family("meta");
  for (uint64_t n = std::stoull(argv[3]);; ++n) {
    rocksdb::WriteBatch batch;
    std::string value(static_cast<size_t>(rng() % 2000), 'v');
    for (int k = 0; k < 3; ++k) {
      batch.Put(cf, tag + "b/" + std::to_string(n) + "/" + std::to_string(k), value);
    }
    batch.Put(cf, tag + "last", std::to_string(n));
    pail::Status s = (*engine)->Write(&batch);
    if (!s.ok()) {
      if (fence_mode && s.IsFenced()) {
        std::printf("fenced write\n");
        std::fflush(stdout);
        return 3;
      }
      std::fprintf(stderr, "write %llu: %s\n", (unsigned long long)n, s.ToString().c_str());
      return 1;
    }
    if (fence_mode || rng() % 8 == 0) {
      s = (*engine)->Sync();
      if (s.ok()) {
        std::printf("synced %llu\n", (unsigned long long)n);
        std::fflush(stdout);
      } else if (fence_mode && s.IsFenced()) {
        std::printf("fenced\n");
        std::fflush(stdout);
        // Later writes must be refused too.
        rocksdb::WriteBatch after;
        after.Put(cf, tag + "after-fence", "x");
        pail::Status w = (*engine)->Write(&after);
        std::printf("%s\n", w.IsFenced() ? "write refused" : "write accepted");
        std::fflush(stdout);
        return 3;
      } else {
        std::fprintf(stderr, "sync %llu: %s\n", (unsigned long long)n, s.ToString().c_str());
        return 1;
      }
    }
    if (fence_mode) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
