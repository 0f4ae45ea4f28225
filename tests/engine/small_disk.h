// SmallDisk: a disk that really fills, for tests of what a full disk does.
#pragma once

#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace pail::testing {

// A tmpfs of `bytes` mounted on a new temporary directory for the object's
// life. Needs root; error() says why there is none (the test then skips).
class SmallDisk {
 public:
  explicit SmallDisk(uint64_t bytes) {
    std::string pattern = (std::filesystem::temp_directory_path() / "pailfs-small-disk-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      error_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    path_ = pattern;
    const std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      error_ = std::string("mount tmpfs: ") + std::strerror(errno);
    } else {
      mounted_ = true;
    }
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

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
  bool mounted_ = false;
};

}  // namespace pail::testing
