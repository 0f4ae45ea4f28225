// The directories whose every entry is in the dentry cache, so that a name
// the cache lacks is absent without asking the engine.
//
// A directory made by this process starts empty and so complete; each entry
// a commit adds is stored in the cache before the directory's lock is let
// go (record_cache.h), so it stays complete until the cache lets one of its
// entries go (RecordCache's eviction listener) or a commit touching its
// entries fails (what the engine then holds is not known). Creating files
// in new directories (a tar, a git checkout, a build's output) thus costs no
// engine lookup per name: the kernel asks for each name before creating it,
// and the lookup of an absent name searched every memtable and table.
// After a restart no directory is complete until it is made again.
#pragma once

#include <cstddef>
#include <unordered_set>

#include "fs/filesystem.h"
#include "util/mutex.h"

namespace pail::fs {

class CompleteDirs {
 public:
  // Directories remembered at most; past it the set starts over, so the
  // memory stays bounded and new directories keep the benefit.
  static constexpr size_t kMaxDirs = 16 * 1024;

  void Add(Ino dir) EXCLUDES(mu_) {
    MutexLock g(&mu_);
    if (dirs_.size() >= kMaxDirs) dirs_.clear();
    dirs_.insert(dir);
  }
  void Remove(Ino dir) EXCLUDES(mu_) {
    MutexLock g(&mu_);
    dirs_.erase(dir);
  }
  bool Contains(Ino dir) EXCLUDES(mu_) {
    MutexLock g(&mu_);
    return dirs_.count(dir) != 0;
  }

 private:
  Mutex mu_;
  std::unordered_set<Ino> dirs_ GUARDED_BY(mu_);
};

}  // namespace pail::fs
