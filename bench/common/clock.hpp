// SPDX-License-Identifier: Apache-2.0
// The benchmarks' clock: monotonic, for windows and wall times.
#pragma once

#include <chrono>

namespace gnio::bench {

using Clock = std::chrono::steady_clock;

inline double secs_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace gnio::bench
