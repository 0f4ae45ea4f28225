// SteadyNowNs: the steady clock as a plain count of nanoseconds, for times
// kept in atomics or compared across threads, where a time_point does not
// fit.
#pragma once

#include <chrono>
#include <cstdint>

namespace pail {

inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace pail
