// BucketFileSystem::Open's work: claim an epoch, seal the older epochs'
// WALs, pin the newest CURRENT and rebuild the file namespace from it.
#include <algorithm>
#include <ctime>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "engine/bucket_files.h"
#include "engine/bucket_fs.h"
#include "engine/bucket_layout.h"
#include "engine/current_object.h"
#include "engine/local_file.h"
#include "engine/wal_part.h"
#include "util/failpoint.h"

namespace pail::engine {
namespace {

constexpr int kMaxEpochClaimAttempts = 100;

uint64_t NowSeconds() { return static_cast<uint64_t>(std::time(nullptr)); }

void WarnForeign(const ObjectStore& store, const std::string& key) {
  spdlog::warn("bucket {}: ignoring '{}', which is not a pailfs object (a folder marker?)",
               store.Describe(), key);
}

}  // namespace

Status BucketFileSystem::ClaimEpoch() {
  for (int attempt = 0; attempt < kMaxEpochClaimAttempts; ++attempt) {
    PAIL_ASSIGN_OR_RETURN(auto fences, ListAll(*store_, kFencePrefix));
    uint64_t newest = 0;
    for (const auto& meta : fences) {
      auto e = ParseFenceKey(meta.key);
      if (!e) WarnForeign(*store_, meta.key);
      if (e) newest = std::max(newest, *e);
    }
    const uint64_t candidate = newest + 1;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string owner = std::string(host) + " pid " + std::to_string(::getpid()) + " at " +
                        std::to_string(NowSeconds());
    auto put = store_->PutIfAbsent(FenceKey(candidate), owner);
    if (!put.ok()) {
      if (!put.status().IsPreconditionFailed()) return put.status().WithContext("claiming writer epoch");
      continue;
    }
    // Fences below the newest are collected, so a number claimed and
    // collected since our listing could have been claimed again: the claim
    // holds only if no fence is newer (the newest is never collected).
    PAIL_ASSIGN_OR_RETURN(auto after, ListAll(*store_, kFencePrefix));
    std::vector<uint64_t> older;
    bool overtaken = false;
    for (const auto& meta : after) {
      auto e = ParseFenceKey(meta.key);
      if (e && *e > candidate) overtaken = true;
      if (e && *e < candidate) older.push_back(*e);
    }
    if (overtaken) continue;  // our fence is junk below the newest; its owner collects it
    epoch_ = candidate;
    older_fences_ = std::move(older);
    PAIL_FAILPOINT("engine/open_after_claim");
    return Status::OK();
  }
  return Status::Retryable("could not claim a writer epoch: too many concurrent openers");
}

// Reads every older epoch's WAL parts in order, sealing each epoch that has
// no seal yet, and writes each log's bytes to a pinned local file.
// `logs` receives, per epoch, (log number, part key) in sequence order.
Status BucketFileSystem::SealOlderEpochs(
    const std::vector<ObjectMeta>& listing,
    std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>>* logs) {
  std::map<uint64_t, std::map<uint64_t, ObjectMeta>> parts;  // epoch -> seq -> object
  // Epochs that may still have a live writer: a fence or a part. Epochs with
  // neither were sealed and collected by an earlier opener.
  for (uint64_t e : older_fences_) parts[e];
  for (const auto& meta : listing) {
    auto k = ParseDbKey(meta.key);
    if (!k || !k->is_wal_part || k->epoch >= epoch_) continue;
    parts[k->epoch][k->wal_seq] = meta;
  }
  for (auto& [epoch, seqs] : parts) {
    // A finished epoch (sealed, its data collected) costs no request: nothing
    // can follow a seal, so there is nothing to read or to seal. A closing
    // seal is collected too: its writer will publish nothing more.
    // (A sealed epoch's last data part is overwritten by a seal when it is
    // collected, bucket_gc.cc: two seals are finished too.)
    const bool only_seals = !seqs.empty() && std::all_of(seqs.begin(), seqs.end(), [](const auto& p) {
      return IsSealSize(p.second.size);
    });
    if (only_seals) {
      if (seqs.size() == 1 && seqs.begin()->second.size == kWalClosingSealBytes) {
        MutexLock lock(&mu_);
        QueueDeletion({seqs.begin()->second.key});
      }
      continue;
    }
    WalContinuity continuity;
    std::string last_data_key;  // the data part just before the seal
    // Listed parts in order (gaps are parts of dropped logs), then the
    // sequence's end, which is sealed unless the writer gets there first.
    std::vector<uint64_t> order;
    for (auto& [seq, meta] : seqs) order.push_back(seq);
    uint64_t end = order.empty() ? 0 : order.back() + 1;
    for (size_t i = 0;; ++i) {
      bool listed = i < order.size();
      uint64_t seq = listed ? order[i] : end++;
      std::string key = WalPartKey(epoch, seq);
      Result<std::string> body = Status::NotFound(key);
      if (listed) {
        body = store_->Get(key);
        if (!body.ok() && body.status().IsNotFound()) continue;  // deleted since the listing
      } else {
        auto sealed = store_->PutIfAbsent(key, EncodeWalSeal(epoch_));
        if (sealed.ok()) break;
        if (!sealed.status().IsPreconditionFailed()) return sealed.status().WithContext("sealing WAL");
        body = store_->Get(key);
      }
      if (!body.ok()) return body.status().WithContext("reading WAL part " + key);
      PAIL_ASSIGN_OR_RETURN(WalPart part, DecodeWalPart(std::move(*body), key));
      if (part.is_seal) break;
      (*logs)[epoch].push_back({part.log_number, key});
      last_data_key = key;
      auto replay = continuity.Accept(part, key);
      if (!replay.ok()) {
        return replay.status().WithContext(
            "refusing to open so that nothing is lost or deleted; restore the missing object "
            "(see `pailfs fsck`)");
      }
      if (!*replay) continue;
      std::string path = cache_dir_ + "/pinned/" + PadNumber(epoch) + "-" + LogFileName(part.log_number);
      PAIL_RETURN_IF_ERROR(WriteLocalFile(path, part.bytes, /*append=*/true));
    }
    if (!last_data_key.empty()) {
      MutexLock lock(&mu_);
      ends_of_sealed_wals_.insert(last_data_key);
    }
  }
  // Every older epoch is sealed now; its fence has done its job.
  MutexLock lock(&mu_);
  for (uint64_t e : older_fences_) QueueDeletion({FenceKey(e)});
  return Status::OK();
}

Status BucketFileSystem::RebuildNamespace(
    const std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>>& wal_parts) {
  // Which CURRENT? The newest epoch's: each open writes a CURRENT of its own
  // before it acknowledges anything.
  PAIL_ASSIGN_OR_RETURN(auto first_listing, ListAll(*store_, kDbPrefix));
  uint64_t current_epoch = 0;
  std::string evidence;  // an object that only a database that had a CURRENT holds
  for (const auto& meta : first_listing) {
    auto k = ParseDbKey(meta.key);
    if (!k || k->epoch >= epoch_) continue;
    if (!k->is_wal_part && k->file == kCurrentFile) current_epoch = std::max(current_epoch, k->epoch);
    bool data = k->is_wal_part ? !IsSealSize(meta.size) : IsTableOrBlob(k->file);
    if (data && evidence.empty()) evidence = meta.key;
  }
  if (current_epoch == 0 && !evidence.empty()) {
    // A newer opener that finished while we were sealing may have collected
    // every CURRENT older than ours: then we are overtaken, not damaged.
    PAIL_RETURN_IF_ERROR(CheckStillWriter());
    // RocksDB would start an empty database and delete every file it finds.
    return Status::Corruption(
        "bucket " + store_->Describe() + " holds database files (" + evidence +
        " and maybe more) but no CURRENT object naming their manifest. Refusing to open: "
        "opening would start an empty database and delete them. Nothing was deleted; restore "
        "db/<epoch>/CURRENT from a backup or version history (`pailfs fsck` lists what is there)");
  }
  fresh_ = current_epoch == 0;
  // Pin CURRENT and its MANIFEST before listing the files they reference:
  // a manifest is uploaded only after its files, so the listing below
  // cannot miss one.
  std::set<uint64_t> lineage;
  std::string manifest_name;
  auto pin = [&](uint64_t epoch, const std::string& name, std::string body) REQUIRES(mu_) {
    std::string path = cache_dir_ + "/pinned/" + name;
    PAIL_RETURN_IF_ERROR(WriteLocalFile(path, body));
    auto e = std::make_shared<Entry>();
    e->kind = Entry::Kind::kWhole;
    e->size = body.size();
    e->epoch = epoch;
    e->keys = {FileKey(epoch, name)};
    e->local_path = path;
    e->mtime = NowSeconds();
    files_[name] = e;
    return Status::OK();
  };
  if (current_epoch != 0) {
    const std::string current_key = FileKey(current_epoch, kCurrentFile);
    PAIL_ASSIGN_OR_RETURN(std::string body, store_->Get(current_key));
    PAIL_ASSIGN_OR_RETURN(CurrentObject current, DecodeCurrentObject(body, current_key));
    manifest_name = current.manifest;
    if (current.lineage) {
      lineage = *current.lineage;
    } else {
      for (uint64_t e = 1; e <= current_epoch; ++e) lineage.insert(e);
    }
    lineage.insert(current_epoch);
    PAIL_RETURN_IF_ERROR(pin(current_epoch, kCurrentFile, current.rocksdb_current));
    auto manifest = store_->Get(FileKey(current_epoch, manifest_name));
    if (!manifest.ok() && manifest.status().IsNotFound()) {
      return Status::Corruption("bucket " + store_->Describe() + ": " + current_key + " names " +
                                manifest_name + ", which is not in the bucket. Refusing to open; " +
                                "nothing was deleted (see `pailfs fsck`)");
    }
    if (!manifest.ok()) return manifest.status().WithContext("reading " + manifest_name);
    PAIL_RETURN_IF_ERROR(pin(current_epoch, manifest_name, std::move(*manifest)));
  }

  PAIL_ASSIGN_OR_RETURN(auto listing, ListAll(*store_, kDbPrefix));
  for (const auto& meta : listing) {
    auto k = ParseDbKey(meta.key);
    if (!k || k->is_wal_part || k->epoch >= epoch_) continue;
    if (meta.key == FileKey(current_epoch, kCurrentFile) ||
        meta.key == FileKey(current_epoch, manifest_name)) {
      continue;  // pinned above
    }
    // Outside the lineage (an opener that never finished, a writer's files
    // the pinned state never took), an older CURRENT, a temp file, or a log
    // (logs come from WAL parts): nothing the pinned state uses. Deleted
    // once our own CURRENT is in the bucket (bucket_gc.cc).
    if (!lineage.count(k->epoch) || k->file == kCurrentFile || EndsWith(k->file, kTempSuffix) ||
        LogNumberOf(k->file)) {
      QueueDeletion({meta.key});
      continue;
    }
    auto& slot = files_[k->file];
    if (slot && slot->epoch > k->epoch) {  // the newer lineage epoch's file is live
      QueueDeletion({meta.key});
      continue;
    }
    if (slot) QueueDeletion(slot->keys);
    auto e = std::make_shared<Entry>();
    e->kind = Entry::Kind::kWhole;
    e->size = meta.size;
    e->epoch = k->epoch;
    e->keys = {meta.key};
    e->mtime = NowSeconds();
    slot = e;
  }
  // Logs: one per (epoch, log number); only those whose parts start at 0.
  for (const auto& [epoch, parts] : wal_parts) {
    std::map<uint64_t, std::vector<std::string>> by_log;
    for (const auto& [log, key] : parts) by_log[log].push_back(key);
    for (auto& [log, keys] : by_log) {
      std::string name = LogFileName(log);
      std::string path = cache_dir_ + "/pinned/" + PadNumber(epoch) + "-" + name;
      auto e = std::make_shared<Entry>();
      e->kind = Entry::Kind::kWal;
      e->epoch = epoch;
      e->keys = std::move(keys);
      e->mtime = NowSeconds();
      std::error_code ec;
      uint64_t size = std::filesystem::file_size(path, ec);
      if (ec) {
        // Every byte of it was deleted already: only the objects remain to go.
        QueueDeletion(e->keys);
        continue;
      }
      e->size = size;
      e->local_path = path;
      auto& slot = files_[name];
      if (slot && slot->epoch > epoch) continue;
      slot = e;
    }
  }
  return Status::OK();
}

Status BucketFileSystem::Recover() {
  PAIL_RETURN_IF_ERROR(ClaimEpoch());
  PAIL_ASSIGN_OR_RETURN(auto listing, ListAll(*store_, kDbPrefix));
  for (const auto& meta : listing) {
    if (!ParseDbKey(meta.key)) WarnForeign(*store_, meta.key);
  }
  std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>> wal_parts;
  PAIL_RETURN_IF_ERROR(SealOlderEpochs(listing, &wal_parts));
  PAIL_FAILPOINT("engine/open_after_seal");
  MutexLock lock(&mu_);
  PAIL_RETURN_IF_ERROR(RebuildNamespace(wal_parts));
  spdlog::info("bucket {}: writer epoch {}, {} database files", store_->Describe(), epoch_,
               files_.size());
  return Status::OK();
}

}  // namespace pail::engine
