// gnio_bench: one table of what gnio's datapath delivers and what bounds it.
//
// Rows, each with its ratio to the floor or ceiling that bounds it:
//  - floors: host<->device copy bandwidth, a kernel reading pinned host
//    memory, the persistent-kernel doorbell round trip, a kernel launch;
//  - the bare-ring ceiling: the same receive kernel fed by one host thread
//    that only copies prebuilt frames (mem=gpu) or descriptors (mem=host)
//    into a ring laid out as gnio/dev/ring.hpp says and publishes it;
//  - gnio: the NIC engine fed by the prebuilt source (mem:) and by the
//    generator (synthetic:), 64..8000 B, mem=host|gpu, 1..8 queues;
//  - the anti-patterns on the same packets: a launch per packet, a host
//    copy plus a launch per burst of 32 and of 256;
//  - TX from device and host memory payloads; echo latency at low load.
// Throughput rows run until their source has delivered, then count the
// packets the kernel finished in a fixed window.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gnio_bench_options.hpp"
#include "../examples/common/example.hpp"
#include "../examples/common/kernels.hpp"
#include "bench_kernels.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;
using Clock = std::chrono::steady_clock;

namespace {

using gnio_bench::Options;


// Where sums of bytes read on the host go, so that no read is left out.
volatile uint64_t g_touch_sink = 0;

double secs_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One line of the table. Throughput rows fill packets/bytes/seconds;
// floors and latency rows put their measurement in `result`.
struct Row {
  Row() = default;
  explicit Row(std::string n, uint32_t sz = 0, uint32_t q = 0) : name(std::move(n)), size(sz), queues(q) {}
  std::string name;
  uint32_t size = 0, queues = 0;
  uint64_t packets = 0, bytes = 0;
  double seconds = 0;
  std::string result;  // floors and latency
  std::string bound;   // what bounds the row
  double ratio = 0;    // row / bound (latency: bound / row)
  bool ok = true;
  double mpps() const { return seconds > 0 ? packets / seconds / 1e6 : 0; }
  double gbps() const { return seconds > 0 ? bytes * 8.0 / seconds / 1e9 : 0; }
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// A row whose kernel did not launch (e.g. too many registers for --block):
// it stays not ok, and stderr says why.
Row not_launched(const Row& r, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", r.name.c_str(), s.to_string().c_str());
  return r;
}

// A block's burst on average, from the receive kernel's own clock: its
// size and where the block's time went (TouchTotals).
std::string burst_anatomy(const bench::TouchTotals& t) {
  if (t.bursts == 0) return {};
  const double n = static_cast<double>(t.bursts);
  return fmt("; a block's burst: %.0f packets,", static_cast<double>(t.packets) / n) +
         fmt(" %.1f us to hold,", static_cast<double>(t.receive_ns) / n / 1e3) +
         fmt(" %.1f to read,", static_cast<double>(t.read_ns) / n / 1e3) +
         fmt(" %.1f to release", static_cast<double>(t.release_ns) / n / 1e3);
}

std::string machine(const Gpu& gpu) {
  utsname u{};
  uname(&u);
  std::string cpu = "unknown cpu", driver = "no NVIDIA driver";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  std::ifstream d("/proc/driver/nvidia/version");
  if (std::string line; std::getline(d, line)) {
    const size_t k = line.find("Kernel Module");
    driver = k == std::string::npos ? line : line.substr(k);
    driver = driver.substr(0, driver.find("  "));
  }
  return "GPU " + gpu.info().name + " (" + gpu.bus_id() + "), driver: " + driver + "; CPU " + cpu + " x " +
         std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + "; kernel " + u.sysname + " " + u.release + " " + u.machine;
}

// `count` frames of `size` bytes from the generator: the packets every
// ceiling and anti-pattern row carries (gnio's rows prebuild the same ones).
std::string generator_spec(uint32_t size, uint64_t count, uint32_t queues) {
  return "synthetic:count=" + std::to_string(count) + ",flows=1024,size=" + std::to_string(size) +
         ",queues=" + std::to_string(queues);
}

std::vector<std::vector<uint8_t>> make_frames(uint32_t size, uint32_t n) {
  std::vector<std::vector<uint8_t>> frames;
  examples::for_each_host_frame(generator_spec(size, n, 1), [&](const std::vector<uint8_t>& f) { frames.push_back(f); });
  return frames;
}

uint32_t buffer_size(uint32_t size) { return std::max(64u, std::bit_ceil(size)); }

// Waits until the kernel has finished packets (the source delivers), then
// counts what it finishes in the window.
LaunchConfig launch_config(uint32_t grid, uint32_t block, const char* name) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.name = name;
  return c;
}

// `at_start` runs when the window opens (to take the first of two samples).
bool measure(const PersistentKernel& k, double window_s, Row& r, const std::function<void()>& at_start = {}) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (k.totals().packets == 0)
    if (Clock::now() > deadline) return false;
    else std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::duration<double>(window_s / 4));  // past the ramp
  if (at_start) at_start();
  const KernelTotals a = k.totals();
  const auto t0 = Clock::now();
  // A window in which nothing finished (threads of a busy emulated device
  // not scheduled) is extended, up to 2 s; a row still at 0 fails.
  KernelTotals b;
  do {
    std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
    b = k.totals();
  } while (b.packets == a.packets && secs_since(t0) < 2.0);
  r.seconds = secs_since(t0);
  r.packets = b.packets - a.packets;
  r.bytes = b.bytes - a.bytes;
  return r.packets > 0;
}

