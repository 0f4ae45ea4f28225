#include "fuse/request_loop.h"

#include "fuse/op_metrics.h"
#include "util/blocking_hint.h"
#include "util/clock.h"
#include "util/thread_priority.h"

#include <poll.h>

#include <cerrno>
#include <cstdlib>
#include <thread>
#include <vector>

namespace pail::fuse {

RequestLoop::RequestLoop(fuse_session* session, unsigned threads)
    : session_(session), threads_(threads < 1 ? 1 : threads), workers_(new Worker[threads_]) {
  for (unsigned id = 0; id < threads_; ++id) {
    workers_[id].loop = this;
    workers_[id].id = id;
  }
}

RequestLoop::~RequestLoop() = default;

int RequestLoop::Run() {
  std::vector<std::thread> threads;
  threads.reserve(threads_);
  for (unsigned id = 0; id < threads_; ++id) threads.emplace_back([this, id] { Serve(id); });
  std::thread watchdog;
  if (threads_ > 1) watchdog = std::thread([this] { Watch(); });
  for (auto& t : threads) t.join();
  if (watchdog.joinable()) watchdog.join();
  MutexLock g(&mu_);
  return result_;
}

void RequestLoop::Serve(unsigned id) {
  SetThreadNice(kRequestThreadNice);
  fuse_buf buf{};
  Worker& self = workers_[id];
  if (threads_ > 1) BlockingHint::Listen(&RequestLoop::WorkerAboutToBlock, &self);
  for (;;) {
    if (leader_.load(std::memory_order_acquire) != id) {
      MutexLock lock(&mu_);
      while (!done_ && leader_.load() != id) followers_cv_.Wait();
      if (done_) break;
      continue;
    }
    {
      MutexLock g(&mu_);
      if (done_) break;
    }
    AwaitRequestBriefly();
    int res = fuse_session_receive_buf(session_, &buf);
    if (res == -EINTR) continue;
    if (res <= 0 || fuse_session_exited(session_)) {
      // 0: the connection ended (unmounted or aborted).
      Finish(res < 0 ? res : 0);
      break;
    }
    self.busy_since_ns.store(SteadyNowNs(), std::memory_order_release);
    if (watchdog_sleeping_.load(std::memory_order_relaxed)) WakeWatchdog();
    {
      RequestMetrics metrics((buf.flags & FUSE_BUF_IS_FD) ? nullptr : buf.mem, buf.size);
      fuse_session_process_buf(session_, &buf);
    }
    self.busy_since_ns.store(0, std::memory_order_release);
  }
  BlockingHint::Listen(nullptr, nullptr);
  std::free(buf.mem);
}

void RequestLoop::AwaitRequestBriefly() {
  if (!cpu_idle_.Idle()) return;
  pollfd fuse_device{fuse_session_fd(session_), POLLIN, 0};
  const int64_t start = SteadyNowNs();
  const int64_t until = start + std::chrono::nanoseconds(kPollBeforeSleep).count();
  int64_t now = start;
  while (poll(&fuse_device, 1, 0) == 0 && (now = SteadyNowNs()) < until) {
  }
  cpu_idle_.CountAsIdle(now - start);
}

void RequestLoop::WorkerAboutToBlock(void* worker) {
  Worker& w = *static_cast<Worker*>(worker);
  // Only the leader hands off, and a busy worker (as this one is) is never
  // made the leader, so a follower's check needs no lock (followers block
  // often: every cache miss of a request handed on earlier).
  if (w.loop->leader_.load(std::memory_order_acquire) != w.id) return;
  MutexLock g(&w.loop->mu_);
  w.loop->HandOff(w.id);
}

void RequestLoop::HandOff(unsigned from) {
  if (leader_.load() != from) return;
  for (unsigned id = 0; id < threads_; ++id) {
    if (id != from && workers_[id].busy_since_ns.load(std::memory_order_acquire) == 0) {
      leader_.store(id, std::memory_order_release);
      followers_cv_.SignalAll();
      return;
    }
  }
}

void RequestLoop::Watch() {
  SetThreadNice(kRequestThreadNice);  // a hand-off must not wait behind the callers
  int idle_checks = 0;
  MutexLock lock(&mu_);
  while (!done_) {
    if (idle_checks >= kIdleChecksBeforeSleep) {
      watchdog_sleeping_.store(true);
      while (!done_ && watchdog_sleeping_.load()) watchdog_cv_.Wait();
      idle_checks = 0;
      continue;
    }
    watchdog_cv_.WaitFor(kWatchdogPeriod);
    if (done_) break;
    unsigned leader = leader_.load();
    int64_t since = workers_[leader].busy_since_ns.load(std::memory_order_acquire);
    if (since == 0) {
      ++idle_checks;
      continue;
    }
    idle_checks = 0;
    if (SteadyNowNs() - since < std::chrono::nanoseconds(kSlowRequest).count()) continue;
    // The leader is stuck on a slow request: hand reading to an idle thread.
    HandOff(leader);
  }
}

void RequestLoop::WakeWatchdog() {
  MutexLock g(&mu_);
  watchdog_sleeping_.store(false);
  watchdog_cv_.Signal();
}

void RequestLoop::Finish(int result) {
  MutexLock g(&mu_);
  if (!done_) result_ = result;
  done_ = true;
  followers_cv_.SignalAll();
  watchdog_cv_.SignalAll();
}

}  // namespace pail::fuse
