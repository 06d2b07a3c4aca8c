// SPDX-License-Identifier: Apache-2.0
// The floors: host<->device copy bandwidth, a kernel reading pinned host
// memory, the persistent-kernel doorbell round trip and a kernel launch.
// The emulated device measures its copies and reads with the CPU.
#include <chrono>
#include <cstring>

#include "sections.hpp"
#include "../bench_kernels.hpp"
#include "../common/clock.hpp"
#include "../common/table.hpp"
#include "gnio/dev/atomic.hpp"

using namespace gnio;
using bench::Clock;
using bench::fmt;
using bench::secs_since;

namespace gnio_bench {
namespace {

#if defined(__CUDACC__)
__global__ void read_pinned(const uint4* p, size_t n, unsigned long long* sink) {
  uint64_t s = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint4 w = p[i];
    s += w.x ^ w.y ^ w.z ^ w.w;
  }
  if (s == 0x5eedf00dull) atomicAdd(sink, 1ull);
}
__global__ void empty_kernel() {}
#endif

void copy_floors(Gpu& gpu, const Options& o, Floors& f, std::vector<Row>& rows) {
  const size_t bytes = o.quick ? (8u << 20) : (256u << 20);
  auto host = gpu.alloc(bytes, MemKind::CpuGpu, 4096);
  auto dev = gpu.alloc(bytes, MemKind::Gpu, 4096);
  Row h2d{"floor: H2D copy (pinned -> device)"}, d2h{"floor: D2H copy (device -> pinned)"},
      rd{"floor: kernel reads pinned host memory"};
  if (!host || !dev) {
    for (Row* r : {&h2d, &d2h, &rd}) r->ok = false;
  } else if (gpu.emulated()) {
    auto timed = [&](void* dst, const void* src) {
      const auto t = Clock::now();
      for (int i = 0; i < 4; ++i) std::memcpy(dst, src, bytes);
      return 4.0 * bytes / secs_since(t) / 1e9;
    };
    f.h2d_gbs = timed(dev->host_ptr(), host->host_ptr());
    f.d2h_gbs = timed(host->host_ptr(), dev->host_ptr());
    const auto t = Clock::now();
    uint64_t s = 0;
    for (int i = 0; i < 4; ++i) s += bench::touch(static_cast<const uint8_t*>(host->host_ptr()), bytes, 0, 1);
    f.pinned_read_gbs = 4.0 * bytes / secs_since(t) / 1e9;
    g_touch_sink = s;
  } else {
#if defined(__CUDACC__)
    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    auto timed = [&](const std::function<void()>& op, int reps) {
      op();
      cudaEventRecord(e0, st);
      for (int i = 0; i < reps; ++i) op();
      cudaEventRecord(e1, st);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      return reps * static_cast<double>(bytes) / (ms / 1e3) / 1e9;
    };
    f.h2d_gbs = timed([&] { cudaMemcpyAsync(dev->device_ptr(), host->host_ptr(), bytes, cudaMemcpyHostToDevice, st); }, 8);
    f.d2h_gbs = timed([&] { cudaMemcpyAsync(host->host_ptr(), dev->device_ptr(), bytes, cudaMemcpyDeviceToHost, st); }, 8);
    auto sink = static_cast<unsigned long long*>(dev->device_ptr());
    const uint32_t blocks = static_cast<uint32_t>(gpu.info().multiprocessors) * 4;
    f.pinned_read_gbs = timed(
        [&] { read_pinned<<<blocks, 256, 0, st>>>(static_cast<const uint4*>(host->device_ptr()), bytes / 16, sink); }, 4);
    for (Row* r : {&h2d, &d2h, &rd}) r->ok = cudaGetLastError() == cudaSuccess;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(st);
#endif
  }
  h2d.result = fmt("%.1f GB/s", f.h2d_gbs);
  d2h.result = fmt("%.1f GB/s", f.d2h_gbs);
  rd.result = fmt("%.1f GB/s", f.pinned_read_gbs);
  rd.bound = "H2D floor";
  rd.ratio = f.h2d_gbs > 0 ? f.pinned_read_gbs / f.h2d_gbs : 0;
  rows.insert(rows.end(), {h2d, d2h, rd});
}

void doorbell_floor(Gpu& gpu, const Options& o, Floors& f, std::vector<Row>& rows) {
  Row r{"floor: doorbell round trip (persistent kernel, pinned host)"};
  auto mem = gpu.alloc(256, MemKind::CpuGpu, 128);
  if (!mem) {
    r.ok = false;
    rows.push_back(r);
    return;
  }
  auto* ping_host = static_cast<uint64_t*>(mem->host_ptr());
  auto* ping_dev = static_cast<uint64_t*>(mem->device_ptr());
  auto k = PersistentKernel::launch(gpu, launch_config(1, gpu.emulated() ? 1u : 32u, "bench-doorbell"),
                                    bench::DoorbellKernel{ping_dev, ping_dev + 16});
  std::vector<double> rtt;
  const uint32_t n = o.quick ? 200 : 20000;
  for (uint64_t i = 1; k && i <= n + 100; ++i) {
    const auto t0 = Clock::now();
    dev::store_release(ping_host, i);
    const auto deadline = t0 + std::chrono::seconds(1);
    while (dev::load_acquire(ping_host + 16) != i)
      if (Clock::now() > deadline) break;
    if (i > 100) rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  if (k) k->stop();
  const Percentiles p = percentiles(rtt);
  f.doorbell_us = p.p50;
  r.ok = k.has_value() && p.n == n;
  r.result = fmt("p50 %.2f us", p.p50) + fmt(", p99 %.2f us", p.p99);
  rows.push_back(r);
}

void launch_floor(Gpu& gpu, std::vector<Row>& rows) {
  Row r{"floor: empty kernel launch + sync"};
  if (gpu.emulated()) {
    r.result = "n/a (emulated device)";
  } else {
#if defined(__CUDACC__)
    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    empty_kernel<<<1, 32, 0, st>>>();
    cudaStreamSynchronize(st);
    const int n = 2000;
    auto t = Clock::now();
    for (int i = 0; i < n; ++i) {
      empty_kernel<<<1, 32, 0, st>>>();
      cudaStreamSynchronize(st);
    }
    const double sync_us = secs_since(t) * 1e6 / n;
    t = Clock::now();
    for (int i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, st>>>();
    cudaStreamSynchronize(st);
    const double async_us = secs_since(t) * 1e6 / n;
    r.ok = cudaGetLastError() == cudaSuccess;
    cudaStreamDestroy(st);
    r.result = fmt("%.2f us", sync_us) + fmt(" (%.2f us async)", async_us);
#endif
  }
  rows.push_back(r);
}

}  // namespace

Floors floor_rows(Gpu& gpu, const Options& o, std::vector<Row>& table) {
  Floors f;
  copy_floors(gpu, o, f, table);
  doorbell_floor(gpu, o, f, table);
  launch_floor(gpu, table);
  return f;
}

}  // namespace gnio_bench
