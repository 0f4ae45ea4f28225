// Deterministic simulation of the engine: several writers on one simulated
// bucket (sim_store.h) open, write, sync, flush, compact, collect garbage,
// shut down and crash at seeded points, also while opening, while the store
// fails, loses replies and lands writes late. After every step that can
// change the bucket, a checker opens a copy of the bucket with a fault-free
// store and checks:
//  1. every write some writer had acknowledged as synced (Engine::Sync
//     returned OK) is there, and each writer's surviving writes are a prefix
//     of what it wrote; a write reported as failed never appears. Each
//     successful opener in the run is checked the same way at once.
//  2. the bucket opens.
//  3. every object the committed manifest references exists (the bucket
//     logs deletes, so a violation names the request that deleted it).
//  4. memory stays bounded: a writer's unpublished WAL bytes never exceed
//     what it wrote since its last successful sync, and are zero right
//     after one; the bucket does not grow out of proportion to the data.
// Also: a writer is fenced only when a newer one exists (a lost reply alone
// never fences it), an open never calls the bucket damaged (nothing here
// damages it), and zero-byte "folder" objects of other tools are harmless.
//
// Determinism: every decision of the simulation (which step, which writer,
// each request's fate, where a writer crashes) comes from PRNGs seeded by
// the run's seed; a connection draws its fates in the order of its own
// requests. Writers run one step at a time, background compaction and
// automatic error recovery are off (EngineOptions::background_work), the
// periodic flusher never fires, and flush, compaction and garbage
// collection are explicit steps. What stays nondeterministic: RocksDB runs
// a flush or compaction on its own thread while the step waits for it, and
// may interleave its requests with requests of that same step in a
// different order from run to run (an engine's flush uploads SST, blob and
// manifest files in an order RocksDB picks); purges of obsolete files may
// run after the step that caused them returned (they only forget files, the
// deletes happen at a garbage collection step). Random nonces of the page
// encryption change object bytes, never sizes or fates. A failing seed
// therefore almost always, not always, fails again on replay.
//
// Environment: PAIL_SIM_SEEDS (how many; default set for CI),
// PAIL_SIM_SEED_START (first seed), PAIL_SIM_STEPS (steps per seed),
// PAIL_SIM_JOBS (seeds run in parallel), PAIL_SIM_VERBOSE=1 (trace steps),
// PAIL_SIM_LATE_OVERWRITES=1 (a late write overwrites a newer one of the
// same key; see SimBucket::set_late_overwrites: the engine is not built for
// that store, so this mode finds failures by design).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "../engine_test_util.h"
#include "crypto/encrypted_store.h"
#include "engine/bucket_layout.h"
#include "engine/engine.h"
#include "objstore/retrying_store.h"
#include "sim_store.h"

