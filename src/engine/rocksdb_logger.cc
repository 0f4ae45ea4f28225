#include "engine/rocksdb_logger.h"

#include <cstdarg>
#include <cstdio>

#include <spdlog/spdlog.h>

namespace pail::engine {
namespace {

class RocksDbLogger : public rocksdb::Logger {
 public:
  explicit RocksDbLogger(rocksdb::InfoLogLevel level) : rocksdb::Logger(level) {}

  // Lines logged without a level are routine ones.
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }

  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    // The options printed at open are routine too.
    const auto routine = level == rocksdb::InfoLogLevel::HEADER_LEVEL ? rocksdb::InfoLogLevel::INFO_LEVEL : level;
    if (routine < GetInfoLogLevel()) return;
    char line[1024];
    const int n = std::vsnprintf(line, sizeof line, format, ap);
    if (n < 0) return;
    switch (level) {
      case rocksdb::InfoLogLevel::WARN_LEVEL:
        spdlog::warn("rocksdb: {}", line);
        break;
      case rocksdb::InfoLogLevel::ERROR_LEVEL:
      case rocksdb::InfoLogLevel::FATAL_LEVEL:
        spdlog::error("rocksdb: {}", line);
        break;
      default:
        spdlog::debug("rocksdb: {}", line);
        break;
    }
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewRocksDbLogger() {
  return std::make_shared<RocksDbLogger>(spdlog::should_log(spdlog::level::debug)
                                             ? rocksdb::InfoLogLevel::INFO_LEVEL
                                             : rocksdb::InfoLogLevel::WARN_LEVEL);
}

}  // namespace pail::engine
