// BucketFileSystem's WAL: publishing parts in sequence order, and sealing
// this epoch's own sequence at a clean shutdown.
#include <spdlog/spdlog.h>

#include "engine/bucket_fs.h"
#include "engine/bucket_layout.h"
#include "engine/wal_part.h"
#include "util/failpoint.h"

namespace pail::engine {
namespace {

Status TakenOver(const ObjectStore& store) {
  return Status::Fenced("another process has taken over the bucket " + store.Describe() +
                        "; this server accepts no more writes");
}

}  // namespace

void BucketFileSystem::RecordPublishedPart(uint64_t log_number, const std::string& key) {
  MutexLock lock(&mu_);
  MutexLock parts_lock(&parts_mu_);
  newest_wal_part_ = key;
  if (!wal_states_.count(log_number)) {
    // DeleteFile dropped the log while this part was on its way: nothing
    // will ever list it under the log again, so it is garbage right away
    // (kept by the collector while it is the newest part).
    QueueDeletion({key});
    return;
  }
  wal_parts_by_log_[log_number].push_back(key);
}

// Put-if-absent refused at our own sequence number means one of two things.
// Either a newer writer sealed our sequence (we are fenced), or a part of
// ours landed although its response was lost, and its bytes went back to the
// front of the pending bytes. Only this epoch writes data parts under its
// own keys (the epoch is ours alone), so a data part there is ours: a part of
// this log at this offset whose bytes begin our pending bytes is that lost
// publication, and we move past it; a part of a log RocksDB has dropped
// since is garbage. Anything else is damage and is refused loudly.
Result<size_t> BucketFileSystem::PublishWalPart(uint64_t log_number, uint64_t offset,
                                                std::string_view bytes) {
  if (fenced_) return TakenOver(*store_);
  const std::string key = WalPartKey(epoch_, next_wal_seq_);
  auto put = store_->PutIfAbsent(key, EncodeWalPart(log_number, offset, bytes));
  if (put.ok()) {
    PAIL_FAILPOINT("engine/wal_after_publish");
    ++parts_put_;
    ++next_wal_seq_;
    RecordPublishedPart(log_number, key);
    return bytes.size();
  }
  if (!put.status().IsPreconditionFailed()) return put.status().WithContext("publishing WAL part");
  auto body = store_->Get(key);
  if (!body.ok()) return body.status().WithContext("reading back WAL part " + key);
  PAIL_ASSIGN_OR_RETURN(WalPart found, DecodeWalPart(std::move(*body), key));
  if (found.is_seal) {
    fenced_ = true;
    spdlog::error("writer epoch {} is fenced: epoch {} opened bucket {}; refusing writes", epoch_,
                  found.sealing_epoch, store_->Describe());
    return TakenOver(*store_);
  }
  bool dropped_log;
  {
    MutexLock lock(&mu_);
    dropped_log = found.log_number != log_number && !wal_states_.count(found.log_number);
  }
  bool lost_response = found.log_number == log_number && found.offset == offset &&
                       !found.bytes.empty() && bytes.substr(0, found.bytes.size()) == found.bytes;
  if (!lost_response && !dropped_log) {
    return Status::Corruption("WAL part " + key + " holds bytes this writer did not publish there");
  }
  spdlog::warn("WAL part {} was already in the bucket (a lost response); moving past it", key);
  ++next_wal_seq_;
  RecordPublishedPart(found.log_number, key);
  return lost_response ? found.bytes.size() : 0;
}

// The largest WAL buffer kept between publishes (a burst may grow one
// further; it is freed after publishing).
constexpr size_t kKeptPendingCapacity = 4 << 20;

Status BucketFileSystem::PublishWals() {
  MutexLock publish_lock(&wal_mu_);
  std::vector<std::pair<uint64_t, std::shared_ptr<WalState>>> logs;
  {
    MutexLock lock(&mu_);
    logs.assign(wal_states_.begin(), wal_states_.end());
  }
  const uint64_t parts_before = parts_put_;
  for (auto& [log, state] : logs) {
    std::string bytes;
    uint64_t offset;
    {
      MutexLock lock(&state->mu);
      bytes.swap(state->pending);
      offset = state->published;
    }
    size_t done = 0;
    Status s;
    while (done < bytes.size()) {
      auto published = PublishWalPart(log, offset + done, std::string_view(bytes).substr(done));
      if (!published.ok()) {
        s = published.status();
        break;
      }
      done += *published;
    }
    MutexLock lock(&state->mu);
    state->published += done;
    if (!s.ok()) {
      // Keep the unpublished bytes, in order, for the next attempt.
      state->pending.insert(0, bytes, done, std::string::npos);
      return s;
    }
    // Hand the emptied buffer back when nothing was appended meanwhile, so
    // appends reuse its capacity instead of regrowing it from nothing
    // after every publish (seen as a few percent of a tar's CPU).
    if (state->pending.empty() && bytes.capacity() <= kKeptPendingCapacity) {
      bytes.clear();
      state->pending.swap(bytes);
    }
  }
  // No part went up although the caller has writes to make durable: a
  // flush took them into an SST whose manifest went up before this call.
  // That manifest counts only if no newer writer pinned the bucket's state
  // before it landed, so check that none exists now. (A part created now
  // proves as much: a sealer reads every part before its seal and pins
  // CURRENT after sealing.) Without this, a fenced writer that flushed
  // acknowledged a Sync the newer writer never sees.
  if (parts_put_ == parts_before) return CheckStillWriter();
  return Status::OK();
}

Status BucketFileSystem::SealOwnWal() {
  MutexLock publish_lock(&wal_mu_);
  if (fenced_) return TakenOver(*store_);
  std::string key = WalPartKey(epoch_, next_wal_seq_);
  auto put = store_->PutIfAbsent(key, EncodeWalSeal(epoch_, /*closing=*/true));
  if (put.status().IsPreconditionFailed()) {
    auto body = store_->Get(key);
    if (!body.ok()) return body.status().WithContext("reading back WAL part " + key);
    PAIL_ASSIGN_OR_RETURN(WalPart found, DecodeWalPart(std::move(*body), key));
    if (!found.is_seal || found.sealing_epoch != epoch_) {
      fenced_ = true;
      return TakenOver(*store_);
    }
  } else if (!put.ok()) {
    return put.status().WithContext("sealing this writer's WAL");
  }
  ++next_wal_seq_;
  MutexLock lock(&parts_mu_);
  newest_wal_part_ = key;
  return Status::OK();
}

uint64_t BucketFileSystem::PendingWalBytes() {
  MutexLock lock(&mu_);
  uint64_t total = 0;
  for (auto& [log, state] : wal_states_) {
    MutexLock state_lock(&state->mu);
    total += state->pending.size();
  }
  return total;
}

}  // namespace pail::engine