namespace pail::sim {
namespace {

using engine::Engine;
using engine::EngineOptions;

// RocksDB's waits (a second after each failed flush) return at once: the
// simulation's store fails on purpose, and sleeping buys nothing.
class NoSleepClock : public rocksdb::SystemClockWrapper {
 public:
  NoSleepClock() : SystemClockWrapper(rocksdb::SystemClock::Default()) {}
  const char* Name() const override { return "NoSleepClock"; }
  void SleepForMicroseconds(int) override {}
};

uint64_t EnvU64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Seeds a CI run covers: about two minutes on this shared 2-core machine
// under load (PAIL_SIM_JOBS=2), well under when it is quiet.
constexpr uint64_t kCiSeeds = 1200;
constexpr uint64_t kDefaultSteps = 30;
constexpr int kMaxLiveWriters = 3;
constexpr int kCheckerIncarnation = 1000000;
const char* const kColumnFamilies[] = {"default", "meta", "data"};

// SplitMix64: independent PRNG seeds for each connection of a run.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct WriteRecord {
  std::string cf, key, value;
  bool ok = false;
};

// One engine instance: an incarnation of a writer process.
struct Writer {
  int incarnation = 0;
  std::shared_ptr<SimConnection> connection;
  std::unique_ptr<Engine> engine;
  std::vector<WriteRecord> writes;
  uint64_t unsynced_bytes = 0;  // bytes written since the last successful sync
};

// Everything the writers wrote: key -> (incarnation, index in its writes).
struct History {
  std::map<int, std::vector<WriteRecord>> writes;  // by incarnation
  std::map<std::string, std::string> acked;        // synced and acknowledged
};

class SimRun {
 public:
  SimRun(uint64_t seed, uint64_t steps, bool verbose, const std::string& dir)
      : seed_(seed), steps_(steps), verbose_(verbose), dir_(dir), rng_(Mix(seed)),
        bucket_(std::make_shared<SimBucket>()) {
    key_.fill(0x5a);
    // Each seed gets a fault profile: some runs are clean, some stormy.
    switch (rng_() % 4) {
      case 0: faults_ = {}; break;
      case 1: faults_ = {0.02, 0.02, 0.01}; break;
      case 2: faults_ = {0.05, 0.05, 0.03}; break;
      default: faults_ = {0.12, 0.08, 0.05}; break;
    }
    retry_.max_attempts = 1 + static_cast<int>(rng_() % 3);
    retry_.initial_backoff = std::chrono::milliseconds(0);
    retry_.max_backoff = std::chrono::milliseconds(0);
    bucket_->set_late_overwrites(EnvU64("PAIL_SIM_LATE_OVERWRITES", 0) != 0);
    if (verbose_) bucket_->SetTrace([](const std::string& what) { std::fprintf(stderr, "%s\n", what.c_str()); });
  }

  // "" when every invariant held, else what broke.
  std::string Go() {
    for (step_ = 0; step_ < steps_ && failure_.empty(); ++step_) {
      Step();
      if (failure_.empty()) CheckWriters();
      // The checker's verdict can only change when the bucket or the set of
      // acknowledged writes did.
      if (failure_.empty() && (bucket_->mutations() != checked_mutations_ ||
                               history_.acked.size() != checked_acked_)) {
        CheckBucket();
      }
    }
    if (failure_.empty()) {
      // The end: in-flight requests land, every writer dies, and the next
      // opener still finds everything acknowledged.
      Trace("end: land in-flight requests, crash every writer");
      bucket_->LandAll();
      for (auto& w : writers_) Crash(*w);
      writers_.clear();
      CheckBucket();
    }
    for (auto& w : writers_) Crash(*w);
    return failure_;
  }

 private:
  void Trace(const std::string& what) {
    if (!verbose_) return;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - began_).count();
    std::fprintf(stderr, "seed %" PRIu64 " step %" PRIu64 " (%.0f ms): %s\n", seed_, step_, ms, what.c_str());
  }
  void Fail(const std::string& what) {
    if (failure_.empty()) failure_ = "step " + std::to_string(step_) + ": " + what;
    Trace("INVARIANT BROKEN: " + what);
  }

  std::shared_ptr<ObjectStore> Stack(std::shared_ptr<ObjectStore> connection) {
    auto retrying = std::make_shared<RetryingStore>(std::move(connection), retry_);
    return std::make_shared<crypto::EncryptedStore>(retrying, key_);
  }

  EngineOptions Options(std::shared_ptr<ObjectStore> store, int incarnation) {
    EngineOptions o = pail::testing::TestEngineOptions(
        std::move(store), dir_ + "/cache-" + std::to_string(incarnation));
    o.flush_interval = std::chrono::hours(24);  // flushes are explicit steps
    o.background_work = false;
    o.shutdown_sync_timeout = std::chrono::milliseconds(0);  // a close is one step: one sync
    o.clock = clock_;
    return o;
  }

  Writer* PickWriter() {
    if (writers_.empty()) return nullptr;
    return writers_[rng_() % writers_.size()].get();
  }

