// ChangeNotifier: a FileSystem that forwards every call to another one and
// reports what each successful change made stale, for a protocol whose
// clients cache names and attributes themselves (the kernel behind the
// FUSE mount) while other protocols change the same files.
//
// The protocols other than FUSE get the notifier; FUSE gets the core
// itself, since the kernel updates its own copy for changes made through
// the mount. What is reported is deliberately wide (a change to a name
// also reports the inodes it named before and after): a spurious report
// costs the listener one invalidation, a missing one a stale cache.
#pragma once

#include <memory>
#include <string_view>

#include "fs/filesystem.h"

namespace pail::fs {

class ChangeListener {
 public:
  virtual ~ChangeListener() = default;
  // The attributes of `ino` changed; with `data`, also its bytes or size.
  virtual void InodeChanged(Ino ino, bool data) = 0;
  // `name` in `dir` appeared, went away or names another inode now; the
  // directory's own attributes (mtime, nlink) changed with it.
  virtual void EntryChanged(Ino dir, std::string_view name) = 0;
  // Returns once what was reported before reached the cache's holder (or
  // after a bound), so a change is visible there when the protocol
  // answers its client.
  virtual void Flush() {}
};

// `inner` and `listener` must outlive the result. Calls are reported after
// `inner` returned success, from the calling thread, which then calls
// Flush(); the listener must not block on anything a protocol request of
// the notifier's callers may hold (they hold no core locks by then).
std::unique_ptr<FileSystem> NewChangeNotifier(FileSystem& inner, ChangeListener& listener);

}  // namespace pail::fs
