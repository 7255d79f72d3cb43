#pragma once
/// Wall-clock seconds for the stage timings the runs report.
#include <chrono>

namespace ascprof {

using SteadyClock = std::chrono::steady_clock;

/// Seconds from `start` to now.
inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace ascprof
