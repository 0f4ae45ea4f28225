#include "server/admin_handlers.h"

#include <fmt/format.h>

#include "metrics/protocol_metrics.h"
#include "server/cost.h"
#include "server/json_text.h"
#include "util/buffer_pool.h"

#ifndef PAILFS_VERSION
#error "PAILFS_VERSION must be defined by the build"
#endif

namespace pail::server {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

AdminReply Reply(int status, std::string body, std::string content_type = "text/plain; charset=utf-8") {
  AdminReply r;
  r.http_status = status;
  r.body = std::move(body);
  if (r.body.empty() || r.body.back() != '\n') r.body += '\n';
  r.content_type = std::move(content_type);
  return r;
}

double SecondsSinceEpoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string Bytes(double b) {
  if (b >= kGiB) return fmt::format("{:.2f} GiB", b / kGiB);
  if (b >= 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024 * 1024));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024);
  return fmt::format("{:.0f} bytes", b);
}

}  // namespace

ServerView::ServerView(const Config& config, const Bucket& bucket, engine::Engine& engine,
                       fs::FileSystem& filesystem, const RequestLedger& ledger)
    : config_(config), bucket_(bucket), engine_(engine), fs_(filesystem), ledger_(ledger) {}

void ServerView::SetServing(bool serving) {
  if (serving) {
    MutexLock lock(&mu_);
    at_serving_ = ledger_.ThisRun();
    serving_since_ = std::chrono::steady_clock::now();
  }
  serving_.store(serving ? 1 : 2);
}

double ServerView::UptimeSeconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

