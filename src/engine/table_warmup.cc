#include "engine/table_warmup.h"

#include <algorithm>
#include <chrono>

#include <rocksdb/metadata.h>
#include <spdlog/spdlog.h>

namespace pail::engine {

std::vector<std::string> PlanWarmup(rocksdb::DB& db, const std::set<std::string>& column_families,
                                    uint64_t budget) {
  std::vector<rocksdb::LiveFileMetaData> tables;
  db.GetLiveFilesMetaData(&tables);
  std::erase_if(tables, [&](const rocksdb::LiveFileMetaData& t) {
    return !column_families.count(t.column_family_name);
  });
  // Lookups search level 0 (newest file first), then each level in turn.
  std::sort(tables.begin(), tables.end(), [](const auto& a, const auto& b) {
    if (a.level != b.level) return a.level < b.level;
    return a.largest_seqno > b.largest_seqno;
  });
  std::vector<std::string> files;
  uint64_t planned = 0;
  for (const rocksdb::LiveFileMetaData& t : tables) {
    if (planned + t.size > budget) break;
    planned += t.size;
    // name is "/000123.sst": the database file name, without directory.
    files.push_back(t.name.substr(t.name.rfind('/') + 1));
  }
  return files;
}

uint64_t WarmTables(BucketFileSystem& fs, const std::vector<std::string>& files,
                    const std::function<bool()>& stopping) {
  const auto start = std::chrono::steady_clock::now();
  uint64_t fetched = 0;
  size_t warmed = 0;
  for (const std::string& name : files) {
    if (stopping()) break;
    Result<uint64_t> got = fs.PrefetchFile(name, stopping);
    if (!got.ok()) {
      spdlog::warn("engine: warming the disk cache stopped at {}: {}", name,
                   got.status().ToString());
      break;
    }
    fetched += *got;
    if (*got > 0) warmed++;
  }
  if (warmed > 0) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spdlog::info("engine: {} tables ({:.1f} MiB) read into the disk cache in {:.1f} s", warmed,
                 static_cast<double>(fetched) / (1 << 20), seconds);
  }
  return fetched;
}

}  // namespace pail::engine
