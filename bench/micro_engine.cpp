// SPDX-License-Identifier: Apache-2.0
// The RX NIC engine's host cost per packet, without a kernel: the benchmark
// thread turns the engine and then releases every descriptor, as a kernel
// that keeps up would. "Old" is a frozen copy of the per-frame loop the
// engine had before the ring sink (the backend fills its own buffers, the
// engine copies each frame and parses it for metadata nobody asked for);
// the other rows are the engine as it is, on the emulated device with the
// ring in host memory, and, in the DeviceRing rows, in device memory: the
// prebuilt frames copied by the CPU into the staging mirror (what backend-
// owned memory cost before) or copied by the copy engine straight from the
// backend's memory in runs (mode 2 now). The emulated copy engine is a
// memcpy on the calling thread, so those rows include the copy the GPU's
// copy engine does on a real device; host_ns_per_packet leaves publish()
// out, which on a GPU is the CUDA calls only. The Mem rows feed the engine
// from the mem: source shaped as gnio_bench shapes it (strides and buffers
// of the frame's size, 16384 strides, bursts of 256): in place (ring in
// host memory) and by DMA (ring in device memory), the rows of gnio_bench's
// one-queue mem=host and mem=gpu without the kernel.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "backends/backend.hpp"
#include "backends/synthetic.hpp"
#include "engine/rx_engine.hpp"
#include "engine/rx_metadata.hpp"
#include "engine/queue_state.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/thread.hpp"
#include "gnio/gpu.hpp"

namespace {

using namespace gnio;

constexpr uint32_t kStrides = 4096, kStride = 2048, kBurst = 64;

// Prebuilt frames in one region: handed out in a cycle, from memory the
// backend owns (mode 2) or as private buffers the engine copies (mode 3).
class PrebuiltBackend final : public backend::Backend {
 public:
  PrebuiltBackend(uint32_t size, bool owned) : owned_(owned), size_(size) {
    caps_.driver = "prebuilt-bench";
    caps_.tx_supported = false;
    auto o = *backend::parse_synthetic_spec("synthetic:count=0,flows=16,size=" + std::to_string(size));
    pool_.resize(static_cast<size_t>(kFrames) * kSlot);
    for (uint32_t i = 0; i < kFrames; ++i) {
      auto f = backend::make_synthetic_frame(o, i);
      std::memcpy(pool_.data() + static_cast<size_t>(i) * kSlot, f.data(), f.size());
    }
  }
  const EthCaps& caps() const override { return caps_; }
  std::optional<backend::RxMemory> rx_memory(uint16_t) const override {
    if (!owned_) return std::nullopt;
    return backend::RxMemory{const_cast<uint8_t*>(pool_.data()), pool_.size()};
  }
  Result<size_t> rx_burst(uint16_t, std::span<backend::RxFrame> out) override {
    for (auto& f : out) {
      f = {};
      f.data = pool_.data() + static_cast<size_t>(next_++ & (kFrames - 1)) * kSlot;
      f.len = size_;
      f.timestamp_ns = next_;
    }
    return out.size();
  }
  bool at_end(uint16_t) const override { return false; }
  Result<size_t> tx_burst(uint16_t, std::span<const backend::TxFrame>) override { return size_t{0}; }