// ---- floors ------------------------------------------------------------------

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

struct Floors {
  double h2d_gbs = 0, d2h_gbs = 0, pinned_read_gbs = 0, doorbell_us = 0;
};

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

struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0;
  size_t n = 0;
};
Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.n = v.size();
  p.p50 = v[v.size() / 2];
  p.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  p.p999 = v[std::min(v.size() - 1, v.size() * 999 / 1000)];
  return p;
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

// ---- the bare-ring ceiling -----------------------------------------------------

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
  const char* mem_text = mem == RingMem::Gpu ? "gpu" : "host";
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
  ring.told = ring.claim + 16;
  ring.desc_mask = n - 1;
  ring.stride_shift = static_cast<uint32_t>(std::countr_zero(buf));
  ring.release_step = std::max(1u, n / 8);  // as the engine sets it: one frame per stride here
  bench::QueueSet set;
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

// ---- gnio ------------------------------------------------------------------------

struct RxCase {
  uint32_t size;
  RingMem mem;
  uint32_t queues;
  bool prebuilt;
  bench::Touch touch = bench::Touch::Bytes;  // Nothing: an anatomy row (receive and release only)
};

Row gnio_rx(Gpu& gpu, const Options& o, const RxCase& c) {
  const std::string source = c.prebuilt ? "mem" : "synthetic";
  const std::string mem_text = c.mem == RingMem::Gpu ? "gpu" : "host";
  Row r{c.touch == bench::Touch::Bytes ? "gnio " + source + ": mem=" + mem_text
                                       : "kernel anatomy: gnio " + source + ":, mem=" + mem_text + ", reads nothing",
        c.size, c.queues};
  r.ok = false;
  const std::string spec = c.prebuilt ? "mem:count=0,frames=" + std::to_string(o.frames) + ",flows=1024,size=" +
                                            std::to_string(c.size) + ",ring=" + std::to_string(o.ring) +
                                            ",queues=" + std::to_string(c.queues)
                                      : generator_spec(c.size, 0, c.queues);
  auto dev = EthDevice::open(spec);
  if (!dev) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), dev.status().to_string().c_str());
    return r;
  }
  std::vector<EthRxq> qs;
  std::vector<GpuRxq> hs;
  bench::QueueSet set;
  const uint32_t stride = std::clamp(std::bit_ceil(c.size), 64u, 2048u);
  for (uint32_t id = 0; id < c.queues && id < bench::QueueSet::kMax; ++id) {
    auto q = dev->create_rxq(static_cast<uint16_t>(id));
    if (!q) return r;
    for (Status s : {q->set_num_strides(o.strides), q->set_stride_size(stride), q->set_burst_size(bench::kBurst),
                     q->set_ring_mem(c.mem), q->set_gpu(gpu), q->start()})
      if (!s) {
        std::fprintf(stderr, "%s: %s\n", spec.c_str(), s.to_string().c_str());
        return r;
      }
    auto h = GpuRxq::create(gpu, *q);
    if (!h) return r;
    set.rxq[set.count++] = h->handle();
    qs.push_back(std::move(*q));
    hs.push_back(std::move(*h));
  }
  auto totals = gpu.alloc(sizeof(bench::TouchTotals), MemKind::GpuCpu);
  if (!totals) return r;
  auto k = PersistentKernel::launch(
      gpu, launch_config(set.count * (gpu.emulated() ? 1u : o.blocks_per_queue), gpu.emulated() ? 1u : o.block, "bench-rx"),
      bench::TouchKernel{set, static_cast<bench::TouchTotals*>(totals->device_ptr()), o.burst, c.touch});
  if (!k) return not_launched(r, k.status());
  // Where each engine thread's time went in the window: a thread busy all
  // of it bounds the row; one mostly idle leaves the bound to the kernel.
  // A publication's cost and its copies say whether the engine's CUDA calls
  // (mem=gpu) bound it.
  auto engine_ns = [&] {
    std::array<uint64_t, 5> t{};  // busy, idle, publishing, publications, copies
    for (const EthRxq& q : qs) {
      const RxqStats st = q.stats();
      t[0] += st.busy_ns;
      t[1] += st.idle_ns;
      t[2] += st.publish_ns;
      t[3] += st.bursts;
      t[4] += st.copies;
    }
    return t;
  };
  std::array<uint64_t, 5> before{};
  const bool got = measure(*k, o.window_s, r, [&] { before = engine_ns(); });
  const std::array<uint64_t, 5> after = engine_ns();
  const double busy = static_cast<double>(after[0] - before[0]), idle = static_cast<double>(after[1] - before[1]);
  const double pubs = static_cast<double>(after[3] - before[3]);
  if (busy + idle > 0)
    r.result = fmt("engine busy %.0f %%", 100 * busy / (busy + idle)) +
               fmt(" (publishing %.0f %% of it", busy > 0 ? 100 * static_cast<double>(after[2] - before[2]) / busy : 0) +
               (pubs > 0 ? fmt(", %.1f us", static_cast<double>(after[2] - before[2]) / pubs / 1e3) +
                               fmt(" and %.1f copies a publication", static_cast<double>(after[4] - before[4]) / pubs)
                         : std::string()) +
               ")";
  const Status s = k->stop();
  uint64_t missed = 0, errors = 0;
  for (const EthRxq& q : qs) {
    missed += q.stats().rx_missed;
    errors += q.stats().errors;
  }
  const auto* t = static_cast<const bench::TouchTotals*>(totals->host_ptr());
  r.result += burst_anatomy(*t);
  r.ok = got && s && missed == 0 && errors == 0 && t->bad_release == 0;
  for (GpuRxq& h : hs) h.destroy();
  for (EthRxq& q : qs) q.destroy();
  return r;
}