  void Step() {
    const uint64_t roll = rng_() % 100;
    Writer* w = PickWriter();
    if (!w || (roll < 8 && writers_.size() < kMaxLiveWriters)) return Open();
    if (roll < 40) return Write(*w);
    if (roll < 60) return Sync(*w);
    if (roll < 70) return Flush(*w);
    if (roll < 76) return Compact(*w);
    if (roll < 84) return Collect(*w);
    if (roll < 88) return Close(*w);
    if (roll < 89 && rng_() % 4 == 0) {
      // A console or sync tool creates a "folder" marker: not ours, and
      // no reason for any writer to fail.
      const char* marker = rng_() % 2 ? "db/" : "fence/";
      Trace(std::string("a foreign tool creates the zero-byte object ") + marker);
      (void)bucket_->objects().Put(marker, "");
      bucket_->NoteWritten(marker);
      return;
    }
    if (roll < 95) {
      Trace("crash writer " + std::to_string(w->incarnation));
      Crash(*w);
      Remove(w);
      return;
    }
    // A crash armed a few requests ahead: mid-sync, mid-flush, mid-GC.
    uint64_t n = w->connection->requests() + rng_() % 12;
    Trace("arm crash of writer " + std::to_string(w->incarnation) + " at its request " + std::to_string(n));
    w->connection->CutAtRequest(n);
  }

  void Open() {
    const int incarnation = ++incarnations_;
    auto connection = std::make_shared<SimConnection>(bucket_, Mix(seed_ ^ Mix(incarnation)), faults_);
    // Some openers crash at a seeded request: during the open, or soon after.
    std::optional<uint64_t> cut_at;
    if (rng_() % 3 == 0) {
      cut_at = rng_() % 40;
      connection->CutAtRequest(*cut_at);
    }
    Trace("open writer " + std::to_string(incarnation) +
          (cut_at ? " (crashes at its request " + std::to_string(*cut_at) + ")" : ""));
    auto opened = Engine::Open(Options(Stack(connection), incarnation));
    if (!opened.ok()) {
      Trace("  open failed: " + opened.status().ToString());
      connection->Cut();
      // Nothing here damages the bucket: an open may fail from the store's
      // faults or a takeover, never by calling the bucket damaged.
      if (opened.status().IsCorruption()) {
        Fail("writer " + std::to_string(incarnation) + "'s open calls the bucket damaged: " +
             opened.status().ToString());
      }
      return;
    }
    auto w = std::make_unique<Writer>();
    w->incarnation = incarnation;
    w->connection = connection;
    w->engine = std::move(*opened);
    history_.writes[incarnation];
    Trace("  opened, epoch " + std::to_string(w->engine->stats().epoch));
    // Invariant 1 on the opener itself (its reads may fail under faults:
    // only a definite answer counts).
    std::string why = Verify(*w->engine, /*reads_may_fail=*/true);
    if (!why.empty()) Fail("writer " + std::to_string(incarnation) + " opened but " + why);
    writers_.push_back(std::move(w));
  }

  void Write(Writer& w) {
    rocksdb::WriteBatch batch;
    const int n = 1 + static_cast<int>(rng_() % 3);
    std::vector<WriteRecord> records;
    for (int i = 0; i < n; ++i) {
      WriteRecord r;
      r.cf = kColumnFamilies[1 + rng_() % 2];
      char key[64];
      std::snprintf(key, sizeof key, "w%04d/%06zu", w.incarnation, w.writes.size() + records.size());
      r.key = key;
      // Large values in "data" go to blob files.
      size_t size = r.cf == "data" && rng_() % 2 ? 1024 + rng_() % 3000 : 1 + rng_() % 200;
      r.value = std::string(size, static_cast<char>('a' + rng_() % 26)) + std::to_string(seed_);
      batch.Put(w.engine->column_family(r.cf), r.key, r.value);
      records.push_back(std::move(r));
    }
    Status s = w.engine->Write(&batch);
    Trace("write " + std::to_string(n) + " keys on writer " + std::to_string(w.incarnation) + ": " +
          s.ToString());
    for (auto& r : records) {
      r.ok = s.ok();
      if (s.ok()) w.unsynced_bytes += r.key.size() + r.value.size();
      w.writes.push_back(r);
    }
    history_.writes[w.incarnation] = w.writes;
  }

