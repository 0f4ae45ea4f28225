// A read-only check of the engine's objects in a bucket, for `pailfs fsck`.
//
// It claims nothing, seals nothing and deletes nothing, so it can run before
// an engine is opened (an open of a damaged bucket refuses; this says why)
// and again after one closed. It reports:
//  - problems: the newest CURRENT is missing while database files exist,
//    does not decode, or names a manifest that is missing or does not
//    decrypt; a file the database uses (`live_files`, from an engine that
//    had the bucket open) has no object, or its object does not decrypt, or
//    is not of an epoch of the pinned CURRENT's lineage; a WAL part is
//    missing from the middle of a log;
//  - garbage: what the next writer would collect (objects outside the
//    lineage, including those of openers that never finished, older
//    CURRENTs, objects a newer lineage epoch shadows, fences below the
//    newest, closing seals);
//  - notes: objects that are not ours (skipped, never fatal).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "objstore/object_store.h"
#include "util/status.h"

namespace pail::engine {

struct BucketReport {
  std::vector<std::string> problems;
  std::vector<std::string> garbage;
  std::vector<std::string> notes;
  uint64_t current_epoch = 0;  // 0: no CURRENT
  uint64_t files_checked = 0;  // live files fetched and decrypted
  uint64_t wal_parts_read = 0;
};

// Fails only when the bucket cannot be listed; damage goes into the report.
Result<BucketReport> CheckBucket(ObjectStore& store, const std::set<std::string>& live_files);

}  // namespace pail::engine
