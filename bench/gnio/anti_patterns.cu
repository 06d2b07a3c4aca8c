// SPDX-License-Identifier: Apache-2.0
// The anti-patterns, on the packets of the ceiling: a copy and a launch per
// packet, and a host copy plus a launch per burst of 32 and of 256.
#include <cstring>
#include <functional>

#include "sections.hpp"
#include "../bench_kernels.hpp"
#include "../common/clock.hpp"

using namespace gnio;
using bench::Clock;
using bench::secs_since;

namespace gnio_bench {
namespace {

#if defined(__CUDACC__)
__global__ void touch_burst(const uint8_t* data, uint32_t n, uint32_t buf, uint32_t len, unsigned long long* sink) {
  uint64_t s = 0;
  for (uint32_t first = threadIdx.x & ~31u; first < n; first += blockDim.x) {
    const uint32_t i = first + (threadIdx.x & 31u);
    s += bench::touch_warp(i < n ? data + size_t{i} * buf : nullptr, i < n ? len : 0);
  }
  if (s == 0x5eedf00dull) atomicAdd(sink, 1ull);
}
#endif

// burst == 1: a copy and a launch per packet (synchronised every 256
// packets, so that buffers can be reused); burst > 1: the host gathers the
// burst into pinned staging, copies it in one piece, launches and waits.
Row launch_pattern(Gpu& gpu, const Options& o, uint32_t size, uint32_t burst) {
  Row r{burst == 1 ? std::string("anti-pattern: copy + launch per packet")
                   : "anti-pattern: host copy + launch per burst of " + std::to_string(burst),
        size, 1};
  r.ok = false;
  const uint32_t buf = buffer_size(size), n = o.ring;
  const auto frames = make_frames(size, o.frames);
  auto pool = gpu.alloc(size_t{n} * buf, MemKind::CpuGpu, 4096);
  auto staging = gpu.alloc(size_t{bench::kBurst} * buf, MemKind::CpuGpu, 4096);
  auto devbuf = gpu.alloc(size_t{bench::kBurst} * buf + 128, MemKind::Gpu, 4096);
  if (frames.empty() || !pool || !staging || !devbuf) return r;
  auto* pool_h = static_cast<uint8_t*>(pool->host_ptr());
  for (uint32_t i = 0; i < n; ++i) std::memcpy(pool_h + size_t{i} * buf, frames[i % frames.size()].data(), size);
  auto* stage_h = static_cast<uint8_t*>(staging->host_ptr());
  auto* dev_data = static_cast<uint8_t*>(devbuf->device_ptr());
  uint64_t next = 0, sum = 0;
  const uint32_t per_sync = burst == 1 ? bench::kBurst : burst;
  // One round: per_sync packets in, processed, waited for.
  std::function<void()> round;
  if (gpu.emulated()) {
    round = [&] {
      for (uint32_t j = 0; j < per_sync; ++j, ++next) {
        std::memcpy(stage_h + size_t{j} * buf, pool_h + (next % n) * buf, size);
        if (burst == 1) sum += bench::touch(stage_h + size_t{j} * buf, size, 0, 1);
      }
      if (burst > 1) std::memcpy(dev_data, stage_h, size_t{burst} * buf);
      for (uint32_t j = 0; burst > 1 && j < burst; ++j) sum += bench::touch(dev_data + size_t{j} * buf, size, 0, 1);
    };
  } else {
#if defined(__CUDACC__)
    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    auto* sink = reinterpret_cast<unsigned long long*>(dev_data + size_t{bench::kBurst} * buf);
    round = [&, st, sink] {
      if (burst == 1) {
        for (uint32_t j = 0; j < per_sync; ++j, ++next) {
          cudaMemcpyAsync(dev_data + size_t{j} * buf, pool_h + (next % n) * buf, size, cudaMemcpyHostToDevice, st);
          touch_burst<<<1, 32, 0, st>>>(dev_data + size_t{j} * buf, 1, buf, size, sink);
        }
      } else {
        for (uint32_t j = 0; j < burst; ++j, ++next)
          std::memcpy(stage_h + size_t{j} * buf, pool_h + (next % n) * buf, size);
        cudaMemcpyAsync(dev_data, stage_h, size_t{burst} * buf, cudaMemcpyHostToDevice, st);
        touch_burst<<<1, 256, 0, st>>>(dev_data, burst, buf, size, sink);
      }
      cudaStreamSynchronize(st);
    };
#endif
  }
  round();  // warm
  next = 0;
  const auto t0 = Clock::now();
  while (secs_since(t0) < o.window_s) round();
  r.seconds = secs_since(t0);
  r.packets = next;
  r.bytes = next * size;
#if defined(__CUDACC__)
  r.ok = gpu.emulated() || cudaGetLastError() == cudaSuccess;
#else
  r.ok = r.packets > 0;
#endif
  g_touch_sink = sum;
  return r;
}

}  // namespace

std::vector<Row> anti_pattern_rows(Gpu& gpu, const Options& o, const std::vector<Row>& ceilings,
                                   std::vector<Row>& table) {
  std::vector<Row> rows;
  if (!o.runs("anti")) return rows;
  for (uint32_t size : {64u, 1500u})
    for (uint32_t burst : {1u, 32u, 256u}) {
      Row a = launch_pattern(gpu, o, size, burst);
      bound_by_ceiling(a, ceiling_of(ceilings, size, RingMem::Gpu));
      rows.push_back(a);
      table.push_back(a);
    }
  return rows;
}

}  // namespace gnio_bench
