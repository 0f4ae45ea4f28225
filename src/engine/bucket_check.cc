#include "engine/bucket_check.h"

#include <map>

#include "engine/bucket_layout.h"
#include "engine/current_object.h"
#include "engine/wal_part.h"

namespace pail::engine {
namespace {

// What opening would use: the newest CURRENT, its lineage and the object
// each file name maps to (the highest lineage epoch holding it).
struct Pinned {
  uint64_t epoch = 0;
  std::string manifest;
  std::set<uint64_t> lineage;
  std::map<std::string, std::string> file_keys;  // name -> key
};

void CheckWal(ObjectStore& store, const std::vector<ObjectMeta>& listing, BucketReport* report) {
  std::map<uint64_t, std::map<uint64_t, ObjectMeta>> parts;  // epoch -> seq -> object
  for (const auto& meta : listing) {
    auto k = ParseDbKey(meta.key);
    if (k && k->is_wal_part) parts[k->epoch][k->wal_seq] = meta;
  }
  for (auto& [epoch, seqs] : parts) {
    if (seqs.size() == 1 && IsSealSize(seqs.begin()->second.size)) {
      if (seqs.begin()->second.size == kWalClosingSealBytes) report->garbage.push_back(seqs.begin()->second.key);
      continue;
    }
    WalContinuity continuity;
    for (auto& [seq, meta] : seqs) {
      auto body = store.Get(meta.key);
      if (!body.ok()) {
        report->problems.push_back("WAL part " + meta.key + ": " + body.status().ToString());
        break;
      }
      ++report->wal_parts_read;
      auto part = DecodeWalPart(std::move(*body), meta.key);
      if (!part.ok()) {
        report->problems.push_back(part.status().ToString());
        break;
      }
      if (part->is_seal) break;
      auto replay = continuity.Accept(*part, meta.key);
      if (!replay.ok()) {
        report->problems.push_back(replay.status().ToString());
        break;
      }
    }
  }
}

}  // namespace

Result<BucketReport> CheckBucket(ObjectStore& store, const std::set<std::string>& live_files) {
  BucketReport report;
  PAIL_ASSIGN_OR_RETURN(auto fences, ListAll(store, kFencePrefix));
  PAIL_ASSIGN_OR_RETURN(auto listing, ListAll(store, kDbPrefix));
  uint64_t newest_fence = 0;
  for (const auto& meta : fences) {
    if (auto e = ParseFenceKey(meta.key)) newest_fence = std::max(newest_fence, *e);
  }
  for (const auto& meta : fences) {
    auto e = ParseFenceKey(meta.key);
    if (!e) report.notes.push_back("not a pailfs object, skipped: " + meta.key);
    if (e && *e < newest_fence) report.garbage.push_back(meta.key);
  }
  Pinned pinned;
  std::string evidence;
  for (const auto& meta : listing) {
    auto k = ParseDbKey(meta.key);
    if (!k) {
      report.notes.push_back("not a pailfs object, skipped: " + meta.key);
      continue;
    }
    if (!k->is_wal_part && k->file == kCurrentFile) pinned.epoch = std::max(pinned.epoch, k->epoch);
    bool data = k->is_wal_part ? !IsSealSize(meta.size) : IsTableOrBlob(k->file);
    if (data && evidence.empty()) evidence = meta.key;
  }
  report.current_epoch = pinned.epoch;
  CheckWal(store, listing, &report);
  if (pinned.epoch == 0) {
    if (!evidence.empty()) {
      report.problems.push_back("database files (" + evidence +
                                " and maybe more) but no CURRENT: the bucket will not open; restore "
                                "db/<epoch>/CURRENT from a backup or version history");
    } else {
      report.notes.push_back("no database yet");
    }
    return report;
  }
  const std::string current_key = FileKey(pinned.epoch, kCurrentFile);
  auto body = store.Get(current_key);
  if (!body.ok()) {
    report.problems.push_back(current_key + ": " + body.status().ToString());
    return report;
  }
  auto current = DecodeCurrentObject(*body, current_key);
  if (!current.ok()) {
    report.problems.push_back(current.status().ToString());
    return report;
  }
  pinned.manifest = current->manifest;
  if (current->lineage) {
    pinned.lineage = *current->lineage;
  } else {
    for (uint64_t e = 1; e <= pinned.epoch; ++e) pinned.lineage.insert(e);
  }
  pinned.lineage.insert(pinned.epoch);
  auto manifest = store.Get(FileKey(pinned.epoch, pinned.manifest));
  if (!manifest.ok()) {
    report.problems.push_back(current_key + " names " + pinned.manifest + ": " +
                              manifest.status().ToString() + "; the bucket will not open");
  }
  for (const auto& meta : listing) {
    auto k = ParseDbKey(meta.key);
    if (!k || k->is_wal_part) continue;
    if (k->epoch > pinned.epoch) {
      report.garbage.push_back(meta.key + " (an opener that never finished)");
      continue;
    }
    if (!pinned.lineage.count(k->epoch) || (k->file == kCurrentFile && k->epoch != pinned.epoch)) {
      report.garbage.push_back(meta.key);
      continue;
    }
    auto& slot = pinned.file_keys[k->file];
    if (!slot.empty()) report.garbage.push_back(slot + " (shadowed by " + meta.key + ")");
    slot = meta.key;  // the listing is in epoch order: the highest wins
  }
  for (const auto& name : live_files) {
    auto it = pinned.file_keys.find(name);
    if (it == pinned.file_keys.end()) {
      report.problems.push_back("the database uses " + name + ", which no object of epochs " +
                                "in the lineage of " + current_key + " holds");
      continue;
    }
    auto k = ParseDbKey(it->second);
    if (!k || !pinned.lineage.count(k->epoch)) {
      report.problems.push_back(name + " maps to " + it->second + ", outside the lineage");
      continue;
    }
    auto file = store.Get(it->second);
    if (!file.ok()) {
      report.problems.push_back(it->second + ": " + file.status().ToString());
      continue;
    }
    ++report.files_checked;
  }
  return report;
}

}  // namespace pail::engine
