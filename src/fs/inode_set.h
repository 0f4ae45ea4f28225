// A bounded set of inode numbers, for what the core knows of the inodes it
// made itself (filesystem_impl.h: complete directories, inodes without
// extended attributes). Forgetting is always safe: a number not in the set
// only means asking the engine.
#pragma once

#include <cstddef>
#include <unordered_set>

#include "fs/filesystem.h"
#include "util/mutex.h"

namespace pail::fs {

class InodeSet {
 public:
  // Numbers remembered at most; past it the set starts over, so the memory
  // stays bounded and new inodes keep the benefit.
  static constexpr size_t kMaxInodes = 16 * 1024;

  void Add(Ino ino) EXCLUDES(mu_) {
    MutexLock g(&mu_);
    if (inodes_.size() >= kMaxInodes) inodes_.clear();
    inodes_.insert(ino);
  }
  void Remove(Ino ino) EXCLUDES(mu_) {
    MutexLock g(&mu_);
    inodes_.erase(ino);
  }
  bool Contains(Ino ino) EXCLUDES(mu_) {
    MutexLock g(&mu_);
    return inodes_.count(ino) != 0;
  }

 private:
  Mutex mu_;
  std::unordered_set<Ino> inodes_ GUARDED_BY(mu_);
};

}  // namespace pail::fs
