// What the admin endpoint answers, from the running server's parts: the
// metrics page, health, status, cost and flush. Everything but cost (one
// listing of the bucket) and flush (an upload when anything is dirty) reads
// memory only, so scraping never sends a request to the bucket.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fs/filesystem.h"
#include "server/admin_server.h"
#include "server/bucket.h"
#include "server/config.h"
#include "server/request_ledger.h"
#include "util/mutex.h"

namespace pail::server {

class ServerView {
 public:
  ServerView(const Config& config, const Bucket& bucket, engine::Engine& engine,
             fs::FileSystem& filesystem, const RequestLedger& ledger);

  // Health is 503 "starting" until set, and "stopping" after.
  // Also starts the observation window of cost projections: opening the
  // bucket costs requests once per start, not every month.
  void SetServing(bool serving);
  void SetAdminListening(std::vector<std::string> listening) {
    MutexLock lock(&mu_);
    admin_ = std::move(listening);
  }

  std::string MetricsText() const;
  AdminReply Metrics() const;
  AdminReply Health() const;
  AdminReply Status(bool json) const;
  AdminReply Cost(const std::string& provider, bool json) const;
  AdminReply Flush() const;

  AdminHandlers Handlers() const;

 private:
  double UptimeSeconds() const;

  const Config& config_;
  const Bucket& bucket_;
  engine::Engine& engine_;
  fs::FileSystem& fs_;
  const RequestLedger& ledger_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<int> serving_{0};  // 0 starting, 1 serving, 2 stopping
  mutable Mutex mu_;
  std::vector<std::string> admin_ GUARDED_BY(mu_);
  RequestCounts at_serving_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point serving_since_ GUARDED_BY(mu_) = started_;
};

}  // namespace pail::server
