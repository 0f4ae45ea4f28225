// The simulated bucket of the engine simulation (sim_test.cc).
//
// SimBucket is one in-memory bucket (a MemoryStore) shared by every
// simulated writer. Each writer reaches it through its own SimConnection,
// which decides the fate of every request from a PRNG seeded with
// (run seed, connection id), drawn once per request in the order the
// connection issues them:
//  - delivered: reaches the bucket, the reply comes back;
//  - failed: never reaches the bucket, a retryable error comes back;
//  - ambiguous: reaches the bucket, but the caller is told it failed;
//  - late: a write or delete is held in the bucket's in-flight queue and the
//    caller gets a timeout now; the request takes effect only after a seeded
//    number of later requests (from any connection) were served, so writes
//    land in an order other than the one they were sent in.
// A connection can be cut (the writer crashed): from then on every request
// fails at once, non-retryably, and none reaches the bucket; requests it
// left in flight may still land. A cut can also be armed to happen at the
// n-th request, which crashes a writer at an exact step, also mid-open.
//
// The bucket records every key ever written and every delete that landed,
// so the test can tell which step deleted an object that is still needed.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "objstore/memory_store.h"

namespace pail::sim {

// Per-request fault probabilities of one connection.
struct FaultProfile {
  double fail = 0;       // clean retryable failure
  double ambiguous = 0;  // landed, reported failed
  double late = 0;       // writes and deletes: lands after later requests
};

class SimBucket {
 public:
  SimBucket() : objects_(std::make_shared<MemoryStore>()) {}

  MemoryStore& objects() { return *objects_; }
  // A copy of the current contents, to open a checker on without disturbing
  // the simulated writers.
  std::shared_ptr<MemoryStore> Snapshot();

  // Runs one request against the bucket and lets due in-flight requests land.
  template <typename Fn>
  auto Serve(Fn request) -> decltype(request(std::declval<MemoryStore&>()));

  struct Late {
    enum class Kind { kPut, kPutIfAbsent, kDelete } kind;
    std::string key;
    std::string body;
    uint64_t lands_after;  // the request count at which it lands
    uint64_t sent = 0;     // send order among writes (SimBucket::Send)
  };
  // Numbers a write or delete in the order it was sent.
  uint64_t Send();
  // A write or delete sent as number `sent` took effect on `key`.
  void Landed(const std::string& key, uint64_t sent);
  // Whether a late request overwrites a newer write of the same key that
  // landed first. Off by default: the store orders writes of one key by
  // when they were sent, as S3's "latest timestamp wins" suggests. On, the
  // engine's overwritten objects (CURRENT, MANIFEST) can be rolled back by a
  // retried request's first attempt (PAIL_SIM_LATE_OVERWRITES=1).
  void set_late_overwrites(bool on) { late_overwrites_ = on; }
  void Hold(Late request);
  // Lets every in-flight request land now (used at the end of a run).
  void LandAll();

  uint64_t requests() const;
  // Counts writes and deletes that landed: the contents changed since a
  // reading of it iff it moved.
  uint64_t mutations() const;
  uint64_t total_bytes();
  size_t in_flight() const;
  // Deletes that landed, in order, with the request count they landed at.
  std::vector<std::pair<uint64_t, std::string>> deletes() const;
  bool ever_written(const std::string& key) const;
  std::set<std::string> ever_written_keys() const;
  void NoteWritten(const std::string& key);
  void NoteDeleted(const std::string& key);
  // Called with a line for each late request held or landed and each delete.
  void SetTrace(std::function<void(const std::string&)> trace) { trace_ = std::move(trace); }
  void Trace(const std::string& what) {
    if (trace_) trace_(what);
  }

 private:
  void LandDueLocked();

  std::shared_ptr<MemoryStore> objects_;
  mutable std::recursive_mutex mu_;
  uint64_t requests_ = 0;
  uint64_t mutations_ = 0;
  uint64_t sent_ = 0;
  bool late_overwrites_ = false;
  std::map<std::string, uint64_t> landed_sent_;  // key -> newest landed write's send number
  std::deque<Late> late_;
  std::set<std::string> written_;
  std::vector<std::pair<uint64_t, std::string>> deletes_;
  std::function<void(const std::string&)> trace_;
};

class SimConnection : public ObjectStore {
 public:
  SimConnection(std::shared_ptr<SimBucket> bucket, uint64_t seed, FaultProfile faults);

  // Crash: every later request fails without reaching the bucket.
  void Cut();
  // Crash at this connection's `n`-th request (0-based), that request
  // included: it is dropped or, by the PRNG, lands with no reply.
  void CutAtRequest(uint64_t n);
  bool cut() const;
  uint64_t requests() const;

  Result<std::string> Get(const std::string& key) override;
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  Result<ObjectMeta> Head(const std::string& key) override;
  Result<std::string> Put(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfAbsent(const std::string& key, std::string_view body) override;
  Result<std::string> PutIfMatch(const std::string& key, std::string_view body,
                                 const std::string& etag) override;
  Result<ListPage> List(const std::string& prefix, const std::string& token, int max_keys) override;
  Status Delete(const std::string& key) override;
  std::string Describe() const override { return "sim://bucket"; }

 private:
  enum class Fate { kDeliver, kFail, kAmbiguous, kLate, kCut };
  // Draws the fate of the next request; `can_be_late` for writes and deletes.
  Fate Decide(bool can_be_late, uint64_t* late_by);
  template <typename Fn>
  auto Run(bool can_be_late, const SimBucket::Late& as_late, Fn request)
      -> decltype(request(std::declval<MemoryStore&>()));

  std::shared_ptr<SimBucket> bucket_;
  FaultProfile faults_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;
  uint64_t requests_ = 0;
  bool cut_ = false;
  uint64_t cut_at_ = UINT64_MAX;
};

}  // namespace pail::sim