// ---- anti-patterns ---------------------------------------------------------------

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

// ---- TX --------------------------------------------------------------------------

Row tx(Gpu& gpu, const Options& o, uint32_t size, MemKind payload) {
  Row r{std::string("gnio TX to pcap-out:/dev/null, payload in ") +
            (payload == MemKind::Gpu ? "device memory" : "pinned host memory"),
        size, 1};
  r.ok = false;
  auto dev = EthDevice::open("pcap-out:/dev/null");
  if (!dev) return r;
  auto q = dev->create_txq(0);
  const uint32_t count = o.quick ? 1024 : 8192;
  auto pool = gpu.create_buf_arr(payload, count, buffer_size(size));
  if (!q || !pool) return r;
  const auto frames = make_frames(size, o.frames);
  std::vector<uint8_t> image(size_t{count} * pool->elem_size());
  for (uint32_t i = 0; i < count; ++i)
    std::memcpy(image.data() + size_t{i} * pool->elem_size(), frames[i % frames.size()].data(), size);
  if (pool->memory().host_ptr()) {
    std::memcpy(pool->memory().host_ptr(), image.data(), image.size());
  } else {
#if defined(__CUDACC__)
    if (cudaMemcpy(pool->memory().device_ptr(), image.data(), image.size(), cudaMemcpyHostToDevice) != cudaSuccess)
      return r;
#endif
  }
  for (Status s : {q->set_depth(4096), q->set_max_packet_size(pool->elem_size()), q->set_gpu(gpu),
                   q->register_buffer(*pool), q->start()})
    if (!s) {
      std::fprintf(stderr, "tx: %s\n", s.to_string().c_str());
      return r;
    }
  auto h = GpuTxq::create(gpu, *q);
  if (!h) return r;
  auto k = PersistentKernel::launch(gpu, launch_config(1, gpu.emulated() ? 1u : o.block, "bench-tx"),
                                    bench::TxKernel{h->handle(), pool->handle(), size, bench::kBurst});
  if (!k) return not_launched(r, k.status());
  // Counted where the packets arrive: handed to the backend by the TX engine.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (q->stats().packets == 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s / 4));
  const uint64_t a = q->stats().packets;
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
  r.packets = q->stats().packets - a;
  r.seconds = secs_since(t0);
  r.bytes = r.packets * size;
  const Status s = k->stop();
  r.ok = s && r.packets > 0 && q->stats().errors == 0 && k->totals().errors == 0;
  h->destroy();
  q->stop();
  q->destroy();
  return r;
}

