#include "sim_store.h"

namespace pail::sim {

std::shared_ptr<MemoryStore> SimBucket::Snapshot() {
  std::lock_guard lock(mu_);
  auto copy = std::make_shared<MemoryStore>();
  auto listing = ListAll(*objects_, "");
  if (!listing.ok()) return copy;
  for (const auto& meta : *listing) {
    auto body = objects_->Get(meta.key);
    if (body.ok()) (void)copy->Put(meta.key, *body);
  }
  return copy;
}

template <typename Fn>
auto SimBucket::Serve(Fn request) -> decltype(request(std::declval<MemoryStore&>())) {
  std::lock_guard lock(mu_);
  ++requests_;
  auto result = request(*objects_);
  LandDueLocked();
  return result;
}

void SimBucket::Hold(Late request) {
  std::lock_guard lock(mu_);
  request.lands_after += requests_;
  Trace("  request " + std::to_string(requests_) + ": held in flight until request " +
        std::to_string(request.lands_after) + ": " + request.key);
  late_.push_back(std::move(request));
}

void SimBucket::LandDueLocked() {
  for (auto it = late_.begin(); it != late_.end();) {
    if (it->lands_after > requests_) {
      ++it;
      continue;
    }
    auto newest = landed_sent_.find(it->key);
    if (!late_overwrites_ && newest != landed_sent_.end() && newest->second > it->sent) {
      Trace("  late request superseded at request " + std::to_string(requests_) + ": " + it->key);
      it = late_.erase(it);
      continue;
    }
    Trace("  late request lands at request " + std::to_string(requests_) + ": " + it->key);
    Landed(it->key, it->sent);
    switch (it->kind) {
      case Late::Kind::kPut:
        if (objects_->Put(it->key, it->body).ok()) NoteWritten(it->key);
        break;
      case Late::Kind::kPutIfAbsent:
        if (objects_->PutIfAbsent(it->key, it->body).ok()) NoteWritten(it->key);
        break;
      case Late::Kind::kDelete:
        if (objects_->Head(it->key).ok()) NoteDeleted(it->key);
        (void)objects_->Delete(it->key);
        break;
    }
    it = late_.erase(it);
  }
}

void SimBucket::LandAll() {
  std::lock_guard lock(mu_);
  for (auto& late : late_) late.lands_after = 0;
  LandDueLocked();
}

uint64_t SimBucket::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

uint64_t SimBucket::Send() {
  std::lock_guard lock(mu_);
  return ++sent_;
}

void SimBucket::Landed(const std::string& key, uint64_t sent) {
  std::lock_guard lock(mu_);
  uint64_t& newest = landed_sent_[key];
  newest = std::max(newest, sent);
}

uint64_t SimBucket::mutations() const {
  std::lock_guard lock(mu_);
  return mutations_;
}

uint64_t SimBucket::total_bytes() {
  std::lock_guard lock(mu_);
  uint64_t total = 0;
  auto listing = ListAll(*objects_, "");
  if (listing.ok()) {
    for (const auto& meta : *listing) total += meta.size;
  }
  for (const auto& late : late_) total += late.body.size();
  return total;
}

size_t SimBucket::in_flight() const {
  std::lock_guard lock(mu_);
  return late_.size();
}

std::vector<std::pair<uint64_t, std::string>> SimBucket::deletes() const {
  std::lock_guard lock(mu_);
  return deletes_;
}

bool SimBucket::ever_written(const std::string& key) const {
  std::lock_guard lock(mu_);
  return written_.count(key) > 0;
}

std::set<std::string> SimBucket::ever_written_keys() const {
  std::lock_guard lock(mu_);
  return written_;
}

void SimBucket::NoteWritten(const std::string& key) {
  std::lock_guard lock(mu_);
  ++mutations_;
  written_.insert(key);
}

void SimBucket::NoteDeleted(const std::string& key) {
  std::lock_guard lock(mu_);
  ++mutations_;
  deletes_.push_back({requests_, key});
  Trace("  request " + std::to_string(requests_) + ": deleted " + key);
}

SimConnection::SimConnection(std::shared_ptr<SimBucket> bucket, uint64_t seed, FaultProfile faults)
    : bucket_(std::move(bucket)), faults_(faults), rng_(seed) {}

void SimConnection::Cut() {
  std::lock_guard lock(mu_);
  cut_ = true;
}

void SimConnection::CutAtRequest(uint64_t n) {
  std::lock_guard lock(mu_);
  cut_at_ = n;
}

bool SimConnection::cut() const {
  std::lock_guard lock(mu_);
  return cut_;
}

uint64_t SimConnection::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

SimConnection::Fate SimConnection::Decide(bool can_be_late, uint64_t* late_by) {
  std::lock_guard lock(mu_);
  // Every request draws the same number of values, whatever its fate, so
  // that one request's fate does not shift the draws of all later ones.
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  const double fate = coin(rng_);
  const bool dying_request_lands = coin(rng_) < 0.5;
  *late_by = 1 + rng_() % 24;
  const uint64_t n = requests_++;
  if (cut_) return Fate::kCut;
  if (n >= cut_at_) {
    cut_ = true;
    // The crash came while this request was on the wire: it may land.
    return dying_request_lands ? Fate::kAmbiguous : Fate::kCut;
  }
  if (fate < faults_.fail) return Fate::kFail;
  if (fate < faults_.fail + faults_.ambiguous) return Fate::kAmbiguous;
  if (can_be_late && fate < faults_.fail + faults_.ambiguous + faults_.late) return Fate::kLate;
  return Fate::kDeliver;
}

template <typename Fn>
auto SimConnection::Run(bool can_be_late, const SimBucket::Late& as_late, Fn request)
    -> decltype(request(std::declval<MemoryStore&>())) {
  uint64_t late_by = 0;
  Fate fate = Decide(can_be_late, &late_by);
  const bool crashed = cut();
  const uint64_t sent = can_be_late ? bucket_->Send() : 0;
  auto serve = [&] {
    if (can_be_late) bucket_->Landed(as_late.key, sent);
    return bucket_->Serve(request);
  };
  switch (fate) {
    case Fate::kCut:
      return Status::IOError("sim: connection cut (the writer crashed)");
    case Fate::kFail:
      return Status::Retryable("sim: request failed before reaching the bucket");
    case Fate::kLate: {
      SimBucket::Late held = as_late;
      held.lands_after = late_by;
      held.sent = sent;
      bucket_->Hold(std::move(held));
      return Status::Retryable("sim: request timed out (it is still in flight)");
    }
    case Fate::kAmbiguous:
      (void)serve();
      if (crashed) return Status::IOError("sim: connection cut (the writer crashed)");
      return Status::Retryable("sim: request landed but its reply was lost");
    case Fate::kDeliver:
      break;
  }
  return serve();
}

namespace {
const SimBucket::Late kNotAWrite{SimBucket::Late::Kind::kPut, "", "", 0};
}  // namespace

Result<std::string> SimConnection::Get(const std::string& key) {
  return Run(false, kNotAWrite, [&](MemoryStore& m) { return m.Get(key); });
}

Result<std::string> SimConnection::GetRange(const std::string& key, uint64_t offset,
                                            uint64_t length) {
  return Run(false, kNotAWrite, [&](MemoryStore& m) { return m.GetRange(key, offset, length); });
}

Result<ObjectMeta> SimConnection::Head(const std::string& key) {
  return Run(false, kNotAWrite, [&](MemoryStore& m) { return m.Head(key); });
}

Result<std::string> SimConnection::Put(const std::string& key, std::string_view body) {
  SimBucket::Late late{SimBucket::Late::Kind::kPut, key, std::string(body), 0};
  return Run(true, late, [&](MemoryStore& m) {
    auto r = m.Put(key, body);
    if (r.ok()) bucket_->NoteWritten(key);
    return r;
  });
}

Result<std::string> SimConnection::PutIfAbsent(const std::string& key, std::string_view body) {
  SimBucket::Late late{SimBucket::Late::Kind::kPutIfAbsent, key, std::string(body), 0};
  return Run(true, late, [&](MemoryStore& m) {
    auto r = m.PutIfAbsent(key, body);
    if (r.ok()) bucket_->NoteWritten(key);
    return r;
  });
}

Result<std::string> SimConnection::PutIfMatch(const std::string& key, std::string_view body,
                                              const std::string& etag) {
  // The engine does not use it; served without a late variant.
  return Run(false, kNotAWrite, [&](MemoryStore& m) {
    auto r = m.PutIfMatch(key, body, etag);
    if (r.ok()) bucket_->NoteWritten(key);
    return r;
  });
}

Result<ListPage> SimConnection::List(const std::string& prefix, const std::string& token,
                                     int max_keys) {
  return Run(false, kNotAWrite, [&](MemoryStore& m) { return m.List(prefix, token, max_keys); });
}

Status SimConnection::Delete(const std::string& key) {
  SimBucket::Late late{SimBucket::Late::Kind::kDelete, key, "", 0};
  return Run(true, late, [&](MemoryStore& m) {
    if (m.Head(key).ok()) bucket_->NoteDeleted(key);
    return m.Delete(key);
  });
}

}  // namespace pail::sim
