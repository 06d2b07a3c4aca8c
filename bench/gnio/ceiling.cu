// SPDX-License-Identifier: Apache-2.0
// The bare-ring ceiling: the receive kernel fed by one host thread that
// only copies prebuilt frames (mem=gpu) or descriptors (mem=host) into a
// ring laid out as gnio/dev/ring.hpp says and publishes it; no backend and
// no engine. Its anatomy rows run the same feeder with fewer stages or more
// blocks in the kernel, to see what bounds it.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "sections.hpp"
#include "../bench_kernels.hpp"
#include "../common/clock.hpp"
#include "../common/table.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/ring.hpp"

using namespace gnio;
using bench::Clock;
using bench::fmt;

namespace gnio_bench {
namespace {

// One host thread, no backend and no engine: prebuilt frames in pinned
// memory laid out as the ring (buffer i holds frame i), descriptors prebuilt
// too. mem=host: the frames are the ring's data area and the thread copies
// descriptors into the ring and publishes the producer index with a release
// store. mem=gpu: the ring is in device memory and the thread copies a
// quarter ring of frames and descriptors at a time with cudaMemcpyAsync and
// then the producer index, on one stream, so the index lands after the bytes.
// blocks and touch other than the defaults make an anatomy row: the same
// feeder with fewer stages or blocks in the kernel, to see what bounds it.
Row ceiling(Gpu& gpu, const Options& o, uint32_t size, RingMem mem, uint32_t blocks, bench::Touch touch) {
  const char* mem_text = mem_name(mem);
  const char* touch_text = touch == bench::Touch::Bytes ? "reads every byte"
                           : touch == bench::Touch::Descriptors ? "reads descriptors only"
                                                                : "reads nothing";
  Row r{blocks == o.blocks_per_queue && touch == bench::Touch::Bytes
            ? std::string("ceiling: bare ring, one feeder thread, mem=") + mem_text
            : std::string("kernel anatomy: bare ring, mem=") + mem_text + ", " + std::to_string(blocks) + " block" +
                  (blocks == 1 ? "" : "s") + ", " + touch_text,
        size, 1};
  r.ok = false;
  const uint32_t n = o.ring, buf = buffer_size(size);
  // Publication step: a burst into a host ring; a quarter ring per copy
  // into a device ring (each cudaMemcpyAsync then moves >= 64 KiB), as a
  // NIC engine that batches its copies would.
  const bool device_ring = mem == RingMem::Gpu;
  const uint32_t B = device_ring && !gpu.emulated() ? std::max(bench::kBurst, n / 4) : bench::kBurst;
  const auto frames = make_frames(size, o.frames);
  const MemKind ring_kind = device_ring ? MemKind::Gpu : MemKind::CpuGpu;
  auto pool = gpu.alloc(size_t{n} * buf, MemKind::CpuGpu, 4096);
  auto templ = gpu.alloc(size_t{n} * sizeof(dev::RxDesc), MemKind::CpuGpu, 4096);
  auto data = device_ring ? gpu.alloc(size_t{n} * buf, MemKind::Gpu, 4096) : Result<DeviceMemory>(DeviceMemory());
  auto desc = gpu.alloc(size_t{n} * sizeof(dev::RxDesc), ring_kind, 4096);
  auto producer = gpu.alloc(128, ring_kind, 128);
  auto consumer = gpu.alloc(128, MemKind::CpuGpu, 128);
  auto claim = gpu.alloc(256, MemKind::Gpu, 128);
  auto index_slots = gpu.alloc(size_t{n / B + 1} * 8, MemKind::CpuGpu, 128);
  auto totals = gpu.alloc(sizeof(bench::TouchTotals), MemKind::GpuCpu);
  if (frames.empty() || !pool || !templ || !data || !desc || !producer || !consumer || !claim || !index_slots || !totals)
    return r;
  auto* pool_h = static_cast<uint8_t*>(pool->host_ptr());
  auto* templ_h = static_cast<dev::RxDesc*>(templ->host_ptr());
  for (uint32_t i = 0; i < n; ++i) {
    const auto& f = frames[i % frames.size()];
    std::memcpy(pool_h + size_t{i} * buf, f.data(), f.size());
    templ_h[i] = dev::RxDesc{static_cast<uint32_t>(f.size()), 0, 0, 1, uint64_t{i} * buf, 0};
  }
  dev::RxRing ring;
  ring.data = static_cast<uint8_t*>(device_ring ? data->device_ptr() : pool->device_ptr());
  ring.desc = static_cast<dev::RxDesc*>(desc->device_ptr());
  ring.producer = static_cast<uint64_t*>(producer->device_ptr());
  ring.consumer = static_cast<uint64_t*>(consumer->device_ptr());
  ring.claim = static_cast<uint64_t*>(claim->device_ptr());
  ring.released = ring.claim + 8;
  ring.consumer_shadow = ring.claim + 16;
  ring.tell_lock = ring.claim + 24;
  ring.desc_mask = n - 1;
  ring.stride_shift = static_cast<uint32_t>(std::countr_zero(buf));
  ring.release_step = std::max(1u, n / 8);  // as the engine sets it: one frame per stride here
  dev::RxQueueSet set;
  set.rxq[set.count++] = dev::Rxq(ring);
  const uint32_t grid = gpu.emulated() ? 1u : blocks;
  auto k = PersistentKernel::launch(gpu, launch_config(grid, gpu.emulated() ? 1u : o.block, "bench-ceiling"),
                                    bench::TouchKernel{set, static_cast<bench::TouchTotals*>(totals->device_ptr()),
                                                       o.burst, touch});
  if (!k) return not_launched(r, k.status());

  std::atomic<bool> stop{false}, window_open{false};
  Clock::time_point opened;  // written before window_open is set
  std::atomic<uint64_t> full_ns{0};  // the feeder's wait on a full ring (the kernel is slower) in the window
  std::thread feeder([&] {
    const auto* ci = static_cast<uint64_t*>(consumer->host_ptr());
    auto* slots = static_cast<uint64_t*>(index_slots->host_ptr());
    const uint32_t nslots = n / B + 1;
#if defined(__CUDACC__)
    cudaStream_t st = nullptr;
    if (device_ring && !gpu.emulated()) {
      cudaSetDevice(gpu.ordinal());
      cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    }
#endif
    uint64_t burst = 0;
    std::optional<Clock::time_point> full_since;
    for (uint64_t pi = 0; !stop.load(std::memory_order_relaxed);) {
      if (pi + B - dev::load_acquire(const_cast<uint64_t*>(ci)) > n) {  // ring full: wait, as a NIC would
        if (!full_since) full_since = Clock::now();
        if (gpu.emulated()) std::this_thread::yield();  // the kernel's threads need the cores
        continue;
      }
      if (full_since) {
        const auto now = Clock::now();
        if (window_open.load(std::memory_order_acquire)) {
          const auto from = std::max(*full_since, opened);  // only the part inside the window
          full_ns.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - from).count()),
                            std::memory_order_relaxed);
        }
        full_since.reset();
      }
      const uint32_t slot = static_cast<uint32_t>(pi % n);
      if (!device_ring) {
        std::memcpy(static_cast<dev::RxDesc*>(desc->host_ptr()) + slot, templ_h + slot, size_t{B} * sizeof(dev::RxDesc));
        dev::store_release(static_cast<uint64_t*>(producer->host_ptr()), pi + B);
      } else if (gpu.emulated()) {
        std::memcpy(static_cast<uint8_t*>(data->host_ptr()) + size_t{slot} * buf, pool_h + size_t{slot} * buf,
                    size_t{B} * buf);
        std::memcpy(static_cast<dev::RxDesc*>(desc->host_ptr()) + slot, templ_h + slot, size_t{B} * sizeof(dev::RxDesc));
        dev::store_release(static_cast<uint64_t*>(producer->host_ptr()), pi + B);
      } else {
#if defined(__CUDACC__)
        // Slot reuse is safe: burst k's index copy ran before the kernel
        // released burst k, which the flow control above waits for.
        uint64_t* next = &slots[burst++ % nslots];
        *next = pi + B;
        cudaMemcpyAsync(static_cast<uint8_t*>(data->device_ptr()) + size_t{slot} * buf, pool_h + size_t{slot} * buf,
                        size_t{B} * buf, cudaMemcpyHostToDevice, st);
        cudaMemcpyAsync(static_cast<dev::RxDesc*>(desc->device_ptr()) + slot, templ_h + slot,
                        size_t{B} * sizeof(dev::RxDesc), cudaMemcpyHostToDevice, st);
        cudaMemcpyAsync(producer->device_ptr(), next, 8, cudaMemcpyHostToDevice, st);
#endif
      }
      pi += B;
    }
    (void)slots;
    (void)nslots;
    (void)burst;
#if defined(__CUDACC__)
    if (st) {
      cudaStreamSynchronize(st);
      cudaStreamDestroy(st);
    }
#endif
  });
  const bool got = measure(*k, o.window_s, r, [&] {
    opened = Clock::now();
    window_open.store(true, std::memory_order_release);
  });
  window_open = false;
  const double window_ns = std::chrono::duration<double, std::nano>(Clock::now() - opened).count();
  if (window_ns > 0) r.result = fmt("feeder waited on a full ring %.0f %%", 100 * static_cast<double>(full_ns.load()) / window_ns);
  stop = true;
  feeder.join();
  const Status s = k->stop();
  const auto* t = static_cast<const bench::TouchTotals*>(totals->host_ptr());
  r.result += burst_anatomy(*t);
  r.ok = got && s && t->bad_release == 0 && k->totals().errors == 0;
  return r;
}

}  // namespace

