// SPDX-License-Identifier: Apache-2.0
// Host halves of the device API's polling primitives (emulated device).
#include <sched.h>
#include <time.h>

#include "gnio/dev/thread.hpp"

namespace gnio::dev {

// Spin briefly (a doorbell usually comes within microseconds), then yield the
// core, and only after a long idle stretch sleep: a sleep costs the timer
// slack (~50 us), which would otherwise land on every round trip.
void host_backoff(uint32_t spins) noexcept {
  if (spins < 256) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    return;
  }
  if (spins < 8192) {
    sched_yield();
    return;
  }
  timespec ts{0, 20000};
  nanosleep(&ts, nullptr);
}

uint64_t host_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace gnio::dev
