// Where the calling thread sits in the launch. On the GPU these are the CUDA
// built-ins; on the emulated device each block is one CPU thread.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"


namespace gnio::dev {

#if !GNIO_DEVICE_PASS
struct EmulatedThread {
  uint32_t block_index = 0;
  uint32_t grid_dim = 1;
};
inline thread_local EmulatedThread emulated_thread;
#endif

// Lets a spinning CPU thread give the core to the NIC engine (the emulated
// device usually has fewer cores than threads that want them).
void host_backoff(uint32_t spins) noexcept;
// CLOCK_REALTIME in nanoseconds: the clock send times are given in.
uint64_t host_now_ns() noexcept;

GNIO_HD GNIO_FORCEINLINE uint32_t thread_index() {
#if GNIO_DEVICE_PASS
  return threadIdx.x;
#else
  return 0;
#endif
}

GNIO_HD GNIO_FORCEINLINE uint32_t block_dim() {
#if GNIO_DEVICE_PASS
  return blockDim.x;
#else
  return 1;
#endif
}

GNIO_HD GNIO_FORCEINLINE uint32_t block_index() {
#if GNIO_DEVICE_PASS
  return blockIdx.x;
#else
  return emulated_thread.block_index;
#endif
}

GNIO_HD GNIO_FORCEINLINE uint32_t grid_dim() {
#if GNIO_DEVICE_PASS
  return gridDim.x;
#else
  return emulated_thread.grid_dim;
#endif
}

GNIO_HD GNIO_FORCEINLINE uint32_t lane_index() {
#if GNIO_DEVICE_PASS
  return threadIdx.x & 31u;
#else
  return 0;
#endif
}

GNIO_HD GNIO_FORCEINLINE void sync_block() {
#if GNIO_DEVICE_PASS
  __syncthreads();
#endif
}

GNIO_HD GNIO_FORCEINLINE void sync_warp() {
#if GNIO_DEVICE_PASS
  __syncwarp();
#endif
}

// Rank of the calling thread within a scope and the scope's size, for
// spreading a burst's packets over the threads that received it together.
template <Scope S>
GNIO_HD GNIO_FORCEINLINE uint32_t scope_rank() {
  if constexpr (S == Scope::Thread) return 0;
  else if constexpr (S == Scope::Warp) return lane_index();
  else return thread_index();
}

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

// True when v is true in every thread of the scope: a decision all the
// threads of a warp or block take together (e.g. leaving the loop), so that
// none is left waiting at a barrier.
template <Scope S>
GNIO_HD GNIO_FORCEINLINE bool scope_all(bool v) {
#if GNIO_DEVICE_PASS
  if constexpr (S == Scope::Warp) return __all_sync(0xffffffffu, v);
  else if constexpr (S == Scope::Block) return __syncthreads_and(v) != 0;
#endif
  return v;
}

// Nanoseconds on a clock the host engine shares: CLOCK_REALTIME on the host,
// %globaltimer on the GPU (driven from the same system time on Linux).
GNIO_HD GNIO_FORCEINLINE uint64_t now_ns() {
#if GNIO_DEVICE_PASS
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return host_now_ns();
#endif
}

// A clock for waits and intervals that need no agreement with the host:
// the SM's cycle counter halved on the GPU (nanoseconds at 2 GHz, so at a
// lower clock an interval lasts longer than asked, never shorter), the
// host clock on the emulated device. Polling loops use it rather than
// %globaltimer, a timer outside the SM.
GNIO_HD GNIO_FORCEINLINE uint64_t wait_clock_ns() {
#if GNIO_DEVICE_PASS
  return static_cast<uint64_t>(clock64()) / 2;
#else
  return host_now_ns();
#endif
}

// Back off while polling: a short sleep on the GPU, yield/sleep on the host.
GNIO_HD GNIO_FORCEINLINE void backoff(uint32_t spins) {
#if GNIO_DEVICE_PASS
  __nanosleep(spins < 8 ? 32 : 256);
#else
  host_backoff(spins);
#endif
}

}  // namespace gnio::dev