// ---- echo latency ----------------------------------------------------------------

// The examples' echo kernel (one warp, bursts of one) that also notes, per
// RX packet k, when it saw the packet, had its reply written, had the TX
// descriptor committed and rang the TX doorbell (%globaltimer, the clock
// the engines stamp frames with), so that a round trip splits into its
// hops and the kernel's hop into its steps.
enum EchoStamp : uint32_t { kSeen, kReplied, kCommitted, kPushed, kStampsPerPacket };

// %globaltimer after every memory access before it in program order: the
// compiler must not move a step's loads and stores past its stamp.
GNIO_HD inline uint64_t stamp_ns() {
#if GNIO_DEVICE_PASS
  asm volatile("" ::: "memory");
#endif
  return dev::now_ns();
}

struct EchoStampKernel {
  dev::Rxq rxq;
  dev::Txq txq;
  uint64_t* stamps;  // pinned host: EchoStamp s of packet k at [kStampsPerPacket * (k % nstamps) + s]
  uint32_t nstamps;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Warp;
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(1, examples::kPollNs);
      if (b.count() == 0) continue;
      const uint64_t seen = stamp_ns();
      const bool leader = dev::scope_rank<S>() == 0;
      if (leader && examples::swap_addresses_staged(b[0].data(), b[0].size()) != dev::HeaderStatus::Ok)
        ctx.count_error();
      const uint64_t replied = stamp_ns();
      dev::TxBatch t = txq.reserve<S>(1);
      while (t.status() == dev::Status::Again && dev::scope_all<S>(ctx.running())) {
        txq.wait_completions(txq.completed() + 1, examples::kPollNs);
        t = txq.reserve<S>(1);
      }
      if (t.status() != dev::Status::Success) break;
      if (leader) t.set(0, b[0].data(), b[0].size());
      txq.commit<S>(t);
      if (leader) {
        const uint64_t committed = stamp_ns();
        txq.push();
        uint64_t* at = &stamps[kStampsPerPacket * (b.first() % nstamps)];
        dev::store_relaxed(&at[kSeen], seen);
        dev::store_relaxed(&at[kReplied], replied);
        dev::store_relaxed(&at[kCommitted], committed);
        dev::store_relaxed(&at[kPushed], stamp_ns());
        while (txq.wait_completions(t.first() + 1, examples::kPollNs) == dev::Status::Timeout && ctx.running()) {
        }
      }
      rxq.release<S>(b);
      ctx.count_packets(leader ? 1 : 0, leader ? b[0].size() : 0);
    }
  }
};

