// RequestLoop: the threads that read and answer a FUSE session's requests.
//
// Why not libfuse's multi-threaded loop: it keeps every worker blocked on
// /dev/fuse, and the kernel hands each request to the worker that has
// waited longest, so a strictly sequential caller (one process doing one
// system call after another) wakes a different, cold thread for every
// request. Measured here that costs 2-3x the latency of serving all
// requests from one thread.
//
// So one thread, the leader, reads and answers requests by itself, and the
// others wait. A watchdog looks at the leader every kWatchdogPeriod; when
// the leader has been on one request for longer than kSlowRequest (a read
// that misses the cache, a write waiting for write-back memory; fsyncs do
// not wait here, fuse_ops.cc passes them to a pool of their own), it makes a
// waiting thread the new leader, which goes on reading; the old leader
// finishes its request and waits in turn. A request that knows it is about
// to wait (a read that misses the cache, see util/blocking_hint.h) hands
// reading on at once instead of after the watchdog's delay. At most
// `threads` requests are thus in progress at once, and a slow one delays
// the others by about kSlowRequest at most.
//
// Before it sleeps in read() for the next request, the leader polls for it
// for up to kPollBeforeSleep, as long as the processors have been idle for
// at least kMinIdleToPoll of their time lately (util/cpu_idle.h; the
// polling itself counted as idle). A caller that asks again at once (the
// LOOKUP and CREATE after a permission check's GETATTR, one write() after
// another) then finds the leader awake: on a virtual machine, waking a
// sleeping thread is much of a round trip's cost.
// On a busy machine polling would take the callers' time, so the leader
// sleeps at once (docs/fuse.md has the numbers of both cases).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "fuse/fuse_lowlevel_include.h"
#include "util/cpu_idle.h"
#include "util/mutex.h"

namespace pail::fuse {

class RequestLoop {
 public:
  RequestLoop(fuse_session* session, unsigned threads);
  ~RequestLoop();

  // Serves until the session ends (unmount, abort or fuse_session_exit
  // followed by the end of the connection). Returns 0 or a negative errno.
  int Run();

 private:
  static constexpr std::chrono::microseconds kWatchdogPeriod{1000};
  static constexpr std::chrono::microseconds kSlowRequest{1000};
  // After this many checks that found the leader waiting for a request, the
  // watchdog sleeps until the next request arrives instead of polling.
  static constexpr int kIdleChecksBeforeSleep = 100;
  // Polling for the next request instead of sleeping: how long, and the
  // share of idle processor time (over the last kIdleSampleInterval) it
  // needs. 10 us caught most of the gain of 30 us; 20 us catches a caller
  // that does a little work between requests.
  static constexpr std::chrono::microseconds kPollBeforeSleep{20};
  static constexpr double kMinIdleToPoll = 0.3;
  static constexpr std::chrono::milliseconds kIdleSampleInterval{100};

  struct Worker {
    // Steady-clock nanoseconds when the current request started; 0 while
    // waiting for one.
    std::atomic<int64_t> busy_since_ns{0};
    RequestLoop* loop = nullptr;
    unsigned id = 0;
  };

  // The BlockingHint listener of every worker thread.
  static void WorkerAboutToBlock(void* worker);

  void Serve(unsigned id) EXCLUDES(mu_);
  // Returns once a request waits, or after kPollBeforeSleep, or at once
  // when the processors are busy.
  void AwaitRequestBriefly();
  void Watch() EXCLUDES(mu_);
  // Makes an idle thread the leader if `from` is the leader.
  void HandOff(unsigned from) REQUIRES(mu_);
  void WakeWatchdog() EXCLUDES(mu_);
  void Finish(int result) EXCLUDES(mu_);

  fuse_session* session_;
  unsigned threads_;
  std::unique_ptr<Worker[]> workers_;
  std::atomic<unsigned> leader_{0};
  std::atomic<bool> watchdog_sleeping_{false};
  CpuIdleMeter cpu_idle_{kMinIdleToPoll, kIdleSampleInterval};

  Mutex mu_;
  CondVar followers_cv_{&mu_};
  CondVar watchdog_cv_{&mu_};
  bool done_ GUARDED_BY(mu_) = false;
  int result_ GUARDED_BY(mu_) = 0;
};

}  // namespace pail::fuse