 private:
  static constexpr uint32_t kFrames = 8192, kSlot = 2048;
  bool owned_;
  uint32_t size_;
  EthCaps caps_;
  std::vector<uint8_t> pool_;
  uint64_t next_ = 0;
};

// A queue of the emulated device around `be`, as EthRxq::start() makes it.
// The ring's shape: the rows of a 2048-byte stride, or gnio_bench's (strides
// fitted to the frame, a deeper ring, bigger bursts).
struct Shape {
  uint32_t strides = kStrides, stride = kStride, burst = kBurst;
};

std::shared_ptr<detail::RxqImpl> make_queue(const Gpu& gpu, std::unique_ptr<backend::Backend> be, RxOffloads off,
                                            RingMem mem, Shape shape) {
  auto dev = std::make_shared<detail::DeviceImpl>();
  dev->backend = std::move(be);
  auto q = std::make_shared<detail::RxqImpl>();
  q->dev = dev;
  q->num_strides = shape.strides;
  q->stride_size = shape.stride;
  q->max_packet_size = shape.stride;
  q->burst_size = shape.burst;
  q->ring_mem = mem;
  q->offloads = off;
  q->gpu = gpu.impl();
  return q;
}

Gpu& emulated_gpu() {
  static Gpu gpu = *Gpu::open("cpu");
  return gpu;
}

// The engine as it is: one poll() per round, then everything released.
void run_engine(benchmark::State& state, std::unique_ptr<backend::Backend> be, RxOffloads off,
                RingMem mem = RingMem::Host, Shape shape = {}) {
  auto q = make_queue(emulated_gpu(), std::move(be), off, mem, shape);
  auto e = detail::RxEngine::create_unattached(*q);
  if (!e) {
    state.SkipWithError(e.status().to_string().c_str());
    return;
  }
  const dev::RxRing& ring = (*e)->device_ring();
  uint64_t before = 0;
  const uint64_t t0 = dev::host_now_ns();
  for (auto _ : state) {
    (*e)->poll();
    dev::store_release(ring.consumer, dev::load_acquire(ring.producer));
  }
  const uint64_t loop_ns = dev::host_now_ns() - t0;
  before = q->counters.packets.load();
  state.SetItemsProcessed(static_cast<int64_t>(before));
  state.counters["ns_per_packet"] =
      benchmark::Counter(static_cast<double>(before), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  // The share of the loop spent in publish(): with a ring in device memory
  // on the emulated device mostly the emulated copy engine's memcpy, which
  // a GPU's copy engine does without the host.
  const uint64_t publish_ns = q->counters.publish_ns.load();
  state.counters["publish_share"] =
      loop_ns ? static_cast<double>(publish_ns) / static_cast<double>(loop_ns) : 0.0;
  // The host's own cost per packet: the loop less publish(), which on a GPU
  // is the CUDA calls only (the copies run on the copy engine).
  state.counters["host_ns_per_packet"] =
      before ? static_cast<double>(loop_ns - std::min(loop_ns, publish_ns)) / static_cast<double>(before) : 0.0;
}

// ---- the engine's per-frame loop before the sink, frozen -------------------

class OldLoop {
 public:
  explicit OldLoop(backend::Backend& be) : be_(be), frames_(kBurst) {
    data_.resize(static_cast<size_t>(kStrides) * kStride);
    desc_.resize(kStrides);
    span_end_.resize(kStrides);
  }

  // One iteration of the old run(): reclaim, one burst, publish.
  void round(std::atomic<uint64_t>& packets) {
    while (reclaimed_ < consumer_) {
      stride_tail_ = span_end_[reclaimed_ & (kStrides - 1)];
      ++reclaimed_;
    }
    const uint64_t free_desc = kStrides - (pi_ - reclaimed_);
    const size_t want = std::min<size_t>(frames_.size(), free_desc);
    auto got = be_.rx_burst(0, std::span(frames_.data(), want));
    for (size_t i = 0; got && i < *got; ++i) {
      const backend::RxFrame& f = frames_[i];
      if (f.len == 0 || f.len > kStride) {
        errors_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      place(f.data, f.len, f.timestamp_ns);
    }
    dev::store_release(&producer_, pi_);
    packets.fetch_add(pi_ - published_, std::memory_order_relaxed);
    published_ = pi_;
  }
  void release_all() { consumer_ = pi_; }

 private:
  bool place(const uint8_t* data, uint32_t len, uint64_t ts) {
    constexpr uint32_t shift = std::countr_zero(kStride);
    const uint32_t need = (len + kStride - 1) >> shift;
    uint64_t pos = stride_head_;
    const uint64_t slot = pos & (kStrides - 1);
    if (slot + need > kStrides) pos += kStrides - slot;
    if (pos + need - stride_tail_ > kStrides || pi_ - reclaimed_ >= kStrides) return false;
    const uint64_t offset = (pos & (kStrides - 1)) << shift;
    std::memcpy(data_.data() + offset, data, len);
    dev::RxDesc& d = desc_[pi_ & (kStrides - 1)];
    d.len = len;
    d.offset = offset;
    const detail::RxMetadata meta = detail::describe_frame(data, len);
    d.flags = meta.flags;
    d.rss_hash = meta.rss_hash;
    d.timestamp_ns = ts;
    d.nstrides = need;
    span_end_[pi_ & (kStrides - 1)] = pos + need;
    stride_head_ = pos + need;
    ++pi_;
    return true;
  }

  backend::Backend& be_;
  std::vector<backend::RxFrame> frames_;
  std::vector<uint8_t> data_;
  std::vector<dev::RxDesc> desc_;
  std::vector<uint64_t> span_end_;
  uint64_t stride_head_ = 0, stride_tail_ = 0, pi_ = 0, published_ = 0, reclaimed_ = 0, consumer_ = 0;
  uint64_t producer_ = 0;
  std::atomic<uint64_t> errors_{0};
};

void run_old(benchmark::State& state, std::unique_ptr<backend::Backend> be) {
  OldLoop loop(*be);
  std::atomic<uint64_t> packets{0};
  for (auto _ : state) {
    loop.round(packets);
    loop.release_all();
  }
  state.SetItemsProcessed(static_cast<int64_t>(packets.load()));
  state.counters["ns_per_packet"] = benchmark::Counter(static_cast<double>(packets.load()),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

std::unique_ptr<backend::Backend> synthetic(int64_t size) {
  return std::move(*backend::open_backend("synthetic:count=0,flows=16,size=" + std::to_string(size)));
}

void BM_Old_Synthetic(benchmark::State& s) { run_old(s, synthetic(s.range(0))); }
void BM_Engine_Synthetic(benchmark::State& s) { run_engine(s, synthetic(s.range(0)), {}); }
void BM_Engine_Synthetic_AllOffloads(benchmark::State& s) { run_engine(s, synthetic(s.range(0)), RxOffloads::all()); }

std::unique_ptr<backend::Backend> prebuilt(int64_t size, bool owned) {
  return std::make_unique<PrebuiltBackend>(static_cast<uint32_t>(size), owned);
}
void BM_Old_Prebuilt(benchmark::State& s) { run_old(s, prebuilt(s.range(0), false)); }
void BM_Engine_Prebuilt_Copy(benchmark::State& s) { run_engine(s, prebuilt(s.range(0), false), {}); }
void BM_Engine_Prebuilt_InPlace(benchmark::State& s) { run_engine(s, prebuilt(s.range(0), true), {}); }
void BM_Engine_Prebuilt_Copy_DeviceRing(benchmark::State& s) {
  run_engine(s, prebuilt(s.range(0), false), {}, RingMem::Gpu);
}
void BM_Engine_Prebuilt_Dma_DeviceRing(benchmark::State& s) {
  run_engine(s, prebuilt(s.range(0), true), {}, RingMem::Gpu);
}

// The prebuilt source gnio_bench feeds (mem:), shaped as gnio_bench shapes
// it: buffers of the frame's size, strides of the same size, so that frames
// lie at the same distances in the source's memory and in the ring.
std::unique_ptr<backend::Backend> mem_source(int64_t size) {
  return std::move(*backend::open_backend("mem:count=0,frames=1024,flows=1024,size=" + std::to_string(size) +
                                          ",ring=8192"));
}
Shape bench_shape(int64_t size) {
  return {16384, std::clamp(std::bit_ceil(static_cast<uint32_t>(size)), 64u, 2048u), 256};
}
void BM_Engine_Mem_InPlace(benchmark::State& s) {
  run_engine(s, mem_source(s.range(0)), {}, RingMem::Host, bench_shape(s.range(0)));
}
void BM_Engine_Mem_Dma_DeviceRing(benchmark::State& s) {
  run_engine(s, mem_source(s.range(0)), {}, RingMem::Gpu, bench_shape(s.range(0)));
}

}  // namespace

BENCHMARK(BM_Engine_Mem_InPlace)->Arg(64)->Arg(1500);
BENCHMARK(BM_Engine_Mem_Dma_DeviceRing)->Arg(64)->Arg(1500);
BENCHMARK(BM_Old_Synthetic)->Arg(64)->Arg(1500);
BENCHMARK(BM_Engine_Synthetic)->Arg(64)->Arg(1500);
BENCHMARK(BM_Engine_Synthetic_AllOffloads)->Arg(64)->Arg(1500);
BENCHMARK(BM_Old_Prebuilt)->Arg(64)->Arg(1500);
BENCHMARK(BM_Engine_Prebuilt_Copy)->Arg(64)->Arg(1500);
BENCHMARK(BM_Engine_Prebuilt_InPlace)->Arg(64)->Arg(1500);
BENCHMARK(BM_Engine_Prebuilt_Copy_DeviceRing)->Arg(64)->Arg(1500);
BENCHMARK(BM_Engine_Prebuilt_Dma_DeviceRing)->Arg(64)->Arg(1500);

BENCHMARK_MAIN();
