// RocksDbLogger: RocksDB's info log, sent to our log instead of a file.
//
// RocksDB writes its info log through a file of its own by default (a LOG
// in the cache directory). On a full disk that write fails once, and the
// next log line then trips an assertion in RocksDB 7.8's file writer
// ("sync_without_flush_called_"; Debian builds it with assertions), which
// aborts the server. The cache directory's disk is ours to fill, so the log
// must not live there: RocksDB's warnings and errors go to spdlog, its
// routine lines (each flush and compaction) at debug level only.
#pragma once

#include <memory>

#include <rocksdb/env.h>

namespace pail::engine {

// A logger at the level spdlog has now: debug logging (pailfs -v) gets
// RocksDB's routine lines too, otherwise they are not even formatted.
std::shared_ptr<rocksdb::Logger> NewRocksDbLogger();

}  // namespace pail::engine
