// SpareFiles: empty files made ahead of time in a file:// bucket's temp
// directory, so that a put does not wait for its filesystem to allocate an
// inode. On ext4 without a journal (our test machines') creating a file
// cost as much as the put's fsync: its inode search skips every recently
// deleted inode, and a bucket deletes WAL parts and tables all the time.
// The put's caller, an fsync, waited for both.
//
// A thread of its own keeps up to kSpareFiles open files ready, starting
// with the first Take. The spares left when the owner goes are removed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace pail {

struct SpareFile {
  int fd = -1;  // open for writing, empty
  std::string path;
};

class SpareFiles {
 public:
  // Files go into `dir` with mode `mode`.
  SpareFiles(std::string dir, unsigned mode);
  ~SpareFiles();
  SpareFiles(const SpareFiles&) = delete;
  SpareFiles& operator=(const SpareFiles&) = delete;

  // A spare, now the caller's; nullopt when none is ready (the caller
  // creates its file itself, as without spares). Spares someone removed
  // are skipped.
  std::optional<SpareFile> Take() EXCLUDES(mu_);

  // A new, unique name in `dir` for a file of this process.
  static std::string UniqueName(const std::string& dir);

  // Removes what processes that are gone left in `dir` (spares, the temp
  // file of a put they did not finish): files under UniqueName's names
  // whose process no longer runs and that nobody changed for an hour (a
  // bucket directory shared by two machines would have live processes of
  // the other one). Returns how many went.
  static size_t RemoveLeftovers(const std::string& dir);

 private:
  static constexpr size_t kSpareFiles = 4;

  void MakeLoop() EXCLUDES(mu_);

  const std::string dir_;
  const unsigned mode_;
  Mutex mu_;
  CondVar wanted_{&mu_};  // a spare was taken, or stopping
  std::vector<SpareFile> ready_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread maker_;  // started by the first Take
};

}  // namespace pail
