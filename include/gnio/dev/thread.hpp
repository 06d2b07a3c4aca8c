// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Where the calling thread sits in the launch, clocks, and polling
/// back-off. On the GPU these are the CUDA built-ins; on the emulated
/// device each block is one CPU thread (thread 0 of a block of 1).
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"


namespace gnio::dev {

#if !GNIO_DEVICE_PASS
/// @brief The launch position of a CPU thread that runs one block of an
/// emulated kernel. Host code only (not in nvcc's device pass).
struct EmulatedThread {
  uint32_t block_index = 0;  ///< The block this thread runs, 0..grid_dim-1.
  uint32_t grid_dim = 1;     ///< Blocks in the launch.
};
/// @brief The calling CPU thread's launch position; set by the emulated
/// launcher (PersistentKernel::launch()) before the kernel body runs, read
/// by block_index() and grid_dim(). Host code only.
inline thread_local EmulatedThread emulated_thread;
#endif

/// @brief Lets a spinning CPU thread give the core away: a pause below 256
/// spins, then a yield, then (from 8192 spins) a 20 µs sleep. Host only;
/// the emulated device usually has fewer cores than threads that want them.
/// @param spins How many times the caller has polled without success.
void host_backoff(uint32_t spins) noexcept;
/// @brief CLOCK_REALTIME in nanoseconds: the clock send times are given in.
///        Host only.
/// @return Nanoseconds since the Unix epoch.
uint64_t host_now_ns() noexcept;

/// @brief The calling thread's index in its block (threadIdx.x).
/// @return 0..block_dim()-1; 0 on the emulated device.
GNIO_HD GNIO_FORCEINLINE uint32_t thread_index() {
#if GNIO_DEVICE_PASS
  return threadIdx.x;
#else
  return 0;
#endif
}

/// @brief Threads per block (blockDim.x).
/// @return LaunchConfig::block on the GPU; 1 on the emulated device.
GNIO_HD GNIO_FORCEINLINE uint32_t block_dim() {
#if GNIO_DEVICE_PASS
  return blockDim.x;
#else
  return 1;
#endif
}

/// @brief The calling thread's block (blockIdx.x).
/// @return 0..grid_dim()-1.
GNIO_HD GNIO_FORCEINLINE uint32_t block_index() {
#if GNIO_DEVICE_PASS
  return blockIdx.x;
#else
  return emulated_thread.block_index;
#endif
}

/// @brief Blocks in the launch (gridDim.x).
/// @return LaunchConfig::grid.
GNIO_HD GNIO_FORCEINLINE uint32_t grid_dim() {
#if GNIO_DEVICE_PASS
  return gridDim.x;
#else
  return emulated_thread.grid_dim;
#endif
}

/// @brief The calling thread's lane in its warp.
/// @return 0..31; 0 on the emulated device.
GNIO_HD GNIO_FORCEINLINE uint32_t lane_index() {
#if GNIO_DEVICE_PASS
  return threadIdx.x & 31u;
#else
  return 0;
#endif
}

/// @brief Block barrier (__syncthreads()); every thread of the block must
///        call it. A no-op on the emulated device.
GNIO_HD GNIO_FORCEINLINE void sync_block() {
#if GNIO_DEVICE_PASS
  __syncthreads();
#endif
}

/// @brief Warp barrier (__syncwarp()); every lane of the warp must call
///        it. A no-op on the emulated device.
GNIO_HD GNIO_FORCEINLINE void sync_warp() {
#if GNIO_DEVICE_PASS
  __syncwarp();
#endif
}

/// @brief The calling thread's rank within a scope, for spreading a
///        burst's packets over the threads that received it together.
/// @tparam S The scope.
/// @return 0 for Scope::Thread, lane_index() for Warp, thread_index() for
///         Block; 0 on the emulated device.
template <Scope S>
GNIO_HD GNIO_FORCEINLINE uint32_t scope_rank() {
  if constexpr (S == Scope::Thread) return 0;
  else if constexpr (S == Scope::Warp) return lane_index();
  else return thread_index();
}

/// @brief The number of threads in a scope (the stride for scope_rank()).
/// @tparam S The scope.
/// @return 1 for Scope::Thread, 32 for Warp, block_dim() for Block; 1 on
///         the emulated device.
template <Scope S>
GNIO_HD GNIO_FORCEINLINE uint32_t scope_size() {
#if GNIO_DEVICE_PASS
  if constexpr (S == Scope::Thread) return 1;
  else if constexpr (S == Scope::Warp) return 32;
  else return blockDim.x;
#else
  return 1;
#endif
}

/// @brief A decision all the threads of a scope take together (e.g.
///        leaving the loop), so that none is left waiting at a barrier.
///
/// Every thread of the scope must call it (it is a warp vote or a block
/// barrier).
/// @tparam S The scope.
/// @param v This thread's vote.
/// @return True when `v` is true in every thread of the scope.
template <Scope S>
GNIO_HD GNIO_FORCEINLINE bool scope_all(bool v) {
#if GNIO_DEVICE_PASS
  if constexpr (S == Scope::Warp) return __all_sync(0xffffffffu, v);
  else if constexpr (S == Scope::Block) return __syncthreads_and(v) != 0;
#endif
  return v;
}

/// @brief Nanoseconds on a clock the host engine shares: CLOCK_REALTIME on
///        the host, `%%globaltimer` on the GPU (driven from the same system
///        time on Linux). For timestamps and send times.
/// @return Nanoseconds since the Unix epoch.
GNIO_HD GNIO_FORCEINLINE uint64_t now_ns() {
#if GNIO_DEVICE_PASS
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return host_now_ns();
#endif
}

/// @brief A clock for waits and intervals that need no agreement with the
///        host.
///
/// The SM's cycle counter halved on the GPU (nanoseconds at 2 GHz, so at a
/// lower clock an interval lasts longer than asked, never shorter), the
/// host clock on the emulated device. Polling loops use it rather than
/// `%%globaltimer`, a timer outside the SM. Values of different SMs are not
/// comparable.
/// @return Nanoseconds (approximately) on an arbitrary origin.
GNIO_HD GNIO_FORCEINLINE uint64_t wait_clock_ns() {
#if GNIO_DEVICE_PASS
  return static_cast<uint64_t>(clock64()) / 2;
#else
  return host_now_ns();
#endif
}

/// @brief Backs off while polling: a 32 ns sleep on the GPU for the first 8
///        spins, 256 ns after; host_backoff() on the emulated device.
/// @param spins How many times the caller has polled without success.
GNIO_HD GNIO_FORCEINLINE void backoff(uint32_t spins) {
#if GNIO_DEVICE_PASS
  __nanosleep(spins < 8 ? 32 : 256);
#else
  host_backoff(spins);
#endif
}

}  // namespace gnio::dev
