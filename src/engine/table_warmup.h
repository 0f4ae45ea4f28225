// WarmTables: after open, reads the tables of chosen column families into
// the disk cache, so that a restarted server answers their lookups from
// local disk instead of sending a GET for each cold block.
//
// Why: a metadata lookup after a restart with an empty cache touches an
// index partition, a filter partition and a data block of each level it
// searches, each a ranged GET of its own; stat() of a random file cost
// about 1.4 GETs (docs/benchmarks.md, the scale benchmark). Metadata is a
// few tens of bytes per file, so reading it all, a whole table per GET, is
// cheap next to paying for it one cold block at a time.
//
// Bounds: at most `budget` bytes are warmed (the engine passes a quarter of
// the disk cache, so the warm-up never evicts much of the data the cache is
// for), newest levels first since lookups search them first. One table at
// a time, in pieces of kPrefetchPieceBytes (bucket_fs.h), on the caller's
// thread; `stopping` is asked between pieces, so a Close waits for one
// piece at most. Tables the engine writes from now on enter the cache
// complete when uploaded, so the warm-up runs once.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <rocksdb/db.h>

#include "engine/bucket_fs.h"

namespace pail::engine {

// The database files to warm, in order: the tables of `column_families`,
// newest level first, as many as fit in `budget` bytes. Reads only the
// database's metadata (no I/O), so the engine plans before it starts the
// warm-up's thread, which then never touches the database.
std::vector<std::string> PlanWarmup(rocksdb::DB& db, const std::set<std::string>& column_families,
                                    uint64_t budget);

// Fetches the planned files into the disk cache; `stopping` is asked
// between pieces. Returns the bytes fetched. Errors end the warm-up
// (logged): it only saves later reads their GETs.
uint64_t WarmTables(BucketFileSystem& fs, const std::vector<std::string>& files,
                    const std::function<bool()>& stopping);

}  // namespace pail::engine
