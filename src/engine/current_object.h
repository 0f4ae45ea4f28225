// The bucket's CURRENT object: RocksDB's CURRENT plus the epochs whose
// objects its manifest's files live in.
//
//   MANIFEST-000123\n                   RocksDB's CURRENT, byte for byte
//   pail-lineage 1 4 7\n                the lineage: ascending epochs
//
// Why a lineage: a name such as 000018.sst can exist in several epochs (an
// opener that died before its CURRENT, or a fenced writer that did not yet
// know, picks the same file number as the writer that went on). The
// manifest names files, not epochs; the lineage says which epochs the
// writer that uploaded this CURRENT took its files from (plus its own). An
// opener maps each name to the highest lineage epoch holding it, so an
// object of any other epoch, whenever it lands, is never used and is
// garbage. A writer never reuses a file number its state still references,
// so within a lineage the highest epoch's object is the live one.
//
// Only the bucket object carries the lineage line; RocksDB reads the first
// line alone from the local copy. A CURRENT without the line (written
// before lineages existed) means "every epoch up to its own".
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "util/status.h"

namespace pail::engine {

constexpr char kLineagePrefix[] = "pail-lineage";

struct CurrentObject {
  std::string rocksdb_current;  // the first line, with its '\n'
  std::string manifest;         // the file it names
  std::optional<std::set<uint64_t>> lineage;
};

std::string EncodeCurrentObject(std::string_view rocksdb_current, const std::set<uint64_t>& lineage);
Result<CurrentObject> DecodeCurrentObject(std::string_view body, const std::string& key);

}  // namespace pail::engine