std::string ServerView::MetricsText() const {
  metrics::TextWriter out;
  const engine::EngineStats st = engine_.stats();
  const fs::FsCounters fc = fs_.counters();
  auto gauge = [&](const char* name, const char* help, double v) {
    out.Family(name, "gauge", help);
    out.Sample(name, {}, v);
  };
  auto counter = [&](const char* name, const char* help, double v) {
    out.Family(name, "counter", help);
    out.Sample(name, {}, v);
  };
  out.Family("pailfs_build_info", "gauge", "Always 1; the version in a label.");
  out.Sample("pailfs_build_info", {{"version", PAILFS_VERSION}}, 1);
  gauge("pailfs_uptime_seconds", "Seconds since this server started.", UptimeSeconds());
  gauge("pailfs_serving", "1 while the protocol servers are serving.", serving_.load() == 1 ? 1 : 0);

  bucket_.counts->WriteMetrics(out);

  out.Family("pailfs_cache_hits_total", "counter",
             "Reads served from a cache: disk (local copies of bucket objects) or block "
             "(RocksDB's memory block cache).");
  out.Sample("pailfs_cache_hits_total", {{"cache", "disk"}}, st.disk_cache_hits);
  out.Sample("pailfs_cache_hits_total", {{"cache", "block"}}, st.block_cache_hits);
  out.Sample("pailfs_cache_hits_total", {{"cache", "segments"}}, st.segment_memory_hits);
  out.Family("pailfs_cache_misses_total", "counter",
             "Reads a cache could not serve (disk: fetched from the bucket).");
  out.Sample("pailfs_cache_misses_total", {{"cache", "disk"}}, st.disk_cache_misses);
  out.Sample("pailfs_cache_misses_total", {{"cache", "block"}}, st.block_cache_misses);
  out.Family("pailfs_cache_local_write_failures_total", "counter",
             "Writes the local cache directory's disk refused (full, over a quota, failing); "
             "each evicts a quarter of the disk cache and pauses caching (docs/engine.md).");
  out.Sample("pailfs_cache_local_write_failures_total", {}, st.disk_cache_local_failures);
  out.Family("pailfs_cache_bytes", "gauge", "Bytes held by each cache.");
  out.Sample("pailfs_cache_bytes", {{"cache", "disk"}}, st.disk_cache_bytes);
  // RocksDB's blocks and, charged to the same cache, its memtables.
  out.Sample("pailfs_cache_bytes", {{"cache", "block"}}, st.block_cache_bytes);
  // Segments just uploaded, kept in memory: a quarter of memory_size_gb.
  out.Sample("pailfs_cache_bytes", {{"cache", "segments"}}, st.segment_memory_bytes);
  // Decoded inode records and directory entries, above the engine.
  out.Sample("pailfs_cache_bytes", {{"cache", "inodes"}}, fc.inode_cache_bytes);
  out.Sample("pailfs_cache_bytes", {{"cache", "dentries"}}, fc.dentry_cache_bytes);
  out.Family("pailfs_cache_capacity_bytes", "gauge",
             "Size of each cache: as configured (disk: capped by the room its disk had at start).");
  out.Sample("pailfs_cache_capacity_bytes", {{"cache", "disk"}}, st.disk_cache_capacity);
  // memory_size_gb is split between these five (process.cc, the engine).
  out.Sample("pailfs_cache_capacity_bytes", {{"cache", "block"}}, st.block_cache_capacity);
  out.Sample("pailfs_cache_capacity_bytes", {{"cache", "segments"}}, st.segment_memory_capacity);
  out.Sample("pailfs_cache_capacity_bytes", {{"cache", "inodes"}}, fc.inode_cache_capacity_bytes);
  out.Sample("pailfs_cache_capacity_bytes", {{"cache", "dentries"}},
             fc.dentry_cache_capacity_bytes);

  gauge("pailfs_cache_warmed_bytes",
        "Metadata table bytes read into the disk cache by the warm-up after start.",
        static_cast<double>(st.warmed_bytes));
  gauge("pailfs_cache_warming", "1 while the metadata warm-up after start runs.",
        st.warming ? 1.0 : 0.0);
  gauge("pailfs_idle_upload_buffer_bytes",
        "Upload buffers kept for reuse (at most 80 MiB of bodies and 80 MiB of ciphertext).",
        static_cast<double>(IdleBufferBytes()));
  gauge("pailfs_writeback_dirty_bytes", "File data written but not yet handed to the engine.",
        fc.write_back_bytes);
  counter("pailfs_writeback_wait_seconds_total",
          "Time writers spent waiting for the write-back buffer to drain.", fc.writer_wait_ns / 1e9);

  gauge("pailfs_engine_memtable_bytes", "Bytes in RocksDB memtables.", st.memtable_bytes);
  gauge("pailfs_engine_pending_compaction_bytes", "RocksDB's estimate of bytes compaction must rewrite.",
        st.pending_compaction_bytes);
  out.Family("pailfs_engine_files", "gauge", "SST files per LSM level.");
  for (size_t level = 0; level < st.files_per_level.size(); ++level) {
    out.Sample("pailfs_engine_files", {{"level", std::to_string(level)}}, st.files_per_level[level]);
  }
  gauge("pailfs_engine_wal_pending_bytes", "WAL bytes written but not yet in the bucket.",
        st.pending_wal_bytes);
  counter("pailfs_engine_syncs_total", "Uploads that made everything written before them durable.",
          st.syncs);
  const bool synced = st.last_sync.time_since_epoch().count() != 0;
  gauge("pailfs_engine_last_sync_timestamp_seconds",
        "Unix time of the last successful sync (0: none since start).",
        synced ? SecondsSinceEpoch(st.last_sync) : 0);
  gauge("pailfs_engine_last_sync_age_seconds",
        "Seconds since the last successful sync (since start when there was none).",
        synced ? std::chrono::duration<double>(std::chrono::system_clock::now() - st.last_sync).count()
               : UptimeSeconds());
  gauge("pailfs_engine_fenced", "1 once another server has taken over the bucket.", st.fenced ? 1 : 0);
  gauge("pailfs_engine_epoch", "This server's writer epoch in the bucket.", st.epoch);
  gauge("pailfs_engine_garbage_objects", "Obsolete bucket objects awaiting deletion.",
        st.garbage_objects);

  gauge("pailfs_fs_used_bytes", "File data bytes stored (quota use), flushed or not.", fc.used_bytes);
  gauge("pailfs_fs_inodes", "Inodes in the filesystem.", fc.used_inodes);
  counter("pailfs_fs_reclaimed_files_total", "Deleted files whose data was reclaimed.",
          fc.reclaimed_files);
  counter("pailfs_data_segment_uploads_total", "Segments of file data uploaded.", fc.segment_puts);
  counter("pailfs_data_segment_upload_bytes_total", "Bytes of file data segments uploaded.",
          fc.segment_put_bytes);
  gauge("pailfs_data_segments", "Segments of file data in the bucket.", fc.segments);
  gauge("pailfs_data_segment_bytes", "Bytes of file data segments in the bucket.", fc.segment_bytes);
  gauge("pailfs_data_segment_live_bytes",
        "Bytes of segments that committed file data points at.",
        fc.segment_live_bytes);
  gauge("pailfs_data_segment_garbage_bytes",
        "Bytes of segments no file data points at, awaiting collection.",
        fc.segment_bytes - std::min(fc.segment_bytes, fc.segment_live_bytes));
  counter("pailfs_data_segments_deleted_total", "Dead or orphaned segments deleted.",
          fc.segments_deleted);
  counter("pailfs_data_segments_rewritten_total",
          "Mostly dead segments whose live data was moved out.", fc.segments_relocated);

  metrics::ProtocolMetrics::WriteAll(out);
  return out.text();
}