  void Sync(Writer& w) {
    const size_t covered = w.writes.size();
    Status s = w.engine->Sync();
    Trace("sync writer " + std::to_string(w.incarnation) + ": " + s.ToString());
    if (!s.ok()) return;
    for (size_t i = 0; i < covered; ++i) {
      if (w.writes[i].ok) history_.acked[w.writes[i].key] = w.writes[i].value;
    }
    w.unsynced_bytes = 0;
    if (w.engine->stats().pending_wal_bytes != 0) {
      Fail("writer " + std::to_string(w.incarnation) + " still holds " +
           std::to_string(w.engine->stats().pending_wal_bytes) + " WAL bytes after a successful sync");
    }
  }

  std::vector<rocksdb::ColumnFamilyHandle*> Handles(Engine& e) {
    std::vector<rocksdb::ColumnFamilyHandle*> all;
    for (const char* cf : kColumnFamilies) all.push_back(e.column_family(cf));
    return all;
  }

  void Flush(Writer& w) {
    rocksdb::Status s = w.engine->db()->Flush(rocksdb::FlushOptions(), Handles(*w.engine));
    Trace("flush writer " + std::to_string(w.incarnation) + ": " + s.ToString());
  }

  void Compact(Writer& w) {
    const char* cf = kColumnFamilies[rng_() % 3];
    rocksdb::Status s = w.engine->db()->CompactRange(rocksdb::CompactRangeOptions(),
                                                     w.engine->column_family(cf), nullptr, nullptr);
    Trace(std::string("compact ") + cf + " on writer " + std::to_string(w.incarnation) + ": " +
          s.ToString());
  }

  void Collect(Writer& w) {
    Status s = w.engine->CollectGarbage();
    Trace("collect garbage on writer " + std::to_string(w.incarnation) + ": " + s.ToString());
  }

  void Close(Writer& w) {
    const size_t covered = w.writes.size();
    Status s = w.engine->Close();
    Trace("close writer " + std::to_string(w.incarnation) + ": " + s.ToString());
    // A clean close that succeeds syncs everything written before it.
    if (s.ok() && !w.connection->cut()) {
      for (size_t i = 0; i < covered; ++i) {
        if (w.writes[i].ok) history_.acked[w.writes[i].key] = w.writes[i].value;
      }
    }
    w.connection->Cut();
    w.engine.reset();
    Remove(&w);
  }

  // The process dies: nothing more reaches the bucket (except requests
  // already in flight), then the instance is abandoned.
  void Crash(Writer& w) {
    w.connection->Cut();
    w.engine.reset();
  }

  void Remove(Writer* w) {
    for (auto it = writers_.begin(); it != writers_.end(); ++it) {
      if (it->get() == w) {
        writers_.erase(it);
        return;
      }
    }
  }

  // Invariant 4 for live writers, and: a writer is fenced only by a newer
  // one (a lost reply alone never fences it).
  void CheckWriters() {
    uint64_t newest_fence = 0;
    if (auto fences = ListAll(bucket_->objects(), engine::kFencePrefix); fences.ok()) {
      for (const auto& meta : *fences) {
        if (auto e = engine::ParseFenceKey(meta.key)) newest_fence = std::max(newest_fence, *e);
      }
    }
    for (auto& w : writers_) {
      if (w->engine->fenced() && w->engine->stats().epoch >= newest_fence) {
        Fail("writer " + std::to_string(w->incarnation) + " (epoch " +
             std::to_string(w->engine->stats().epoch) + ") fenced itself: no newer writer exists");
      }
      const uint64_t pending = w->engine->stats().pending_wal_bytes;
      // WAL records cost a few bytes beyond keys and values.
      const uint64_t bound = w->unsynced_bytes * 2 + 64 * w->writes.size() + 4096;
      if (pending > bound) {
        Fail("writer " + std::to_string(w->incarnation) + " holds " + std::to_string(pending) +
             " unpublished WAL bytes for " + std::to_string(w->unsynced_bytes) + " bytes written");
      }
    }
    uint64_t written = 0;
    for (auto& [inc, writes] : history_.writes) {
      for (auto& r : writes) written += r.key.size() + r.value.size();
    }
    const uint64_t bucket_bytes = bucket_->total_bytes();
    const uint64_t bound = 6 * written + (1ull << 20) * (incarnations_ + 1);
    if (bucket_bytes > bound) {
      Fail("bucket holds " + std::to_string(bucket_bytes) + " bytes for " + std::to_string(written) +
           " bytes written by " + std::to_string(incarnations_) + " writers");
    }
  }

