#include "util/cpu_idle.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "util/clock.h"

namespace pail {

namespace {

// The columns of the "cpu" line counted in CpuTimes::total, and which of
// them are idle (proc(5)).
constexpr int kCountedColumns = 8;
constexpr int kIdleColumn = 3;
constexpr int kIowaitColumn = 4;

}  // namespace

bool ParseCpuTimes(std::string_view proc_stat, CpuTimes* out) {
  constexpr std::string_view kPrefix = "cpu ";
  if (proc_stat.substr(0, kPrefix.size()) != kPrefix) return false;
  const char* p = proc_stat.data() + kPrefix.size();
  const char* end = proc_stat.data() + proc_stat.size();
  CpuTimes t;
  for (int column = 0; column < kCountedColumns; ++column) {
    while (p < end && *p == ' ') ++p;
    uint64_t ticks = 0;
    auto [next, ec] = std::from_chars(p, end, ticks);
    if (ec != std::errc()) return false;
    p = next;
    t.total += ticks;
    if (column == kIdleColumn || column == kIowaitColumn) t.idle += ticks;
  }
  *out = t;
  return true;
}

CpuIdleMeter::CpuIdleMeter(double min_idle_fraction, std::chrono::nanoseconds interval,
                           std::string stat_path)
    : min_idle_fraction_(min_idle_fraction),
      interval_ns_(interval.count()),
      stat_path_(std::move(stat_path)),
      ns_per_tick_(1000000000 / std::max<long>(1, sysconf(_SC_CLK_TCK))) {}

bool CpuIdleMeter::Idle() {
  const int64_t now = SteadyNowNs();
  if (now >= next_sample_ns_.load(std::memory_order_relaxed) && mu_.TryLock()) {
    if (now >= next_sample_ns_.load(std::memory_order_relaxed)) Sample(now);
    mu_.Unlock();
  }
  return idle_.load(std::memory_order_relaxed);
}

void CpuIdleMeter::Sample(int64_t now_ns) {
  next_sample_ns_.store(now_ns + interval_ns_, std::memory_order_relaxed);
  char buf[256];  // the first line is all we need
  CpuTimes now;
  int fd = ::open(stat_path_.c_str(), O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : ::read(fd, buf, sizeof(buf));
  if (fd >= 0) ::close(fd);
  if (n <= 0 || !ParseCpuTimes(std::string_view(buf, static_cast<size_t>(n)), &now)) {
    idle_.store(false, std::memory_order_relaxed);
    last_ = CpuTimes{};
    return;
  }
  const bool have_last = last_.total != 0 && now.total > last_.total && now.idle >= last_.idle;
  const uint64_t own_idle_ticks =
      static_cast<uint64_t>(own_idle_ns_.exchange(0, std::memory_order_relaxed) / ns_per_tick_);
  const uint64_t idle = std::min(now.idle - last_.idle + own_idle_ticks, now.total - last_.total);
  idle_.store(have_last && static_cast<double>(idle) >=
                               min_idle_fraction_ * static_cast<double>(now.total - last_.total),
              std::memory_order_relaxed);
  last_ = now;
}

}  // namespace pail