// busy: the RX engine threads of both ends spin instead of backing off
// (poll=busy, the DPDK way: a core each at 100 % for the lowest latency).
// The result splits the round trip: the peer's send to the kernel seeing
// the packet plus the doorbell to the TX engine's send (wire, RX engine,
// ring; TX engine), the kernel (its steps: the reply made, i.e. the
// descriptor and the packet read and the reply's bytes written; the TX
// reservation and the commit, whose system fence waits for those writes;
// the doorbell), and the TX engine's send to the peer's host receive
// (wire, the peer's RX engine).
Row echo_latency(Gpu& gpu, const Options& o, RingMem mem, bool busy) {
  Row r{std::string("echo round trip at low load, mem=") + (mem == RingMem::Gpu ? "gpu" : "host") +
            (busy ? ", RX engines busy-poll" : ""),
        128, 1};
  r.ok = false;
  const std::string wire = "loop:bench-" + std::to_string(getpid()) + (mem == RingMem::Gpu ? "g" : "h");
  auto a = EthDevice::open(wire);
  auto b = EthDevice::open(wire);
  if (!a || !b) return r;
  auto rxq = a->create_rxq(0);
  auto txq = a->create_txq(0);
  if (!rxq || !txq) return r;
  for (Status s : {rxq->set_num_strides(1024), rxq->set_burst_size(1), rxq->set_ring_mem(mem), rxq->set_busy_poll(busy),
                   rxq->set_gpu(gpu), rxq->start(), txq->set_depth(256), txq->set_gpu(gpu), txq->start()})
    if (!s) {
      std::fprintf(stderr, "echo: %s\n", s.to_string().c_str());
      return r;
    }
  auto hrx = GpuRxq::create(gpu, *rxq);
  auto htx = GpuTxq::create(gpu, *txq);
  if (!hrx || !htx) return r;
  const uint32_t nstamps = o.samples + 128;
  auto stamps = gpu.alloc(size_t{nstamps} * kStampsPerPacket * sizeof(uint64_t), MemKind::CpuGpu, 128);
  if (!stamps) return r;
  auto* stamp = static_cast<const uint64_t*>(stamps->host_ptr());
  auto k = PersistentKernel::launch(
      gpu, launch_config(1, gpu.emulated() ? 1u : 32u, "bench-echo"),
      EchoStampKernel{hrx->handle(), htx->handle(), static_cast<uint64_t*>(stamps->device_ptr()), nstamps});
  auto peer_tx = b->create_txq(0);
  auto peer_rx = b->create_rxq(0);
  if (!k) return not_launched(r, k.status());
  if (!peer_tx || !peer_rx || !peer_tx->start() || !peer_rx->set_busy_poll(busy) || !peer_rx->start()) return r;
  const auto frames = make_frames(128, 1);
  std::vector<double> rtt, hop_engines, hop_kernel, hop_back, step_reply, step_commit, step_push;
  const uint32_t warm = 100;
  for (uint32_t i = 0; i < o.samples + warm; ++i) {
    std::span<const uint8_t> one(frames.front());
    const auto t0 = Clock::now();
    const uint64_t sent_ns = dev::host_now_ns();
    if (!peer_tx->host_send(std::span(&one, 1))) break;
    const auto deadline = t0 + std::chrono::seconds(1);
    std::optional<HostFrame> reply;
    while (!reply && Clock::now() < deadline) {
      auto got = peer_rx->host_receive(1);
      if (got && !got->empty()) reply = std::move(got->front());
    }
    if (!reply) break;
    const uint64_t back_ns = dev::host_now_ns();
    if (i < warm) continue;
    rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    // Packet i is RX descriptor i: one packet per round trip since the start.
    // The kernel's stamps are on the GPU's clock, whose offset from the
    // host's is unknown: only differences on one clock are used, and the
    // two hops that cross clocks (send to seen, pushed to the TX engine's
    // send) are summed, which cancels the offset.
    auto stamp_of = [&](EchoStamp which) {
      return static_cast<int64_t>(
          dev::load_acquire(const_cast<uint64_t*>(&stamp[kStampsPerPacket * (i % nstamps) + which])));
    };
    const int64_t seen = stamp_of(kSeen), replied = stamp_of(kReplied), committed = stamp_of(kCommitted),
                  pushed = stamp_of(kPushed);
    const auto tx_sent = static_cast<int64_t>(reply->timestamp_ns);  // the TX engine's send time, carried by loop:
    hop_engines.push_back(static_cast<double>((seen - static_cast<int64_t>(sent_ns)) + (tx_sent - pushed)) / 1e3);
    hop_kernel.push_back(static_cast<double>(pushed - seen) / 1e3);
    step_reply.push_back(static_cast<double>(replied - seen) / 1e3);
    step_commit.push_back(static_cast<double>(committed - replied) / 1e3);
    step_push.push_back(static_cast<double>(pushed - committed) / 1e3);
    hop_back.push_back(static_cast<double>(static_cast<int64_t>(back_ns) - tx_sent) / 1e3);
  }
  const Status s = k->stop();
  const Percentiles p = percentiles(rtt);
  r.packets = p.n;
  r.result = fmt("p50 %.1f", p.p50) + fmt(" / p99 %.1f", p.p99) + fmt(" / p99.9 %.1f us", p.p999);
  if (!hop_kernel.empty())
    r.result += "; p50 of the hops: send to the kernel and doorbell to TX send" +
                fmt(" %.1f, kernel", percentiles(hop_engines).p50) + fmt(" %.1f", percentiles(hop_kernel).p50) +
                fmt(" (reply made %.1f,", percentiles(step_reply).p50) +
                fmt(" TX reserve and commit %.1f,", percentiles(step_commit).p50) +
                fmt(" doorbell %.1f)", percentiles(step_push).p50) +
                fmt(", TX send to the peer's receive %.1f us", percentiles(hop_back).p50);
  r.ok = s && p.n == o.samples;
  r.ratio = p.p50;  // divided by the doorbell floor by the caller
  return r;
}