  // Reads everything `e` holds and compares it with the history; "" if it
  // matches invariant 1.
  std::string Verify(Engine& e, bool reads_may_fail) {
    std::map<std::string, std::string> seen;
    for (const char* cf : {"meta", "data"}) {
      std::unique_ptr<rocksdb::Iterator> it(e.db()->NewIterator(rocksdb::ReadOptions(), e.column_family(cf)));
      for (it->SeekToFirst(); it->Valid(); it->Next()) seen[it->key().ToString()] = it->value().ToString();
      if (!it->status().ok()) {
        if (reads_may_fail) return "";
        return std::string("reading ") + cf + " failed: " + it->status().ToString();
      }
    }
    for (const auto& [key, value] : history_.acked) {
      auto it = seen.find(key);
      if (it == seen.end()) return "an acknowledged synced write is lost: " + key;
      if (it->second != value) return "an acknowledged synced write has the wrong value: " + key;
    }
    for (const auto& [inc, writes] : history_.writes) {
      bool gap = false;
      for (const auto& r : writes) {
        const bool there = seen.count(r.key) > 0;
        if (there && !r.ok) return "a write reported as failed appeared: " + r.key;
        if (!r.ok) continue;
        if (there && gap) return "writer " + std::to_string(inc) + "'s writes are not a prefix at " + r.key;
        if (there && seen[r.key] != r.value) return "wrong value for " + r.key;
        if (!there) gap = true;
      }
    }
    return "";
  }

  // Invariants 1-3 on a copy of the bucket, opened without faults.
  void CheckBucket() {
    checked_mutations_ = bucket_->mutations();
    checked_acked_ = history_.acked.size();
    auto copy = bucket_->Snapshot();
    // The checker reaches the copy directly: no faults, no late landings.
    auto store = std::make_shared<crypto::EncryptedStore>(copy, key_);
    const int incarnation = kCheckerIncarnation + static_cast<int>(checks_++);
    Trace("check: open");
    auto checker = Engine::Open(Options(store, incarnation));
    Trace("check: opened");
    if (!checker.ok()) {
      Fail("the bucket does not open: " + checker.status().ToString() + MissingObjects(*copy, {}, 0));
      return;
    }
    std::string why = Verify(**checker, /*reads_may_fail=*/false);
    if (!why.empty()) Fail("the next opener would find " + why);
    std::vector<std::string> live;
    uint64_t manifest_size = 0;
    if ((*checker)->db()->GetLiveFiles(live, &manifest_size, false).ok()) {
      std::string missing = MissingObjects(*copy, live, (*checker)->stats().epoch);
      if (!missing.empty()) Fail("the committed state references deleted objects:" + missing);
    }
    // Let the checker go without writing to the copy again.
    Trace("check: verified");
    checker->reset();
    Trace("check: closed");
    std::error_code ec;
    std::filesystem::remove_all(dir_ + "/cache-" + std::to_string(incarnation), ec);
  }

  // Invariant 3: for each file the committed manifest names (SST, blob,
  // manifest), the object that holds it (the newest epoch's, no newer than
  // the pinned CURRENT) exists. Names the delete that removed it. The
  // checker's live files stand for the committed manifest; those its own
  // recovery wrote are skipped.
  std::string MissingObjects(MemoryStore& copy, std::vector<std::string> live, uint64_t checker_epoch) {
    auto listing = ListAll(copy, "db/");
    if (!listing.ok()) return "";
    uint64_t pinned = 0;
    for (const auto& meta : *listing) {
      auto k = engine::ParseDbKey(meta.key);
      if (k && !k->is_wal_part && k->file == "CURRENT") pinned = std::max(pinned, k->epoch);
    }
    if (live.empty()) return "";
    std::string out;
    for (auto name : live) {
      name = name.substr(name.rfind('/') + 1);
      if (name == "CURRENT" || name.rfind("OPTIONS", 0) == 0) continue;
      // Written by the checker's own recovery (a flush of the replayed WAL).
      if (copy.Head(engine::FileKey(checker_epoch, name)).ok()) continue;
      for (uint64_t e = pinned; e >= 1; --e) {
        std::string key = engine::FileKey(e, name);
        if (!bucket_->ever_written(key)) continue;
        if (!copy.Head(key).ok()) {
          out += " " + key;
          for (auto& [at, deleted] : bucket_->deletes()) {
            if (deleted == key) out += " (deleted at bucket request " + std::to_string(at) + ")";
          }
        }
        break;
      }
    }
    return out;
  }

