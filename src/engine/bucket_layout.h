// Names of the objects the engine keeps in the bucket.
//
//   fence/<epoch>              one per process that ever opened the bucket;
//                              created with put-if-absent, so each epoch has
//                              exactly one owner. The highest epoch is the
//                              current writer.
//   db/<epoch>/<file>          a RocksDB file (SST, blob, MANIFEST-n, CURRENT,
//                              OPTIONS-n, IDENTITY) written by that epoch,
//                              uploaded whole.
//   db/<epoch>/wal/<seq>       the epoch's WAL, one part per sync, numbered
//                              0, 1, 2, ... without gaps and written with
//                              put-if-absent (see wal_part.h).
// Epochs and sequence numbers are 20-digit zero-padded decimals so that
// byte order is numeric order.
//
// Why epochs in names: a fenced writer may still be running. Because every
// object it writes carries its own epoch, it can never overwrite an object
// of the new writer; it cannot delete one either, because deletions are only
// done after checking that no newer epoch exists (see bucket_gc.cc).
// When two epochs hold a file of the same name, the pinned CURRENT's lineage
// decides which one is live (current_object.h).
//
// Keys under fence/ or db/ that do not parse (a zero-byte "folder marker"
// such as "db/" that consoles and tools create, or anything else not ours)
// are skipped with a warning, never fatal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pail::engine {

constexpr char kFencePrefix[] = "fence/";
constexpr char kDbPrefix[] = "db/";
constexpr char kWalDir[] = "wal/";
constexpr int kNumberDigits = 20;
constexpr char kCurrentFile[] = "CURRENT";
constexpr char kTempSuffix[] = ".dbtmp";
constexpr char kLogSuffix[] = ".log";

std::string PadNumber(uint64_t n);
std::string FenceKey(uint64_t epoch);
std::string FileKey(uint64_t epoch, const std::string& file);
std::string WalPartKey(uint64_t epoch, uint64_t seq);

// A parsed "db/..." key.
struct DbKey {
  uint64_t epoch = 0;
  bool is_wal_part = false;
  uint64_t wal_seq = 0;  // when is_wal_part
  std::string file;      // when !is_wal_part
};
std::optional<DbKey> ParseDbKey(const std::string& key);
std::optional<uint64_t> ParseFenceKey(const std::string& key);

bool EndsWith(const std::string& s, const std::string& suffix);
// "000123.log" -> 123.
std::optional<uint64_t> LogNumberOf(const std::string& name);
// RocksDB's name for log `number`: at least six digits, then ".log".
std::string LogFileName(uint64_t number);
// Files whose presence proves a database was written: a bucket holding one
// has had a CURRENT (see RebuildNamespace).
bool IsTableOrBlob(const std::string& file);

}  // namespace pail::engine
