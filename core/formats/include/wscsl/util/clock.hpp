// Elapsed time as the reports give it: one spelling of "milliseconds since" for every report.
#pragma once

#include <chrono>

namespace wscsl {

// The milliseconds from `start` to now, on the steady clock.
inline double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace wscsl
