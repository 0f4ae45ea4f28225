// ByteRangeLocks: POSIX record locks (fcntl F_SETLK/F_GETLK semantics) held
// by protocol servers on behalf of their clients. Protocol-free: a lock
// owner is whatever identifies a process to the protocol (a session number
// plus the client's process id and name), and a server drops a session's
// locks when the session ends.
//
// Semantics, as fcntl: an owner's locks never conflict with each other; a
// new lock replaces the owner's overlapping ranges (splitting them), and
// adjacent or overlapping ranges of the same type merge; read locks of
// different owners share, a write lock excludes everyone else. length 0
// means "to the end of the file, however large it grows". Nothing here
// waits: a conflicting request fails and the client retries (the 9P and
// NLM clients do that for blocking requests).
//
// Memory is bounded: an owner's session may hold at most
// max_ranges_per_session ranges; beyond that Lock fails with ENOLCK.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fs/filesystem.h"
#include "util/mutex.h"

namespace pail::fs {

struct LockOwner {
  uint64_t session = 0;  // one client connection
  uint64_t process = 0;  // the client's process id
  std::string name;      // the client's own name for itself
  bool operator==(const LockOwner& o) const {
    return session == o.session && process == o.process && name == o.name;
  }
};

enum class LockKind { kRead, kWrite };

struct LockRange {
  LockKind kind = LockKind::kRead;
  uint64_t start = 0;
  uint64_t length = 0;  // 0: to the end of the file
  LockOwner owner;
};

class ByteRangeLocks {
 public:
  explicit ByteRangeLocks(size_t max_ranges_per_session = 4096)
      : max_ranges_per_session_(max_ranges_per_session) {}

  // Takes the lock, or returns EAGAIN when another owner holds a conflicting
  // one, EINVAL for a range past 2^64, ENOLCK past the session's bound.
  FsStatus Lock(Ino ino, const LockRange& request);
  // Releases the owner's locks within [start, start+length) (0: to the end).
  void Unlock(Ino ino, const LockOwner& owner, uint64_t start, uint64_t length);
  // The first lock of another owner that would block `request` (F_GETLK).
  std::optional<LockRange> Conflict(Ino ino, const LockRange& request) const;
  // Drops every lock of the session (its connection ended).
  void ReleaseSession(uint64_t session);

 private:
  struct Held {
    LockKind kind;
    uint64_t first;  // inclusive byte range
    uint64_t last;
    LockOwner owner;
  };
  using Ranges = std::vector<Held>;

  // Removes [first, last] from the owner's ranges in `ranges`, splitting.
  void Carve(Ranges& ranges, const LockOwner& owner, uint64_t first, uint64_t last)
      REQUIRES(mu_);
  size_t SessionRanges(uint64_t session) const REQUIRES(mu_);
  void Forget(Ino ino) REQUIRES(mu_);

  const size_t max_ranges_per_session_;
  mutable Mutex mu_;
  std::map<Ino, Ranges> files_ GUARDED_BY(mu_);
  std::map<uint64_t, size_t> per_session_ GUARDED_BY(mu_);
};

}  // namespace pail::fs
