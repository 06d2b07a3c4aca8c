// What a persistent kernel gets from its launcher: the exit flag to poll and
// per-block counters and heartbeat the host reads while the kernel runs.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/thread.hpp"

namespace gnio::dev {

// One cache line per block, in pinned host memory.
struct BlockCounters {
  uint64_t heartbeat;  // loop iterations; a value that stops moving = stalled block
  uint64_t packets;
  uint64_t bytes;
  uint64_t bursts;
  uint64_t again;      // TX reservations refused (ring full)
  uint64_t errors;
  uint64_t user;       // free for the application
  uint64_t exited;     // 1 once the block left its loop
};
static_assert(sizeof(BlockCounters) == 64);

class KernelCtx {
 public:
  KernelCtx() = default;
  // published: pinned host memory the host reads; shadow: device memory the
  // block reads back, so counting never waits on a PCIe read.
  GNIO_HD KernelCtx(const uint32_t* exit_flag, BlockCounters* published, BlockCounters* shadow)
      : exit_flag_(exit_flag), published_(published), shadow_(shadow) {}

  // False once the host asked the kernel to stop.
  GNIO_HD bool running() const { return load_relaxed(const_cast<uint32_t*>(exit_flag_)) == 0; }

  // Counter updates are per block: only thread 0 of a block writes.
  GNIO_HD void heartbeat() const { add(&BlockCounters::heartbeat, 1); }
  GNIO_HD void count_burst(uint32_t packets, uint64_t bytes) const {
    add(&BlockCounters::packets, packets);
    add(&BlockCounters::bytes, bytes);
    add(&BlockCounters::bursts, 1);
  }
  GNIO_HD void count_again() const { add(&BlockCounters::again, 1); }
  GNIO_HD void count_error() const { add(&BlockCounters::errors, 1); }
  GNIO_HD void count_user(uint64_t v) const { add(&BlockCounters::user, v); }
  GNIO_HD void mark_exited() const {
    if (thread_index() == 0) store_release(&published_[block_index()].exited, uint64_t{1});
  }

 private:
  GNIO_HD void add(uint64_t BlockCounters::*field, uint64_t v) const {
    if (thread_index() != 0) return;
    uint64_t& local = shadow_[block_index()].*field;
    local += v;
    store_relaxed(&(published_[block_index()].*field), local);
  }

  const uint32_t* exit_flag_ = nullptr;
  BlockCounters* published_ = nullptr;
  BlockCounters* shadow_ = nullptr;
};

}  // namespace gnio::dev