  const uint64_t seed_, steps_;
  const bool verbose_;
  const std::string dir_;
  std::mt19937_64 rng_;
  std::shared_ptr<SimBucket> bucket_;
  crypto::Key key_;
  FaultProfile faults_;
  RetryOptions retry_;
  std::shared_ptr<rocksdb::SystemClock> clock_ = std::make_shared<NoSleepClock>();
  std::vector<std::unique_ptr<Writer>> writers_;
  History history_;
  int incarnations_ = 0;
  uint64_t checks_ = 0;
  uint64_t checked_mutations_ = UINT64_MAX;
  size_t checked_acked_ = 0;
  uint64_t step_ = 0;
  std::string failure_;
  const std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
};

TEST(EngineSimulation, InvariantsHoldForEverySeed) {
  const uint64_t start = EnvU64("PAIL_SIM_SEED_START", 1);
  const uint64_t count = EnvU64("PAIL_SIM_SEEDS", kCiSeeds);
  const uint64_t steps = EnvU64("PAIL_SIM_STEPS", kDefaultSteps);
  const uint64_t jobs = std::max<uint64_t>(1, EnvU64("PAIL_SIM_JOBS", 2));
  const bool verbose = EnvU64("PAIL_SIM_VERBOSE", 0) != 0;
  spdlog::set_level(verbose ? spdlog::level::info : spdlog::level::off);
  // Cache dirs on tmpfs: on this machine's ext4 (mounted with discard)
  // every deleted file waits for the disk, which tripled a seed's time.
  if (!std::getenv("TMPDIR") && std::filesystem::is_directory("/dev/shm")) setenv("TMPDIR", "/dev/shm", 1);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();

  std::atomic<uint64_t> next{start};
  std::atomic<uint64_t> done{0};
  std::mutex mu;
  std::map<uint64_t, std::string> failures;
  const auto began = std::chrono::steady_clock::now();
  auto worker = [&] {
    while (true) {
      {
        std::lock_guard lock(mu);
        if (failures.size() >= 3) return;  // enough to act on
      }
      const uint64_t seed = next.fetch_add(1);
      if (seed >= start + count) return;
      pail::testing::TempDir dir;
      std::string failure = SimRun(seed, steps, verbose, dir.path()).Go();
      // Progress for long soaks, which may be stopped before they end.
      if (const uint64_t n = done.fetch_add(1) + 1; n % 1000 == 0) {
        std::fprintf(stderr, "engine simulation: %" PRIu64 " seeds done, %zu failed\n", n, failures.size());
      }
      if (!failure.empty()) {
        std::lock_guard lock(mu);
        failures[seed] = failure;
        std::fprintf(stderr, "seed %" PRIu64 " FAILED: %s\n  replay: PAIL_SIM_SEED_START=%" PRIu64
                     " PAIL_SIM_SEEDS=1 PAIL_SIM_VERBOSE=1 %s\n",
                     seed, failure.c_str(), seed, self.c_str());
      }
    }
  };
  std::vector<std::thread> threads;
  for (uint64_t i = 0; i < jobs; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::printf("engine simulation: %" PRIu64 " seeds from %" PRIu64 ", %" PRIu64 " steps each, %.1f s\n",
              done.load(), start, steps, seconds);
  for (const auto& [seed, failure] : failures) {
    ADD_FAILURE() << "seed " << seed << ": " << failure << "\n  replay: PAIL_SIM_SEED_START=" << seed
                  << " PAIL_SIM_SEEDS=1 PAIL_SIM_VERBOSE=1 " << self;
  }
}

}  // namespace
}  // namespace pail::sim
