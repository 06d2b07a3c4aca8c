// Host halves of the device API's polling primitives (emulated device).
#include <sched.h>
#include <time.h>

#include "gnio/dev/thread.hpp"

namespace gnio::dev {

void host_backoff(uint32_t spins) noexcept {
  if (spins < 64) {
    sched_yield();
    return;
  }
  timespec ts{0, spins < 1024 ? 2000 : 20000};
  nanosleep(&ts, nullptr);
}

uint64_t host_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace gnio::dev
