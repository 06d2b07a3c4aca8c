#include "engine/tx_engine.hpp"

#include <chrono>
#include <cstring>
#include <thread>

#include "core/log.hpp"
#include "eth/eth_impl.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/thread.hpp"
#include "gpu/cuda_util.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio::detail {

namespace {
constexpr size_t kTxBurst = 64;
}

Result<std::unique_ptr<TxEngine>> TxEngine::start(TxqImpl& q) {
  std::unique_ptr<TxEngine> e(new TxEngine(q));
  GNIO_TRY(e->allocate());
  e->thread_ = std::thread([raw = e.get()] { raw->run(); });
  return e;
}

TxEngine::~TxEngine() { stop(0); }

Status TxEngine::allocate() {
  GpuImpl& gpu = *q_.gpu;
  const uint32_t depth = q_.depth;
  slot_size_ = (q_.max_packet_size + 63u) & ~63u;
  auto desc = gpu.alloc(static_cast<size_t>(depth) * sizeof(dev::TxDesc), MemKind::CpuGpu, 4096);
  if (!desc) return desc.status();
  desc_ = std::move(*desc);
  auto staging = gpu.alloc(static_cast<size_t>(depth) * slot_size_, MemKind::CpuGpu, 4096);
  if (!staging) return staging.status();
  staging_ = std::move(*staging);
  // producer, completed, errors: one cache line each, pinned host memory.
  auto host_idx = gpu.alloc(3 * 128, MemKind::CpuGpu, 128);
  if (!host_idx) return host_idx.status();
  host_idx_ = std::move(*host_idx);
  auto dev_idx = gpu.alloc(128, MemKind::Gpu, 128);
  if (!dev_idx) return dev_idx.status();
  dev_idx_ = std::move(*dev_idx);
  auto ready = gpu.alloc(static_cast<size_t>(depth) * sizeof(uint64_t), MemKind::Gpu, 4096);
  if (!ready) return ready.status();
  ready_ = std::move(*ready);

  auto* host_base = static_cast<uint8_t*>(host_idx_.host_ptr());
  auto* dev_base = static_cast<uint8_t*>(host_idx_.device_ptr());
  producer_ = reinterpret_cast<uint64_t*>(host_base);
  completed_ = reinterpret_cast<uint64_t*>(host_base + 128);
  errors_ = reinterpret_cast<uint64_t*>(host_base + 256);

  dev_ring_.desc = static_cast<dev::TxDesc*>(desc_.device_ptr());
  dev_ring_.staging = static_cast<uint8_t*>(staging_.device_ptr());
  dev_ring_.producer = reinterpret_cast<uint64_t*>(dev_base);
  dev_ring_.completed = reinterpret_cast<uint64_t*>(dev_base + 128);
  dev_ring_.errors = reinterpret_cast<uint64_t*>(dev_base + 256);
  auto* dev_words = static_cast<uint8_t*>(dev_idx_.device_ptr());
  dev_ring_.reserve = reinterpret_cast<uint64_t*>(dev_words);
  dev_ring_.pushed = reinterpret_cast<uint64_t*>(dev_words + 64);
  dev_ring_.push_lock = reinterpret_cast<uint32_t*>(dev_words + 96);
  dev_ring_.ready = static_cast<uint64_t*>(ready_.device_ptr());
  dev_ring_.desc_mask = depth - 1;
  dev_ring_.slot_size = slot_size_;
#if GNIO_HAVE_CUDA
  if (!gpu.emulated) {
    GNIO_TRY(gpu.bind_thread());
    GNIO_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating the TX engine stream");
  }
#endif
  return Status::ok();
}

uint64_t TxEngine::pushed() const noexcept { return dev::load_acquire(producer_); }
uint64_t TxEngine::completed() const noexcept { return dev::load_acquire(completed_); }

Status TxEngine::stop(uint32_t timeout_ms) {
  Status result;
  if (thread_.joinable()) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (completed() < pushed() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (completed() < pushed())
      result = Status(Errc::Timeout, Layer::Engine,
                      "TX queue " + std::to_string(q_.queue_id) + " stopped with " +
                          std::to_string(pushed() - completed()) + " pushed descriptors not sent after " +
                          std::to_string(timeout_ms) + " ms; raise the timeout or check send times");
    stop_.store(true);
    thread_.join();
  }
#if GNIO_HAVE_CUDA
  if (stream_) {
    q_.gpu->bind_thread();
    cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }
#endif
  return result;
}

