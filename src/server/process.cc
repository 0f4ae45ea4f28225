#include "server/process.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "crypto/key_file.h"
#include "engine/bucket_check.h"
#include "engine/engine.h"
#include "fs/change_notifier.h"
#include "fs/filesystem.h"
#include "fs/fsck.h"
#include "fuse/fuse_server.h"
#include "fuse/kernel_invalidator.h"
#include "nbd/nbd_server.h"
#include "nfs/nfs_server.h"
#include "ninep/server.h"
#include "server/admin_handlers.h"
#include "server/admin_server.h"
#include "server/bucket.h"
#include "server/heap.h"
#include "server/open_file_limit.h"
#include "server/request_ledger.h"
#include "util/buffer_pool.h"
#include "util/mutex.h"

namespace pail::server {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// memory_size_gb covers the core's caches too: a sixteenth of it for inode
// records, at most kInodeCacheRecordsMax, and a sixty-fourth for directory
// entries, at most kDentryCacheEntriesMax; the engine splits the rest.
size_t CoreCacheEntries(const Config& config, uint64_t share, size_t entry_bytes, size_t most) {
  const auto memory = static_cast<uint64_t>(config.cache.memory_size_gb * kGiB);
  return static_cast<size_t>(std::min<uint64_t>(most, memory / share / entry_bytes));
}

size_t InodeCacheRecords(const Config& config) {
  return CoreCacheEntries(config, 16, fs::kInodeCacheRecordBytes, fs::kInodeCacheRecordsMax);
}

size_t DentryCacheEntries(const Config& config) {
  return CoreCacheEntries(config, 64, fs::kDentryCacheEntryBytes, fs::kDentryCacheEntriesMax);
}

// `background_work` false: no compaction (fsck must check the files it
// listed, not have them compacted away and collected under it).
Result<std::unique_ptr<engine::Engine>> OpenEngine(const Config& config, const Bucket& bucket,
                                                   RequestLedger* ledger = nullptr,
                                                   bool background_work = true) {
  engine::EngineOptions options;
  options.store = bucket.encrypted;
  options.cache_dir = config.cache.dir;
  options.disk_cache_bytes = static_cast<uint64_t>(config.cache.disk_size_gb * kGiB);
  options.memory_cache_bytes = static_cast<uint64_t>(config.cache.memory_size_gb * kGiB) -
                               InodeCacheRecords(config) * fs::kInodeCacheRecordBytes -
                               DentryCacheEntries(config) * fs::kDentryCacheEntryBytes;
  options.compression = config.filesystem.compression;
  options.flush_interval = std::chrono::milliseconds(config.filesystem.flush_interval_ms);
  options.column_families = fs::FileSystem::ColumnFamilies();
  options.background_work = background_work;
  if (ledger) ledger->Attach(options);
  return engine::Engine::Open(std::move(options));
}

fs::FsOptions FilesystemOptions(const Config& config) {
  fs::FsOptions options;
  options.max_size_bytes = static_cast<uint64_t>(config.filesystem.max_size_gb * kGiB);
  options.write_back_interval = std::chrono::milliseconds(config.filesystem.flush_interval_ms);
  options.compression = config.filesystem.compression;
  options.inode_cache_records = InodeCacheRecords(config);
  options.dentry_cache_entries = DentryCacheEntries(config);
  return options;
}

sigset_t ShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Waits for one of `signals`, meanwhile every kIdleMemoryCheckInterval
// freeing the upload buffers that stayed idle (buffer_pool.h) and giving
// the heap's idle free memory back to the kernel (heap.h).
int WaitForShutdownSignal(const sigset_t& signals) {
  constexpr timespec kIdleMemoryCheckInterval{5, 0};
  HeapTrimmer trimmer = HeapTrimmer::ForProcessHeap();
  for (;;) {
    const int signal_number = sigtimedwait(&signals, nullptr, &kIdleMemoryCheckInterval);
    if (signal_number > 0) return signal_number;
    if (errno != EAGAIN) continue;
    const size_t released = ReleaseUnusedIdleBuffers();
    const bool trimmed = trimmer.Tick();
    if (released > 0 || trimmed) {
      spdlog::debug("idle memory: {} bytes of upload buffers freed{}", released,
                    trimmed ? ", the heap trimmed" : "");
    }
  }
}

// A shutdown normally ends within seconds. One still going after
// kShutdownPatience is taken to be waiting on a bucket that does not
// answer: from then on store requests are not retried, so each request the
// final flush still makes costs one attempt's timeout instead of the retry
// deadline, and the process stops in bounded time. What could not be
// written is reported by the flush and the engine's close.
class ShutdownWatchdog {
 public:
  explicit ShutdownWatchdog(RetryingStore& store)
      : thread_([this, &store] {
          MutexLock g(&mu_);
          const auto deadline = std::chrono::steady_clock::now() + kShutdownPatience;
          while (!done_ && cv_.WaitUntil(deadline)) {
          }
          if (done_) return;
          spdlog::warn("shutdown still waiting for the bucket after {} s; store requests are no "
                       "longer retried",
                       std::chrono::duration_cast<std::chrono::seconds>(kShutdownPatience).count());
          store.StopRetrying();
        }) {}
  ~ShutdownWatchdog() {
    {
      MutexLock g(&mu_);
      done_ = true;
    }
    cv_.SignalAll();
    thread_.join();
  }

