// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief What a persistent kernel gets from its launcher: the exit flag to
/// poll, and per-block counters and heartbeat the host reads while the
/// kernel runs.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/thread.hpp"

namespace gnio::dev {

/// @brief One block's counters: two cache lines, published in pinned host
/// memory for the host (PersistentKernel::counters()) and counted in a
/// device-memory shadow by the kernel (KernelCtx).
struct BlockCounters {
  uint64_t heartbeat;  ///< Loop iterations (KernelCtx::heartbeat()); a value that stops moving means a stalled block.
  uint64_t packets;    ///< Packets the block counted (KernelCtx::count_packets()).
  uint64_t bytes;      ///< Bytes the block counted (KernelCtx::count_packets()).
  uint64_t bursts;     ///< Bursts received (KernelCtx::count_burst()).
  uint64_t again;      ///< TX reservations refused because the ring was full (KernelCtx::count_again()).
  uint64_t errors;     ///< Errors the block counted (KernelCtx::count_error()).
  uint64_t user;       ///< Free for the application (KernelCtx::count_user()).
  uint64_t exited;     ///< 1 once the block left its loop (KernelCtx::mark_exited()).
  /// What the block last said it was doing (KernelCtx::set_stage()); names
  /// in LaunchConfig::stage_names.
  uint64_t stage;
  uint64_t reserved[7];  ///< Padding to 128 bytes; always zero.
};
static_assert(sizeof(BlockCounters) == 128);

/// @brief The launcher's context, passed by value to every thread of a
/// persistent kernel: the exit flag and the block's counters.
///
/// Each thread has its own copy (it caches when to look at the flag
/// again), so pass it by const reference within a thread and do not share
/// one copy between threads. Host and device (the emulated device runs the
/// same code on CPU threads).
class KernelCtx {
 public:
  /// @brief An empty context; not usable by a kernel.
  KernelCtx() = default;
  /// @brief Made by PersistentKernel::launch(); kernels receive it.
  ///
  /// Thread 0 of each block copies the shadow to `published` at a
  /// heartbeat (at most every 20 µs) and once more when the block exits:
  /// one writer, so a count the host reads never goes back (stores of
  /// several threads to one host word land in any order), and counting is
  /// a fire-and-forget device atomic, no PCIe round trip.
  /// @param exit_flag The exit flag, in pinned host memory; non-zero asks
  ///        the kernel to stop.
  /// @param published One BlockCounters per block in pinned host memory,
  ///        which the host reads.
  /// @param shadow One BlockCounters per block in device memory, where the
  ///        counting happens (atomics need device memory).
  GNIO_HD KernelCtx(const uint32_t* exit_flag, BlockCounters* published, BlockCounters* shadow)
      : exit_flag_(exit_flag), published_(published), shadow_(shadow) {}

  /// @brief Whether the kernel should keep looping: false once the host
  ///        asked it to stop (PersistentKernel::stop()).
  ///
  /// The flag is in host memory, so reading it is a PCIe round trip; each
  /// thread reads it at most every 50 µs of wait_clock_ns() and answers
  /// from its last read in between: a stop is seen that much later, and
  /// never missed. Once false it stays false. Any thread.
  /// @return True while no stop was requested (as last read).
  GNIO_HD bool running() const {
    if (stopping_) return false;
    const uint64_t now = wait_clock_ns();
    if (now < next_exit_check_ns_) return true;
    next_exit_check_ns_ = now + kExitCheckNs;
    stopping_ = load_relaxed(const_cast<uint32_t*>(exit_flag_)) != 0;
    return !stopping_;
  }

  /// @brief Block liveness: call once per loop iteration, from every thread
  ///        (only thread 0 of the block counts).
  ///
  /// Thread 0 adds one to the heartbeat and publishes the block's counters
  /// at most every 20 µs of wait_clock_ns() (and at exit), so a loop that
  /// counts must beat: its counts show within 20 µs or one iteration,
  /// whichever is longer.
  GNIO_HD void heartbeat() const {
    if (thread_index() != 0) return;
    add(&BlockCounters::heartbeat, 1);
    const uint64_t now = wait_clock_ns();
    if (now < next_publish_ns_) return;
    next_publish_ns_ = now + kPublishNs;
    publish();
  }
  /// @brief Adds the packets and bytes the calling thread handled to its
  ///        block's counters. Any thread; zeros cost nothing.
  /// @param packets Packets handled.
  /// @param bytes Bytes of those packets.
  GNIO_HD void count_packets(uint64_t packets, uint64_t bytes) const {
    if (packets) add(&BlockCounters::packets, packets);
    if (bytes) add(&BlockCounters::bytes, bytes);
  }
  /// @brief Counts one received burst. Every thread of the scope that
  ///        received it calls; only the scope's rank 0 counts.
  /// @tparam S The scope the burst was received with (dev::Rxq::receive<S>()).
  template <Scope S>
  GNIO_HD void count_burst() const {
    if (scope_rank<S>() == 0) add(&BlockCounters::bursts, 1);
  }
  /// @brief Counts one TX reservation refused because the ring was full
  ///        (dev::Status Again). Each calling thread counts one.
  GNIO_HD void count_again() const { add(&BlockCounters::again, 1); }
  /// @brief Counts one error. Each calling thread counts one.
  GNIO_HD void count_error() const { add(&BlockCounters::errors, 1); }
  /// @brief Adds to the application's own counter (BlockCounters::user).
  /// @param v The amount to add.
  GNIO_HD void count_user(uint64_t v) const { add(&BlockCounters::user, v); }
  /// @brief Records the stage the block enters (receive, process, send, ...),
  ///        so that the host can say where a stalled block stopped.
  ///
  /// Only thread 0 of the block records; the value goes to the host at
  /// once (not at the next heartbeat).
  /// @param stage An index into LaunchConfig::stage_names.
  GNIO_HD void set_stage(uint32_t stage) const {
    if (thread_index() != 0) return;
    store_relaxed(&shadow_[block_index()].stage, uint64_t{stage});
    store_relaxed(&published_[block_index()].stage, uint64_t{stage});
  }

  /// @brief Publishes the block's counters a last time and marks it exited.
  ///
  /// The launcher calls it from every thread of the block after the kernel
  /// body returned (it synchronises the block); kernels do not call it.
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
  // all stores: a load then its store, seven times over, would wait for seven
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