AdminReply ServerView::Metrics() const {
  return Reply(200, MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
}

AdminReply ServerView::Health() const {
  if (engine_.fenced()) {
    return Reply(503, "fenced: another pailfs server has opened " + bucket_.counts->Describe());
  }
  switch (serving_.load()) {
    case 1: return Reply(200, "ok");
    case 0: return Reply(503, "starting");
    default: return Reply(503, "stopping");
  }
}

AdminReply ServerView::Status(bool json) const {
  const engine::EngineStats st = engine_.stats();
  const fs::FsCounters fc = fs_.counters();
  const RequestCounts run = ledger_.ThisRun();
  const RequestCounts total = ledger_.Total();
  const bool synced = st.last_sync.time_since_epoch().count() != 0;
  const double sync_age =
      synced ? std::chrono::duration<double>(std::chrono::system_clock::now() - st.last_sync).count() : -1;
  std::vector<std::string> nfs = config_.nfs.enabled ? config_.nfs.addresses : std::vector<std::string>{};
  const std::string fuse = config_.fuse.enabled ? config_.fuse.mountpoint : "";
  std::vector<std::string> admin;
  {
    MutexLock lock(&mu_);
    admin = admin_;
  }
  if (json) {
    auto list = [](const std::vector<std::string>& v) {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + JsonString(v[i]);
      return out + "]";
    };
    std::string out = "{";
    out += "\"version\":" + JsonString(PAILFS_VERSION);
    out += ",\"bucket\":" + JsonString(bucket_.counts->Describe());
    out += ",\"epoch\":" + JsonNumber(st.epoch);
    out += ",\"health\":" + JsonString(Health().body.substr(0, Health().body.size() - 1));
    out += ",\"fenced\":" + std::string(st.fenced ? "true" : "false");
    out += ",\"uptime_seconds\":" + JsonNumber(UptimeSeconds());
    out += ",\"nfs\":" + list(nfs);
    out += ",\"fuse\":" + list(fuse.empty() ? std::vector<std::string>{} : std::vector<std::string>{fuse});
    out += ",\"admin\":" + list(admin);
    out += ",\"dirty_bytes\":" + JsonNumber(fc.write_back_bytes);
    out += ",\"wal_pending_bytes\":" + JsonNumber(st.pending_wal_bytes);
    out += ",\"last_sync_age_seconds\":" + (synced ? JsonNumber(sync_age) : std::string("null"));
    out += ",\"disk_cache_bytes\":" + JsonNumber(st.disk_cache_bytes);
    out += ",\"memory_cache_bytes\":" +
           JsonNumber(st.block_cache_bytes + st.segment_memory_bytes);
    out += ",\"used_bytes\":" + JsonNumber(fc.used_bytes);
    out += ",\"inodes\":" + JsonNumber(fc.used_inodes);
    out += ",\"requests_this_run\":" + JsonNumber(run.total_requests());
    out += ",\"requests_total\":" + JsonNumber(total.total_requests());
    out += ",\"bytes_up_this_run\":" + JsonNumber(run.bytes_written());
    out += ",\"bytes_down_this_run\":" + JsonNumber(run.bytes_read());
    return Reply(200, out + "}", "application/json");
  }
  std::string out = fmt::format("pailfs {}: {} (epoch {}), {}\n", PAILFS_VERSION,
                                bucket_.counts->Describe(), st.epoch,
                                Health().body.substr(0, Health().body.size() - 1));
  for (const auto& a : nfs) out += "nfs:      " + a + "\n";
  if (!fuse.empty()) out += "fuse:     " + fuse + "\n";
  for (const auto& a : admin) out += "admin:    " + a + "\n";
  out += fmt::format("files:    {} inodes, {} of data\n", fc.used_inodes, Bytes(fc.used_bytes));
  out += fmt::format("dirty:    {} in the write-back buffer, {} of WAL not yet in the bucket\n",
                     Bytes(fc.write_back_bytes), Bytes(st.pending_wal_bytes));
  out += synced ? fmt::format("synced:   {:.1f} s ago\n", sync_age)
                : std::string("synced:   not since start (nothing was dirty)\n");
  out += fmt::format("cache:    disk {} of {}, memory {} of {}\n", Bytes(st.disk_cache_bytes),
                     Bytes(st.disk_cache_capacity),
                     Bytes(st.block_cache_bytes + st.segment_memory_bytes),
                     Bytes(config_.cache.memory_size_gb * kGiB));
  out += fmt::format("requests: {} this run ({} up, {} down), {} since the bucket was created\n",
                     run.total_requests(), Bytes(run.bytes_written()), Bytes(run.bytes_read()),
                     total.total_requests());
  return Reply(200, out);
}

AdminReply ServerView::Cost(const std::string& provider_id, bool json) const {
  auto provider = FindProvider(provider_id.empty() ? "aws-s3" : provider_id);
  if (!provider.ok()) return Reply(400, provider.status().message());
  CostInput input;
  input.total = ledger_.Total();
  {
    MutexLock lock(&mu_);
    input.observed = ledger_.ThisRun() - at_serving_;
    input.observed_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - serving_since_).count();
  }
  // What the bucket holds, measured by one listing (the only request a
  // report makes; it is counted like any other, after the counts above).
  auto objects = ListAll(*bucket_.raw, "");
  if (!objects.ok()) return Reply(502, "listing the bucket: " + objects.status().ToString());
  for (const auto& o : *objects) input.stored_bytes += o.size;
  input.stored_objects = objects->size();
  CostReport report = ComputeCost(*provider, input);
  return json ? Reply(200, CostJson(report), "application/json") : Reply(200, CostText(report));
}

AdminReply ServerView::Flush() const {
  const auto start = std::chrono::steady_clock::now();
  pail::Status s = fs_.SyncAll();
  if (!s.ok()) return Reply(s.IsFenced() ? 503 : 500, "flush failed: " + s.ToString());
  return Reply(200, fmt::format("durable: everything written before the flush is in the bucket ({:.3f} s)",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
}

AdminHandlers ServerView::Handlers() const {
  AdminHandlers h;
  h.metrics = [this] { return Metrics(); };
  h.health = [this] { return Health(); };
  h.status = [this](bool json) { return Status(json); };
  h.cost = [this](const std::string& p, bool json) { return Cost(p, json); };
  h.flush = [this] { return Flush(); };
  return h;
}

}  // namespace pail::server
