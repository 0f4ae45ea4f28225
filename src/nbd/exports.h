// Exports: the regular files of the filesystem's /.nbd/ directory, each an
// NBD export named after the file. `truncate -s 50G /mnt/pailfs/.nbd/disk1`
// makes one, `rm` removes it. NBD acts as root on these files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fs/filesystem.h"
#include "util/status.h"

namespace pail::nbd {

inline constexpr const char* kExportDirectory = ".nbd";

struct ExportInfo {
  std::string name;
  fs::Ino ino = 0;
  uint64_t size = 0;  // at the time of the lookup
};

class Exports {
 public:
  explicit Exports(fs::FileSystem& fs) : fs_(fs) {}

  // Creates /.nbd (root, 0755) when it does not exist.
  Status EnsureDirectory();
  // ENOENT for a name that is not a regular file in /.nbd (or not a valid
  // file name at all).
  fs::FsResult<ExportInfo> Find(std::string_view name);
  // Names of the exports, at most `max`, in directory order.
  fs::FsResult<std::vector<std::string>> List(size_t max);

  fs::FileSystem& fs() { return fs_; }

 private:
  fs::FsResult<fs::Ino> Directory();
  fs::FileSystem& fs_;
};

}  // namespace pail::nbd
