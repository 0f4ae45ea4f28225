// BucketFileSystem's garbage collection, and the check that this process
// is still the bucket's writer, which every deletion and every manifest or
// CURRENT upload makes first.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "engine/bucket_files.h"
#include "engine/bucket_fs.h"
#include "engine/bucket_layout.h"
#include "engine/wal_part.h"
#include "util/failpoint.h"

namespace pail::engine {

Status BucketFileSystem::CheckStillWriter() {
  PAIL_ASSIGN_OR_RETURN(auto fences, ListAll(*store_, kFencePrefix));
  for (const auto& meta : fences) {
    auto e = ParseFenceKey(meta.key);
    if (e && *e > epoch_) {
      fenced_ = true;
      spdlog::error("writer epoch {} is fenced: epoch {} opened bucket {}; refusing writes", epoch_,
                    *e, store_->Describe());
      return Status::Fenced("a newer writer (epoch " + std::to_string(*e) + ") owns the bucket " +
                            store_->Describe());
    }
  }
  return Status::OK();
}

std::set<uint64_t> BucketFileSystem::Lineage() {
  MutexLock lock(&mu_);
  std::set<uint64_t> out{epoch_};
  for (const auto& [name, e] : files_) {
    if (e->kind == Entry::Kind::kWhole) out.insert(e->epoch);
  }
  return out;
}

void BucketFileSystem::SetLiveFilesProvider(std::function<std::set<std::string>()> provider) {
  MutexLock lock(&mu_);
  live_files_ = std::move(provider);
}

bool BucketFileSystem::HasGarbage() const {
  MutexLock lock(&mu_);
  return !garbage_.empty() && current_published_;
}

size_t BucketFileSystem::GarbageCount() const {
  MutexLock lock(&mu_);
  return garbage_.size();
}

// Deletes nothing before this epoch's CURRENT is in the bucket: until then
// an opener may still pin an older CURRENT and use what we consider garbage
// (objects outside our lineage, of an opener that never finished). After
// it, every opener pins ours or a newer one.
Status BucketFileSystem::CollectGarbage() {
  if (!current_published_) return Status::OK();
  std::vector<std::string> keys;
  std::function<std::set<std::string>()> live_provider;
  {
    MutexLock lock(&mu_);
    if (garbage_.empty() || fenced_) return Status::OK();
    keys.swap(garbage_);
    keys.insert(keys.end(), retained_wal_parts_.begin(), retained_wal_parts_.end());
    retained_wal_parts_.clear();
    live_provider = live_files_;
  }
  auto requeue = [&](const std::vector<std::string>& back) {
    MutexLock lock(&mu_);
    garbage_.insert(garbage_.end(), back.begin(), back.end());
  };
  // Only the bucket's current owner may delete: a newer writer may still
  // need what this one considers obsolete.
  Status writer = CheckStillWriter();
  if (writer.ok()) writer = Failpoint("engine/gc_after_check");
  if (!writer.ok()) {
    if (!writer.IsFenced()) requeue(keys);
    return writer;
  }
  std::set<std::string> live = live_provider ? live_provider() : std::set<std::string>{};
  std::string newest_part;
  {
    MutexLock lock(&parts_mu_);
    newest_part = newest_wal_part_;
  }
  std::vector<std::string> failed, kept;
  std::sort(keys.begin(), keys.end());  // WAL parts in sequence order
  std::set<uint64_t> stalled;  // epochs whose WAL-part deletion stopped at a failure
  for (const auto& key : keys) {
    // The newest WAL part stays while it is the newest: it tells a future
    // sealer where the sequence ends.
    if (key == newest_part) {
      kept.push_back(key);
      continue;
    }
    auto k = ParseDbKey(key);
    if (k && !k->is_wal_part && live.count(k->file)) {
      // Belt and braces: RocksDB says it still needs a file of this name.
      MutexLock lock(&mu_);
      auto it = files_.find(k->file);
      if (it != files_.end() && !it->second->keys.empty() && it->second->keys.front() == key) continue;
    }
    // A log's parts go in sequence order and stop at a failure, so what is
    // left of a log is always a suffix, which an opener recognises as a
    // dropped log; a hole in the middle then always means damage.
    if (k && k->is_wal_part && stalled.count(k->epoch)) {
      failed.push_back(key);
      continue;
    }
    // The last part before an older epoch's seal: its writer, fenced but
    // perhaps alive and unaware, may be retrying this sequence number after
    // a lost response. A free slot would take its part and let its Sync
    // succeed, though no opener replays anything after the seal. A seal in
    // the slot fences it instead.
    bool end_of_sealed;
    {
      MutexLock lock(&mu_);
      end_of_sealed = ends_of_sealed_wals_.count(key) > 0;
    }
    Status gone = end_of_sealed ? store_->Put(key, EncodeWalSeal(epoch_)).status() : store_->Delete(key);
    if (gone.ok() && end_of_sealed) {
      MutexLock lock(&mu_);
      ends_of_sealed_wals_.erase(key);
    }
    if (!gone.ok()) {
      failed.push_back(key);
      if (k && k->is_wal_part) stalled.insert(k->epoch);
    }
  }
  requeue(failed);
  MutexLock lock(&mu_);
  // Kept parts wait outside garbage_, so they alone never wake the collector.
  retained_wal_parts_.insert(retained_wal_parts_.end(), kept.begin(), kept.end());
  return Status::OK();
}

}  // namespace pail::engine