// ---- the table ---------------------------------------------------------------------

struct Target {
  std::string what, measured, goal;
  bool met;
};

void print(const std::string& machine_line, const Options& o, const std::vector<Row>& rows,
           const std::vector<Target>& targets) {
  std::printf("\nmachine: %s\n", machine_line.c_str());
  std::printf("window per throughput row: %.2f s%s; bursts of %u, %u threads per block, %u blocks per RX queue\n\n",
              o.window_s, o.quick ? " (--quick)" : "", o.burst, o.block, o.blocks_per_queue);
  std::printf("| row | size B | queues | packets | Mpps | Gbit/s | result | bound | ratio | ok |\n"
              "|---|---:|---:|---:|---:|---:|---|---|---:|---|\n");
  for (const Row& r : rows) {
    const bool rate = r.seconds > 0;
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                r.size ? std::to_string(r.size).c_str() : "–", r.queues ? std::to_string(r.queues).c_str() : "–",
                r.packets ? std::to_string(r.packets).c_str() : "–", rate ? fmt("%.3f", r.mpps()).c_str() : "–",
                rate ? fmt("%.2f", r.gbps()).c_str() : "–", r.result.empty() ? "–" : r.result.c_str(),
                r.bound.empty() ? "–" : r.bound.c_str(), r.bound.empty() ? "–" : fmt("%.3f", r.ratio).c_str(),
                r.ok ? "yes" : "NO");
  }
  if (o.partial()) {
    std::printf("\ntargets: not read (a partial run: --only, --sizes or --queue-counts)\n");
    return;
  }
  std::printf("\n| target | measured | goal | met |\n|---|---|---|---|\n");
  for (const Target& t : targets)
    std::printf("| %s | %s | %s | %s |\n", t.what.c_str(), t.measured.c_str(), t.goal.c_str(), t.met ? "yes" : "no");
}

}  // namespace

