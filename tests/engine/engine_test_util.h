// Helpers for engine tests: temp dirs and the stores to run against.
#pragma once

#include <sys/mount.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
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

// A tmpfs of `bytes` mounted on a new directory for the test's life: a disk
// that really fills. Needs root; `error` says why there is none.
class SmallDisk {
 public:
  SmallDisk(const TempDir& dir, uint64_t bytes) : path_(dir.Sub("disk")) {
    std::filesystem::create_directories(path_);
    const std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      error_ = std::string("mount tmpfs: ") + std::strerror(errno);
    }
  }
  ~SmallDisk() {
    if (error_.empty()) ::umount2(path_.c_str(), MNT_DETACH);
  }
  const std::string& error() const { return error_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  // Writes a file until the disk refuses, then frees `room` bytes of it.
  void FillLeaving(uint64_t room) {
    const std::string filler = Sub("filler");
    {
      std::ofstream out(filler, std::ios::binary);
      const std::string block(4096, 'f');
      while (out.write(block.data(), block.size())) {
      }
    }
    const auto size = std::filesystem::file_size(filler);
    std::filesystem::resize_file(filler, size > room ? size - room : 0);
  }
  void Empty() { std::filesystem::remove(Sub("filler")); }

 private:
  std::string path_;
  std::string error_;
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
