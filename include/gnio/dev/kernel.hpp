// What a persistent kernel gets from its launcher: the exit flag to poll and
// per-block counters and heartbeat the host reads while the kernel runs.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/thread.hpp"

namespace gnio::dev {

// Two cache lines per block, in pinned host memory.
struct BlockCounters {
  uint64_t heartbeat;  // loop iterations; a value that stops moving = stalled block
  uint64_t packets;
  uint64_t bytes;
  uint64_t bursts;
  uint64_t again;      // TX reservations refused (ring full)
  uint64_t errors;
  uint64_t user;       // free for the application
  uint64_t exited;     // 1 once the block left its loop
  uint64_t stage;      // what the block last said it was doing (set_stage); names in LaunchConfig::stage_names
  uint64_t reserved[7];
};
static_assert(sizeof(BlockCounters) == 128);

class KernelCtx {
 public:
  KernelCtx() = default;
  // published: pinned host memory the host reads; shadow: device memory
  // where the counting happens (atomics need device memory). Thread 0 of
  // each block copies the shadow to `published` at every heartbeat and once
  // more when the block exits: one writer, so a count the host reads never
  // goes back (stores of several threads to one host word land in any
  // order), and counting is a fire-and-forget atomic, no round trip.
  GNIO_HD KernelCtx(const uint32_t* exit_flag, BlockCounters* published, BlockCounters* shadow)
      : exit_flag_(exit_flag), published_(published), shadow_(shadow) {}

  // False once the host asked the kernel to stop. The flag is in host
  // memory: reading it is a PCIe round trip, which a loop paying it every
  // burst spent as much time on as on its packets. So each thread reads it
  // at most every kExitCheckNs and answers from its last read in between:
  // a stop is seen that much later, and never missed.
  GNIO_HD bool running() const {
    if (stopping_) return false;
    const uint64_t now = wait_clock_ns();
    if (now < next_exit_check_ns_) return true;
    next_exit_check_ns_ = now + kExitCheckNs;
    stopping_ = load_relaxed(const_cast<uint32_t*>(exit_flag_)) != 0;
    return !stopping_;
  }

  // Block liveness: thread 0 of each block beats once per loop iteration
  // and publishes the block's counters at most every kPublishNs (and at
  // exit), so a loop that counts must beat: its counts show within
  // kPublishNs or one iteration, whichever is longer.
  GNIO_HD void heartbeat() const {
    if (thread_index() != 0) return;
    add(&BlockCounters::heartbeat, 1);
    const uint64_t now = wait_clock_ns();
    if (now < next_publish_ns_) return;
    next_publish_ns_ = now + kPublishNs;
    publish();
  }
  // Any thread: the packets and bytes it handled.
  GNIO_HD void count_packets(uint64_t packets, uint64_t bytes) const {
    if (packets) add(&BlockCounters::packets, packets);
    if (bytes) add(&BlockCounters::bytes, bytes);
  }
  // Once per burst, by the leader of the scope that received it.
  template <Scope S>
  GNIO_HD void count_burst() const {
    if (scope_rank<S>() == 0) add(&BlockCounters::bursts, 1);
  }
  GNIO_HD void count_again() const { add(&BlockCounters::again, 1); }
  GNIO_HD void count_error() const { add(&BlockCounters::errors, 1); }
  GNIO_HD void count_user(uint64_t v) const { add(&BlockCounters::user, v); }
  // Thread 0 of each block: the stage it enters (receive, process, send...),
  // so that the host can say where a stalled block stopped.
  GNIO_HD void set_stage(uint32_t stage) const {
    if (thread_index() != 0) return;
    store_relaxed(&shadow_[block_index()].stage, uint64_t{stage});
    store_relaxed(&published_[block_index()].stage, uint64_t{stage});
  }

  // Called by every thread of the block after the kernel body returned.
  GNIO_HD void mark_exited() const {
    sync_block();
    if (thread_index() != 0) return;
    publish();
    republish(&published_[block_index()].stage, shadow_[block_index()].stage);
    store_release(&published_[block_index()].exited, uint64_t{1});
  }

 private:
  using Field = uint64_t BlockCounters::*;

  GNIO_HD static void republish(uint64_t* published, const uint64_t& shadow) {
    store_relaxed(published, load_relaxed(const_cast<uint64_t*>(&shadow)));
  }

  GNIO_HD void add(Field field, uint64_t v) const { (void)fetch_add_relaxed(&(shadow_[block_index()].*field), v); }

  // Thread 0 only (the one writer of `published`). All loads first, then
  // all stores: a load then its store, seven times over, waited for seven
  // device-memory round trips in turn.
  GNIO_HD void publish() const {
    constexpr Field kFields[] = {&BlockCounters::heartbeat, &BlockCounters::packets, &BlockCounters::bytes,
                                 &BlockCounters::bursts,    &BlockCounters::again,   &BlockCounters::errors,
                                 &BlockCounters::user};
    constexpr uint32_t kN = sizeof(kFields) / sizeof(kFields[0]);
    BlockCounters& s = shadow_[block_index()];
    BlockCounters& p = published_[block_index()];
    uint64_t v[kN];
    for (uint32_t i = 0; i < kN; ++i) v[i] = load_relaxed(&(s.*kFields[i]));
    for (uint32_t i = 0; i < kN; ++i) store_relaxed(&(p.*kFields[i]), v[i]);
  }

  static constexpr uint64_t kExitCheckNs = 50000;
  static constexpr uint64_t kPublishNs = 20000;

  const uint32_t* exit_flag_ = nullptr;
  BlockCounters* published_ = nullptr;
  BlockCounters* shadow_ = nullptr;
  // Per thread (each has its own copy of the context): when to look again.
  mutable uint64_t next_exit_check_ns_ = 0;
  mutable uint64_t next_publish_ns_ = 0;
  mutable bool stopping_ = false;
};

}  // namespace gnio::dev