int gnio_bench::run(Options o) {
  if (o.quick) {
    o.window_s = std::min(o.window_s, 0.05);
    o.samples = std::min(o.samples, 200u);
    o.frames = 256;
    o.ring = 1024;
    o.strides = 2048;
    o.burst = std::min(o.burst, o.ring / 4);  // a ring of four bursts, as in a full run
  }
  auto gpu = examples::open_gpu(o.gpu, false);
  if (!gpu) return examples::fail(gpu.status());
  const auto started = Clock::now();

  std::vector<Row> rows;
  Floors fl;
  copy_floors(*gpu, o, fl, rows);
  doorbell_floor(*gpu, o, fl, rows);
  launch_floor(*gpu, rows);
  const double h2d_gbit = fl.h2d_gbs * 8, d2h_gbit = fl.d2h_gbs * 8, read_gbit = fl.pinned_read_gbs * 8;

  const std::vector<uint32_t>& sizes = o.sizes;
  const RingMem mems[] = {RingMem::Host, RingMem::Gpu};
  auto mem_name = [](RingMem m) { return m == RingMem::Gpu ? "gpu" : "host"; };
  // Ceilings by size and ring memory; gnio rows are read against them.
  std::vector<Row> ceilings;
  static const Row kNoCeiling;  // sections run without their ceiling read a ratio of 0
  auto ceiling_of = [&](uint32_t size, RingMem m) -> const Row& {
    for (const Row& c : ceilings)
      if (c.size == size && c.name.find(std::string("mem=") + mem_name(m)) != std::string::npos) return c;
    return kNoCeiling;
  };
  for (uint32_t size : sizes)
    for (RingMem m : mems) {
      if (!o.runs("ceiling")) break;
      Row c = ceiling(*gpu, o, size, m, o.blocks_per_queue, bench::Touch::Bytes);
      c.bound = m == RingMem::Gpu ? "H2D floor" : "pinned-read floor";
      c.ratio = c.gbps() / (m == RingMem::Gpu ? h2d_gbit : read_gbit);
      ceilings.push_back(c);
      rows.push_back(c);
    }
  // Anatomy of the 64 B ceiling: what a block costs per burst with less to
  // do, and whether more blocks per queue add throughput.
  for (RingMem m : mems)
    for (uint32_t blocks : {1u, 2u, 8u})
      if (o.runs("anatomy"))
      for (bench::Touch t : {bench::Touch::Bytes, bench::Touch::Descriptors, bench::Touch::Nothing}) {
        if (blocks == o.blocks_per_queue && t == bench::Touch::Bytes) continue;  // the ceiling row itself
        if (blocks == 8 && t != bench::Touch::Bytes) continue;
        Row a = ceiling(*gpu, o, 64, m, blocks, t);
        a.bound = fmt("ceiling %.2f Mpps", ceiling_of(64, m).mpps());
        a.ratio = ceiling_of(64, m).mpps() > 0 ? a.mpps() / ceiling_of(64, m).mpps() : 0;
        rows.push_back(a);
      }
  std::vector<Row> gnio_rows;
  for (uint32_t size : sizes)
    for (RingMem m : mems)
      for (bool prebuilt : {true, false})
        for (uint32_t nq : o.queue_counts) {
          if (!o.runs("gnio")) break;
          Row g = gnio_rx(*gpu, o, {size, m, nq, prebuilt});
          const Row& c = ceiling_of(size, m);
          g.bound = fmt("ceiling %.2f Mpps", c.mpps());
          g.ratio = c.mpps() > 0 ? g.mpps() / c.mpps() : 0;
          gnio_rows.push_back(g);
          rows.push_back(g);
        }
  // Anatomy of the engine's rows over several queues: the kernel only
  // receives and releases. If these stop adding up with more queues, the
  // bound is the receive/release chain or the engines, not reading packets.
  for (RingMem m : mems)
    for (uint32_t nq : o.queue_counts) {
      if (!o.runs("anatomy")) break;
      Row a = gnio_rx(*gpu, o, {64, m, nq, true, bench::Touch::Nothing});
      a.bound = fmt("ceiling %.2f Mpps", ceiling_of(64, m).mpps());
      a.ratio = ceiling_of(64, m).mpps() > 0 ? a.mpps() / ceiling_of(64, m).mpps() : 0;
      rows.push_back(a);
    }
  std::vector<Row> anti;
  for (uint32_t size : {64u, 1500u})
    for (uint32_t burst : {1u, 32u, 256u}) {
      if (!o.runs("anti")) break;
      Row a = launch_pattern(*gpu, o, size, burst);
      const Row& c = ceiling_of(size, RingMem::Gpu);
      a.bound = fmt("ceiling %.2f Mpps", c.mpps());
      a.ratio = c.mpps() > 0 ? a.mpps() / c.mpps() : 0;
      anti.push_back(a);
      rows.push_back(a);
    }
  for (uint32_t size : {64u, 1500u})
    for (MemKind k : {MemKind::Gpu, MemKind::CpuGpu}) {
      if (!o.runs("tx")) break;
      Row t = tx(*gpu, o, size, k);
      t.bound = fmt("D2H floor %.0f Gbit/s", d2h_gbit);
      t.ratio = d2h_gbit > 0 ? t.gbps() / d2h_gbit : 0;
      rows.push_back(t);
    }
  std::vector<Row> echoes;
  for (bool busy : {false, true})
    for (RingMem m : mems) {
      if (!o.runs("echo")) break;
      Row e = echo_latency(*gpu, o, m, busy);
      e.bound = fmt("doorbell p50 %.2f us (x floor)", fl.doorbell_us);
      e.ratio = fl.doorbell_us > 0 ? e.ratio / fl.doorbell_us : 0;
      echoes.push_back(e);
      rows.push_back(e);
    }

  // The targets, read off the rows above.
  auto best = [&](uint32_t size, RingMem m, bool prebuilt, uint32_t max_queues) {
    const Row* b = nullptr;
    for (const Row& g : gnio_rows)
      if (g.size == size && g.queues <= max_queues && g.name.find(std::string("mem=") + mem_name(m)) != std::string::npos &&
          (g.name.find("gnio mem:") != std::string::npos) == prebuilt && (!b || g.mpps() > b->mpps()))
        b = &g;
    return b ? *b : Row{};
  };
  std::vector<Target> targets;
  if (!o.partial()) {
  for (RingMem m : mems) {
    const Row g = best(64, m, true, 1);
    const double ratio = ceiling_of(64, m).mpps() > 0 ? g.mpps() / ceiling_of(64, m).mpps() : 0;
    targets.push_back({std::string("64 B, one engine thread, mem=") + mem_name(m) + ", vs the ceiling",
                       fmt("%.2f", ratio), ">= 0.50", ratio >= 0.5});
  }
  {
    const Row h = best(64, RingMem::Host, true, 4), g = best(64, RingMem::Gpu, true, 4);
    const Row& b = h.mpps() >= g.mpps() ? h : g;
    targets.push_back({"64 B with <= 4 engine threads (best of mem=host/gpu)",
                       fmt("%.1f Mpps", b.mpps()) + " (" + std::to_string(b.queues) + " queues)", ">= 148.8 Mpps",
                       b.mpps() >= 148.8});
  }
  for (auto [size, goal] : {std::pair{1500u, 0.70}, std::pair{8000u, 0.85}}) {
    const Row g = best(size, RingMem::Gpu, true, 8);
    const double ratio = h2d_gbit > 0 ? g.gbps() / h2d_gbit : 0;
    targets.push_back({std::to_string(size) + " B into GPU memory from backend-owned memory, vs the H2D floor",
                       fmt("%.2f", ratio) + fmt(" (%.1f Gbit/s, ", g.gbps()) + std::to_string(g.queues) + " queues)",
                       fmt(">= %.2f", goal), ratio >= goal});
  }
  {
    const Row g = best(8000, RingMem::Host, true, 8);
    const double ratio = read_gbit > 0 ? g.gbps() / read_gbit : 0;
    targets.push_back({"mem=host, kernel reads 8000 B frames in place, vs the pinned-read floor",
                       fmt("%.2f", ratio) + fmt(" (%.1f Gbit/s, ", g.gbps()) + std::to_string(g.queues) + " queues)",
                       ">= 0.70", ratio >= 0.7});
  }
  {
    const Row h = best(64, RingMem::Host, true, 1), g = best(64, RingMem::Gpu, true, 1);
    const double persistent = std::max(h.mpps(), g.mpps());
    for (size_t i : {size_t{0}, size_t{1}}) {
      const double v = anti[i].mpps() > 0 ? persistent / anti[i].mpps() : 0;
      const double goal = i == 0 ? 50 : 3;
      targets.push_back({"persistent (64 B, 1 queue, mem:) vs " + anti[i].name.substr(anti[i].name.find(':') + 2),
                         fmt("%.1fx", v), fmt(">= %.0fx", goal), v >= goal});
    }
  }

  {
    // echoes: host, gpu (back-off), then host, gpu (busy poll)
    const Row& best_host = echoes[2].ratio > 0 && echoes[2].ratio < echoes[0].ratio ? echoes[2] : echoes[0];
    targets.push_back({"echo round trip p50, mem=host, vs the doorbell round trip (best poll mode)",
                       fmt("%.1fx", best_host.ratio) + fmt(" (%.1f us", best_host.ratio * fl.doorbell_us) +
                           (best_host.name.find("busy") != std::string::npos ? ", busy poll)" : ", back-off)"),
                       "<= 3x", best_host.ratio > 0 && best_host.ratio <= 3});
  }
  }

  print(machine(*gpu), o, rows, targets);
  std::printf("\nwall time: %.1f s\n", secs_since(started));
  for (const Row& r : rows)
    if (!r.ok) return 1;
  return 0;
}
