// RequestLedger: object-store request counts that survive restarts, for
// `pailfs cost`.
//
// The cumulative counts live in the bucket as one key of the engine's
// "default" column family (kRequestLedgerKey), rewritten just before each
// upload the engine makes anyway (EngineOptions::sync_record_*): keeping
// them costs no request of its own, and an idle server writes nothing. The
// value is text, one line per operation kind:
//   "pailfs-request-ledger 1\n" then "<op> <requests> <bytes>\n" for each
//   of get, get_range, head, put, put_if_absent, put_if_match, list, delete.
// Unknown op names are ignored, missing ones are zero. What a crash loses
// is at most the requests made since the last upload, like the data.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "engine/engine.h"
#include "objstore/counting_store.h"
#include "util/mutex.h"

namespace pail::server {

inline constexpr std::string_view kRequestLedgerKey = "pailfs.request_ledger";

std::string EncodeLedger(const RequestCounts& counts);
Result<RequestCounts> DecodeLedger(std::string_view text);

class RequestLedger {
 public:
  explicit RequestLedger(std::shared_ptr<CountingStore> counts) : counts_(std::move(counts)) {}

  // Reads the stored totals of earlier runs; until then Record() is empty
  // (so an early upload never overwrites them with this run's counts alone).
  Status Load(engine::Engine& engine);
  // After a failed Load(): earlier runs count as zero from now on.
  void StartFromZero();
  // The value to store now: earlier runs plus this run. Empty before Load().
  std::string Record() const;
  // Earlier runs plus this run, as counted right now.
  RequestCounts Total() const;
  RequestCounts ThisRun() const { return counts_->Snapshot(); }

  // Hooks the ledger into the engine's uploads.
  void Attach(engine::EngineOptions& options);

 private:
  std::shared_ptr<CountingStore> counts_;
  mutable Mutex mu_;
  RequestCounts earlier_ GUARDED_BY(mu_);
  bool loaded_ GUARDED_BY(mu_) = false;
};

}  // namespace pail::server