const uint8_t* TxEngine::payload(const dev::TxDesc& d, uint64_t index, std::vector<uint8_t>& bounce) {
  if (d.len == 0 || d.len > q_.max_packet_size) return nullptr;
  if (d.flags & dev::TxStaged) {
    if (d.len > slot_size_) return nullptr;
    return static_cast<const uint8_t*>(staging_.host_ptr()) + (index & (q_.depth - 1)) * slot_size_;
  }
  Region r;
  if (!q_.gpu->resolve(d.addr, d.len, r)) return nullptr;
  if (r.host) return r.host + (d.addr - r.dev_base);
#if GNIO_HAVE_CUDA
  // Device memory: the "NIC" reads it with a copy (GPUDirect hardware would DMA it).
  bounce.resize(d.len);
  if (cudaMemcpyAsync(bounce.data(), reinterpret_cast<const void*>(d.addr), d.len, cudaMemcpyDeviceToHost, stream_) !=
          cudaSuccess ||
      cudaStreamSynchronize(stream_) != cudaSuccess)
    return nullptr;
  return bounce.data();
#else
  (void)bounce;
  return nullptr;
#endif
}

void TxEngine::run() {
  if (!q_.gpu->bind_thread()) return;
  backend::Backend& be = *q_.dev->backend;
  const auto* descs = static_cast<const dev::TxDesc*>(desc_.host_ptr());
  std::vector<backend::TxFrame> frames;
  std::vector<std::vector<uint8_t>> bounces(kTxBurst);
  uint64_t ci = 0;
  uint64_t error_count = 0;
  uint32_t idle = 0;

  auto send = [&](size_t upto_index) {
    size_t sent = 0;
    uint32_t spins = 0;
    while (sent < frames.size() && !stop_.load(std::memory_order_relaxed)) {
      Result<size_t> n = be.tx_burst(q_.queue_id, std::span(frames).subspan(sent));
      if (!n) {
        log::error("tx-engine", n.status().to_string());
        error_count += frames.size() - sent;
        q_.counters.errors.fetch_add(frames.size() - sent, std::memory_order_relaxed);
        break;
      }
      for (size_t i = sent; i < sent + *n; ++i) {
        q_.counters.packets.fetch_add(1, std::memory_order_relaxed);
        q_.counters.bytes.fetch_add(frames[i].len, std::memory_order_relaxed);
      }
      sent += *n;
      if (*n == 0) dev::host_backoff(++spins);
    }
    frames.clear();
    dev::store_release(errors_, error_count);
    dev::store_release(completed_, static_cast<uint64_t>(upto_index));
    q_.counters.completions.store(upto_index, std::memory_order_relaxed);
  };

  while (!stop_.load(std::memory_order_relaxed)) {
    const uint64_t p = dev::load_acquire(producer_);
    if (p == ci) {
      dev::host_backoff(++idle);
      continue;
    }
    idle = 0;
    const uint64_t end = std::min<uint64_t>(p, ci + kTxBurst);
    for (uint64_t i = ci; i < end; ++i) {
      const dev::TxDesc d = descs[i & (q_.depth - 1)];
      if ((d.flags & dev::TxWaitOnTime) && d.send_time_ns > dev::host_now_ns()) {
        send(i);  // everything before this packet goes now; this one waits
        q_.counters.waited_on_time.fetch_add(1, std::memory_order_relaxed);
        while (d.send_time_ns > dev::host_now_ns() && !stop_.load(std::memory_order_relaxed)) {
          uint64_t left = d.send_time_ns - dev::host_now_ns();
          if (left > 50000) std::this_thread::sleep_for(std::chrono::nanoseconds(left - 50000));
        }
      }
      const uint8_t* bytes = payload(d, i, bounces[frames.size()]);
      if (!bytes) {
        ++error_count;
        q_.counters.errors.fetch_add(1, std::memory_order_relaxed);
        log::warn("tx-engine", "descriptor " + std::to_string(i) + " of TX queue " + std::to_string(q_.queue_id) +
                                   " has no valid payload (addr " + std::to_string(d.addr) + ", len " +
                                   std::to_string(d.len) + "): not in registered memory or too long; completed with error");
        continue;
      }
      frames.push_back({bytes, d.len, dev::host_now_ns()});
    }
    send(end);
    ci = end;
  }
}

}  // namespace gnio::detail
