// Helpers for engine tests: temp dirs and the stores to run against.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "small_disk.h"
#include "objstore/open_store.h"

namespace pail::testing {

// A directory removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = (std::filesystem::temp_directory_path() / ("pailfs-test-" + std::to_string(rd()) + std::to_string(rd())))
                .string();
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline engine::EngineOptions TestEngineOptions(std::shared_ptr<ObjectStore> store,
                                               const std::string& cache_dir) {
  engine::EngineOptions o;
  o.store = std::move(store);
  o.cache_dir = cache_dir;
  o.disk_cache_bytes = 64 << 20;
  o.memory_cache_bytes = 16 << 20;
  o.flush_interval = std::chrono::milliseconds(100);
  o.column_families = {{"meta", false, nullptr}, {"data", true, nullptr}};
  return o;
}

}  // namespace pail::testing
