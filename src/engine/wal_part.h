// The WAL in the bucket: one numbered part per sync.
//
// Each epoch writes its WAL bytes as parts db/<epoch>/wal/<seq>, seq counting
// up from 0 with no gaps, each created with put-if-absent. A part holds the
// bytes appended to one RocksDB log file since that file's previous part:
//   magic   8 bytes "PAILWAL1"
//   log     u64     RocksDB log file number
//   offset  u64     where in that log file the bytes start
//   bytes   the rest
// A seal is a part whose body is "PAILSEAL" followed by the u64 epoch that
// wrote it; a closing seal, which a writer puts at the end of its own
// sequence at a clean shutdown, has one more byte (1). The sizes differ so
// that a listing alone tells data, a seal by a newer writer, and a closing
// seal apart: a closing seal proves its writer will publish nothing more,
// so it can be collected (docs/engine.md, "Fences and seals"). A new writer seals every older epoch at the next free sequence
// number: from then on that epoch's put-if-absent of its next part fails,
// which is how a fenced writer learns of the takeover at its next sync, and
// why nothing it publishes later can be replayed. Everything before the seal
// is part of the recovered state; all of it was acknowledged as durable or
// never acknowledged at all.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "util/status.h"

namespace pail::engine {

constexpr char kWalPartMagic[] = "PAILWAL1";
constexpr char kWalSealMagic[] = "PAILSEAL";
constexpr size_t kWalMagicBytes = 8;
constexpr size_t kWalPartHeaderBytes = kWalMagicBytes + 16;
// A seal's body size. A data part is always larger (a header and at least
// one byte), so a listing alone tells a seal from data.
constexpr size_t kWalSealBytes = kWalMagicBytes + 8;
constexpr size_t kWalClosingSealBytes = kWalSealBytes + 1;
constexpr bool IsSealSize(uint64_t size) {
  return size == kWalSealBytes || size == kWalClosingSealBytes;
}

struct WalPart {
  bool is_seal = false;
  bool closing = false;        // a seal its own writer put at a clean shutdown
  uint64_t sealing_epoch = 0;  // when is_seal
  uint64_t log_number = 0;
  uint64_t offset = 0;
  std::string bytes;
};

std::string EncodeWalPart(uint64_t log_number, uint64_t offset, std::string_view bytes);
std::string EncodeWalSeal(uint64_t sealing_epoch, bool closing = false);
Result<WalPart> DecodeWalPart(std::string body, const std::string& key);

// Follows one epoch's data parts in sequence order and checks that each
// log's parts join up. A log's parts are collected in sequence order,
// stopping at a failure (bucket_gc.cc), so what is left of a log is a
// suffix: a log whose first remaining part does not start at byte 0 was
// dropped by RocksDB and is skipped. A part that does not start where the
// log's previous part ended means one is missing from the middle: damage,
// reported as Corruption (once silently taken for a dropped log).
class WalContinuity {
 public:
  // True: replay the part's bytes; false: a part of a dropped log.
  Result<bool> Accept(const WalPart& part, const std::string& key);

 private:
  std::map<uint64_t, uint64_t> next_offset_;  // log -> where its next part must start
  std::set<uint64_t> dropped_;
};

}  // namespace pail::engine