 private:
  static constexpr std::chrono::seconds kShutdownPatience{30};
  Mutex mu_;
  CondVar cv_{&mu_};
  bool done_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace

Status RunServer(const Config& config) {
  sigset_t signals = ShutdownSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  RaiseOpenFileLimit();  // before the engine sizes its disk cache's share

  PAIL_ASSIGN_OR_RETURN(Bucket bucket, OpenBucket(config));
  RequestLedger ledger(bucket.counts);
  PAIL_ASSIGN_OR_RETURN(auto engine, OpenEngine(config, bucket, &ledger));
  Status loaded = ledger.Load(*engine);
  if (!loaded.ok()) {
    // Costs then count from this run only; serving matters more.
    spdlog::warn("request ledger unreadable, counting from zero: {}", loaded.ToString());
    ledger.StartFromZero();
  }
  PAIL_ASSIGN_OR_RETURN(auto filesystem, fs::FileSystem::Open(*engine, FilesystemOptions(config)));
  ServerView view(config, bucket, *engine, *filesystem, ledger);
  // With the FUSE mount, the other protocols reach the core through a
  // notifier that tells the mount's kernel what their changes made stale
  // (docs/fuse.md, "Caching"); FUSE's own changes need no telling.
  std::unique_ptr<fuse::KernelInvalidator> invalidator;
  std::unique_ptr<fs::FileSystem> notifier;
  fs::FileSystem* shared_fs = filesystem.get();
  if (config.fuse.enabled) {
    invalidator = std::make_unique<fuse::KernelInvalidator>();
    notifier = fs::NewChangeNotifier(*filesystem, *invalidator);
    shared_fs = notifier.get();
  }

  std::unique_ptr<AdminServer> admin_server;
  std::unique_ptr<nfs::NfsServer> nfs_server;
  std::unique_ptr<ninep::NinepServer> ninep_server;
  std::unique_ptr<fuse::FuseServer> fuse_server;
  std::unique_ptr<nbd::NbdServer> nbd_server;
  Status started;
  if (config.admin.enabled) {
    AdminServerOptions options;
    options.addresses = config.admin.addresses;
    options.unix_socket = config.admin.unix_socket;
    options.max_connections = config.admin.max_connections;
    auto admin = AdminServer::Start(options, view.Handlers());
    if (admin.ok()) {
      admin_server = std::move(*admin);
      view.SetAdminListening(admin_server->listening());
    } else {
      started = admin.status();
    }
  }
  if (started.ok() && config.nfs.enabled) {
    nfs::NfsServerOptions options;
    options.addresses = config.nfs.addresses;
    options.durable_commit = config.nfs.commit == "durable";
    options.access = config.nfs.access;
    nfs_server = std::make_unique<nfs::NfsServer>(*shared_fs, options);
    started = nfs_server->Start();
  }
  if (started.ok() && config.ninep.enabled) {
    ninep::NinepServerOptions options;
    options.addresses = config.ninep.addresses;
    options.unix_socket = config.ninep.unix_socket;
    options.session.max_msize = config.ninep.max_msize;
    options.attach_timeout = config.ninep.attach_timeout;
    options.session.identity = config.ninep.access;
    ninep_server = std::make_unique<ninep::NinepServer>(*shared_fs, options);
    started = ninep_server->Start();
  }
  if (started.ok() && config.nbd.enabled) {
    nbd::NbdServerOptions options;
    options.addresses = config.nbd.addresses;
    options.unix_socket = config.nbd.unix_socket;
    options.access = config.nbd.access;
    options.handshake_timeout = config.nbd.handshake_timeout;
    nbd_server = std::make_unique<nbd::NbdServer>(*shared_fs, options);
    started = nbd_server->Start();
  }
  if (started.ok() && config.fuse.enabled) {
    fuse::FuseServerOptions options;
    options.mountpoint = config.fuse.mountpoint;
    options.allow_other = config.fuse.allow_other;
    const bool only_fuse = !config.nfs.enabled && !config.ninep.enabled && !config.nbd.enabled;
    options.on_unmounted = [only_fuse, mountpoint = config.fuse.mountpoint] {
      if (!only_fuse) {
        spdlog::warn("fuse: {} was unmounted; the other protocols keep serving", mountpoint);
        return;
      }
      // Nothing is served any more: shut down as on SIGTERM (flushing
      // first), as a FUSE daemon is expected to when its mount goes.
      spdlog::info("fuse: {} was unmounted; shutting down", mountpoint);
      kill(getpid(), SIGTERM);
    };
    options.invalidator = invalidator.get();
    fuse_server = std::make_unique<fuse::FuseServer>(*filesystem, options);
    started = fuse_server->Start();
  }
  if (started.ok()) {
    view.SetServing(true);
    spdlog::info("pailfs serving {}; SIGINT or SIGTERM stops it", config.storage.url);
    const int signal_number = WaitForShutdownSignal(signals);
    spdlog::info("signal {}: flushing and shutting down", signal_number);
  }
  ShutdownWatchdog watchdog(*bucket.raw);
  view.SetServing(false);
  if (fuse_server) fuse_server->Stop();
  if (ninep_server) ninep_server->Stop();
  if (nfs_server) nfs_server->Stop();
  if (nbd_server) nbd_server->Stop();
  // Every server holds references into the filesystem (the admin server's
  // handlers use the engine too), which closes next: none may outlive it.
  fuse_server.reset();
  ninep_server.reset();
  nfs_server.reset();
  nbd_server.reset();
  admin_server.reset();
  notifier.reset();
  invalidator.reset();
  Status closed = filesystem->Close();
  filesystem.reset();
  Status engine_closed = engine->Close();
  if (!started.ok()) return started;
  // The engine's error says which writes were lost; the final flush's
  // (when the bucket is unreachable) only that a sync failed.
  if (!engine_closed.ok()) return engine_closed.WithContext("closing the engine");
  if (!closed.ok()) return closed.WithContext("final flush");
  auto counts = bucket.counts->Snapshot();
  spdlog::info("clean shutdown; {} object-store requests this run, {} since the bucket was created",
               counts.total_requests(), ledger.Total().total_requests());
  return Status::OK();
}

namespace {

void PrintBucketReport(const engine::BucketReport& report, bool with_garbage) {
  for (const auto& note : report.notes) std::printf("note: bucket: %s\n", note.c_str());
  if (with_garbage) {
    for (const auto& key : report.garbage) std::printf("garbage: %s\n", key.c_str());
  }
  for (const auto& problem : report.problems) std::printf("problem: bucket: %s\n", problem.c_str());
}

}  // namespace

Status RunFsck(const Config& config, fs::FsckProgress progress) {
  PAIL_ASSIGN_OR_RETURN(Bucket bucket, OpenBucket(config));
  // The bucket first, read only: opening a damaged bucket is refused, and
  // this says why; it also lists what the next writer would collect.
  PAIL_ASSIGN_OR_RETURN(auto before, engine::CheckBucket(*bucket.encrypted, {}));
  PrintBucketReport(before, /*with_garbage=*/true);
  std::printf("fsck: bucket: CURRENT of epoch %llu, %zu object(s) of garbage to collect\n",
              (unsigned long long)before.current_epoch, before.garbage.size());
  if (!before.problems.empty()) {
    return Status::Corruption(std::to_string(before.problems.size()) +
                              " problem(s) found in the bucket; not opening it");
  }
  PAIL_ASSIGN_OR_RETURN(auto engine, OpenEngine(config, bucket, nullptr, /*background_work=*/false));
  auto report = fs::Fsck(*engine, std::move(progress));
  std::set<std::string> live;
  std::vector<std::string> files;
  uint64_t manifest_size = 0;
  if (engine->db()->GetLiveFiles(files, &manifest_size, /*flush_memtable=*/false).ok()) {
    for (auto& f : files) live.insert(f.substr(f.rfind('/') + 1));
  }
  Status closed = engine->Close();
  if (!report.ok()) return report.status();
  // Then every file the database uses: its object exists, decrypts and is
  // of the pinned CURRENT's lineage.
  PAIL_ASSIGN_OR_RETURN(auto after, engine::CheckBucket(*bucket.encrypted, live));
  PrintBucketReport(after, /*with_garbage=*/false);
  std::printf("fsck: bucket: %llu database files and %llu WAL parts read back\n",
              (unsigned long long)after.files_checked, (unsigned long long)after.wal_parts_read);
  std::printf("fsck: %llu inodes (%llu directories, %llu files), %llu entries, %llu chunks "
              "(%llu as pieces)\n",
              (unsigned long long)report->inodes, (unsigned long long)report->directories,
              (unsigned long long)report->files, (unsigned long long)report->entries,
              (unsigned long long)report->chunks, (unsigned long long)report->pieces_chunks);
  for (const auto& seg : report->segments) {
    std::printf("segment: %016llx %llu bytes, %llu live, %llu garbage\n", (unsigned long long)seg.id,
                (unsigned long long)seg.total_bytes, (unsigned long long)seg.live_bytes,
                (unsigned long long)(seg.total_bytes - std::min(seg.total_bytes, seg.live_bytes)));
  }
  std::printf("fsck: %zu segments, %llu bytes, %llu live, %llu garbage; %llu unregistered data "
              "objects (collected by the next server)\n",
              report->segments.size(), (unsigned long long)report->segment_bytes,
              (unsigned long long)report->segment_live_bytes,
              (unsigned long long)(report->segment_bytes -
                                   std::min(report->segment_bytes, report->segment_live_bytes)),
              (unsigned long long)report->unregistered_objects);
  for (const auto& note : report->notes) std::printf("note: %s\n", note.c_str());
  for (const auto& problem : report->problems) std::printf("problem: %s\n", problem.c_str());
  size_t problems = report->problems.size() + after.problems.size();
  if (problems != 0) return Status::Corruption(std::to_string(problems) + " problem(s) found");
  std::printf("fsck: clean\n");
  return closed;
}

Status RunChangePassword(const Config& config, const std::string& new_password) {
  PAIL_ASSIGN_OR_RETURN(Bucket bucket, OpenRawBucket(config));
  return crypto::ChangePassword(*bucket.raw, config.storage.encryption_password, new_password);
}

}  // namespace pail::server
