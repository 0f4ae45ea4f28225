// A thread about to wait for the object store or the disk says so, so that
// whoever runs requests on it can let another thread go on meanwhile.
//
// Why: the FUSE request loop (src/fuse/request_loop.h) serves requests one
// at a time on one thread, since that is fastest for a caller making one
// system call after another, and moves on to another thread only when a
// request has been slow for a while. A read that misses the cache knows at
// once that it will wait; saying so lets the requests queued behind it (the
// other reads of a multi-threaded reader) start now rather than after the
// watchdog's delay. The hint never blocks and costs a thread-local load
// where nobody listens, so the storage layers call it without knowing who
// runs them.
#pragma once

namespace pail {

class BlockingHint {
 public:
  using Callback = void (*)(void* arg);

  // Sets the calling thread's listener; nullptr removes it.
  static void Listen(Callback callback, void* arg);
  // Called right before a wait that may take long (a fetch, a wait for
  // another thread's fetch). Runs the calling thread's listener, if any.
  static void AboutToBlock();
};

}  // namespace pail
