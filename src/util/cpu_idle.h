// CpuIdleMeter: whether the machine's processors have lately had time to
// spare, from the kernel's counters in /proc/stat.
//
// Why: a server thread about to sleep until its next request may instead
// poll for it for a few microseconds (fuse/request_loop.h). On a machine
// with idle processors that saves the wake-up of every request of a caller
// that asks again at once (on a virtual machine, the larger part of a
// round trip's cost); on a busy machine the polling takes the time the
// callers need. This tells the two apart.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/mutex.h"

namespace pail {

// The processors' time in clock ticks, summed over all of them: idle
// (idle + iowait) and the total of every state (user, nice, system, idle,
// iowait, irq, softirq, steal; guest time is already counted in user).
struct CpuTimes {
  uint64_t idle = 0;
  uint64_t total = 0;
};

// Parses the first line of /proc/stat ("cpu  user nice system idle
// iowait irq softirq steal ..."). False when it is not such a line.
bool ParseCpuTimes(std::string_view proc_stat, CpuTimes* out);

class CpuIdleMeter {
 public:
  // Idle means at least `min_idle_fraction` of the processors' time was
  // idle over the last `interval`.
  CpuIdleMeter(double min_idle_fraction, std::chrono::nanoseconds interval,
               std::string stat_path = "/proc/stat");
  CpuIdleMeter(const CpuIdleMeter&) = delete;
  CpuIdleMeter& operator=(const CpuIdleMeter&) = delete;

  // Whether the processors were idle over the last complete interval.
  // Reads the counters again once an interval has passed (by the first
  // caller to notice; the others do not wait for it); otherwise it costs an
  // atomic load or two. False until two readings exist, and when the
  // counters cannot be read.
  bool Idle() EXCLUDES(mu_);
  // Counts `ns` of the caller's own processor time as idle: time it spent
  // polling, which the processors would otherwise have spent idle, so that
  // the polling does not turn itself off by being measured.
  void CountAsIdle(int64_t ns) { own_idle_ns_.fetch_add(ns, std::memory_order_relaxed); }

 private:
  void Sample(int64_t now_ns) REQUIRES(mu_);

  const double min_idle_fraction_;
  const int64_t interval_ns_;
  const std::string stat_path_;
  std::atomic<int64_t> next_sample_ns_{0};
  std::atomic<bool> idle_{false};
  std::atomic<int64_t> own_idle_ns_{0};
  const int64_t ns_per_tick_;
  Mutex mu_;
  CpuTimes last_ GUARDED_BY(mu_);
};

}  // namespace pail
