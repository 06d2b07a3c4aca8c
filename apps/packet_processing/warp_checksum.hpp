// SPDX-License-Identifier: Apache-2.0
// The ones' complement sums of a warp's packets, summed by the warp
// together: the L4 checksums of analyze_warp() (analyze.hpp). It needs
// warp shuffles, so only nvcc compiles it; on the emulated device a lane is
// the whole block and sums its packet alone.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"

namespace gnio::dev::app {

#if defined(__CUDACC__)
namespace detail {
// The sum of the little-endian 16-bit halves of the 16-byte aligned block
// at `at`, the bytes outside [start, end) counted as zero.
__device__ inline uint32_t block_halves_sum(uintptr_t at, uintptr_t start, uintptr_t end) {
  constexpr uintptr_t kBlock = 16;
  const uint4 v = *reinterpret_cast<const uint4*>(at);
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
  if (at < start || at + kBlock > end)
    for (uint32_t i = 0; i < kBlock; ++i)
      if (at + i < start || at + i >= end) w[i / 4] &= ~(0xFFu << (8 * (i % 4)));
  uint32_t sum = 0;
  for (uint32_t j = 0; j < 4; ++j) sum += (w[j] & 0xFFFFu) + (w[j] >> 16);
  return sum;
}

// One step of a warp's reduce-scatter of 32 sums per lane: part[0..W)
// becomes this lane's and its partner's (lane ^ W) sums of the W packets
// on this lane's side.
template <uint32_t W>
__device__ inline void keep_half(uint32_t (&part)[32], uint32_t lane) {
  const bool upper = (lane & W) != 0;
#pragma unroll
  for (uint32_t i = 0; i < W; ++i) {
    const uint32_t low = part[i], high = part[i + W];  // values, so that part stays in registers
    const uint32_t keep = upper ? high : low;
    const uint32_t give = upper ? low : high;
    part[i] = keep + __shfl_xor_sync(0xffffffffu, give, W);
  }
}
}  // namespace detail

// The ones' complement sum of `bytes` bytes at `region` for every lane of a
// warp (0 bytes: nothing to sum), as ones_complement_sum() gives it, by the
// whole warp together. Each lane sums its 16-byte aligned blocks of every
// lane's packet (one load instruction of the warp covers 512 bytes of a
// packet; a lane summing its own packet made every load touch 32 packets,
// which on the H200 held the parser at a third of what the queue delivered
// at 1500 B), the 32 packets' loads independent of one another; then one
// reduce-scatter (31 shuffles) leaves each lane its own packet's total.
// The aligned blocks at either end are read whole, the bytes outside the
// region counted as zero: a 16-byte block never crosses a page. Partial
// sums fit 32 bits: a lane holds at most 128 blocks of a 64 KiB packet.
// Every lane of the warp must call it.
__device__ inline uint16_t warp_ones_complement_sum(const uint8_t* region, uint32_t bytes) {
  constexpr uint32_t kAll = 0xffffffffu;
  constexpr uintptr_t kBlock = 16, kStride = 32 * kBlock;
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t part[32];  // this lane's sum of lane k's packet
#pragma unroll
  for (uint32_t k = 0; k < 32; ++k) {
    const uint32_t n = __shfl_sync(kAll, bytes, k);
    const uintptr_t start = __shfl_sync(kAll, reinterpret_cast<uintptr_t>(region), k);
    const uintptr_t end = start + n;
    uintptr_t at = (start & ~(kBlock - 1)) + lane * kBlock;
    uint32_t sum = 0;
    if (n != 0 && at < end) {
      sum = detail::block_halves_sum(at, start, end);
      for (at += kStride; at < end; at += kStride) sum += detail::block_halves_sum(at, start, end);
    }
    part[k] = sum;
  }
  // Halving: at each step a lane keeps the half of the packets whose index
  // has its lane's bit and adds its partner's sums of them.
  detail::keep_half<16>(part, lane);
  detail::keep_half<8>(part, lane);
  detail::keep_half<4>(part, lane);
  detail::keep_half<2>(part, lane);
  detail::keep_half<1>(part, lane);
  if (bytes == 0) return 0;
  // Big-endian words of the region start at `region`: where that address is
  // even, the halves summed are those words byte-swapped.
  const uint32_t folded = fold_ones_complement(part[0]);
  const uint32_t swapped = ((folded & 0xFFu) << 8) | (folded >> 8);
  return static_cast<uint16_t>((reinterpret_cast<uintptr_t>(region) & 1u) == 0 ? swapped : folded);
}
#endif

}  // namespace gnio::dev::app