std::vector<Row> ceiling_rows(Gpu& gpu, const Options& o, const Floors& f, std::vector<Row>& table) {
  std::vector<Row> ceilings;
  if (!o.runs("ceiling")) return ceilings;
  for (uint32_t size : o.sizes)
    for (RingMem m : {RingMem::Host, RingMem::Gpu}) {
      Row c = ceiling(gpu, o, size, m, o.blocks_per_queue, bench::Touch::Bytes);
      c.bound = m == RingMem::Gpu ? "H2D floor" : "pinned-read floor";
      c.ratio = c.gbps() / (m == RingMem::Gpu ? f.h2d_gbit() : f.pinned_read_gbit());
      ceilings.push_back(c);
      table.push_back(c);
    }
  return ceilings;
}

void ceiling_anatomy_rows(Gpu& gpu, const Options& o, const std::vector<Row>& ceilings, std::vector<Row>& table) {
  if (!o.runs("anatomy")) return;
  for (RingMem m : {RingMem::Host, RingMem::Gpu})
    for (uint32_t blocks : {1u, 2u, 8u})
      for (bench::Touch t : {bench::Touch::Bytes, bench::Touch::Descriptors, bench::Touch::Nothing}) {
        if (blocks == o.blocks_per_queue && t == bench::Touch::Bytes) continue;  // the ceiling row itself
        if (blocks == 8 && t != bench::Touch::Bytes) continue;
        Row a = ceiling(gpu, o, 64, m, blocks, t);
        bound_by_ceiling(a, ceiling_of(ceilings, 64, m));
        table.push_back(a);
      }
}

}  // namespace gnio_bench
