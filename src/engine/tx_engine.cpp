// SPDX-License-Identifier: Apache-2.0
#include "engine/tx_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/log.hpp"
#include "engine/queue_state.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/thread.hpp"
#include "gpu/cuda_util.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio::detail {

namespace {
constexpr size_t kTxBurst = 64;
// Bytes between two device payloads that are still copied as one range:
// starting a DMA costs microseconds, a few KiB more of it nanoseconds.
constexpr size_t kMaxCopyGap = 4096;
// An idle engine spins this long after its last work before it backs off,
// so a packet that follows another within it is seen at once.
constexpr uint64_t kBusyPollNs = 50'000;
// Closer than this to a send time the engine spins instead of sleeping.
constexpr uint64_t kSendTimeSpinNs = 50'000;
}  // namespace

std::optional<size_t> TxCopyPlan::add(uint64_t addr, uint32_t len, uint64_t region) {
  if (!copies_.empty()) {
    Copy& last = copies_.back();
    const uint64_t last_end = last.src + last.len;
    if (last.region == region && addr >= last.src && addr <= last_end + max_gap_) {
      // Overlapping or close behind: grow the last copy. If that does not
      // fit, a copy of its own (at least as long as the growth) would not either.
      const uint64_t grow = std::max<uint64_t>(last_end, addr + len) - last_end;
      if (used_ + grow > arena_bytes_) return std::nullopt;
      last.len += grow;
      used_ += grow;
      return last.dst + (addr - last.src);
    }
  }
  if (used_ + len > arena_bytes_) return std::nullopt;
  copies_.push_back({addr, used_, len, region});
  used_ += len;
  return used_ - len;
}

TxEngine::TxEngine(TxqImpl& q) : q_(q), plan_(0, kMaxCopyGap) {}

Result<std::unique_ptr<TxEngine>> TxEngine::start(TxqImpl& q, bool own_thread) {
  std::unique_ptr<TxEngine> e(new TxEngine(q));
  GNIO_TRY(e->allocate());
  if (own_thread) e->thread_ = std::thread([raw = e.get()] { raw->run(); });
  return e;
}

TxEngine::~TxEngine() { stop(0); }

Status TxEngine::allocate() {
  GpuImpl& gpu = *q_.gpu;
  const uint32_t depth = q_.depth;
  slot_size_ = staging_slot_bytes(q_);
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
  // Room for a full burst of slot-sized packets with a stride's gap after
  // each, and always for one packet of the max size: a burst that needs
  // more is split, and a payload that starts a burst always fits (poll()
  // would otherwise stop at it forever).
  const size_t arena_bytes = std::max(kTxBurst * (static_cast<size_t>(slot_size_) + 2048),
                                      (static_cast<size_t>(q_.max_packet_size) + 4095) & ~size_t{4095});
  auto arena = gpu.alloc(arena_bytes, MemKind::CpuGpu, 4096);
  if (!arena) return arena.status();
  arena_ = std::move(*arena);
  plan_ = TxCopyPlan(arena_bytes, kMaxCopyGap);
  frames_.reserve(kTxBurst);
  arena_frames_.reserve(kTxBurst);

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
  // reserve, then the completion count the device last read (Txq::completed_seen).
  dev_ring_.reserve = reinterpret_cast<uint64_t*>(dev_words);
  dev_ring_.pushed = reinterpret_cast<uint64_t*>(dev_words + 64);
  dev_ring_.push_lock = reinterpret_cast<uint32_t*>(dev_words + 96);
  dev_ring_.ready = static_cast<uint64_t*>(ready_.device_ptr());
  dev_ring_.desc_mask = depth - 1;
  dev_ring_.slot_size = slot_size_;
  dev_ring_.max_len = q_.max_packet_size;
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

TxCopyStats TxEngine::copy_stats() const noexcept {
  const TxqCounters& c = q_.counters;
  return {c.copy_payloads.load(std::memory_order_relaxed), c.copies.load(std::memory_order_relaxed),
          c.copy_bytes.load(std::memory_order_relaxed), c.copy_waits.load(std::memory_order_relaxed)};
}

Status TxEngine::stop(uint32_t timeout_ms) {
  Status result;
  const bool polled_here = !thread_.joinable() && !stop_.load();
  if (thread_.joinable() || polled_here) {
    if (polled_here) q_.gpu->bind_thread();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (completed() < pushed() && std::chrono::steady_clock::now() < deadline) {
      if (polled_here && poll() > 0) continue;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (completed() < pushed())
      result = Status(Errc::Timeout, Layer::Engine,
                      "TX queue " + std::to_string(q_.queue_id) + " stopped with " +
                          std::to_string(pushed() - completed()) + " pushed descriptors not sent after " +
                          std::to_string(timeout_ms) + " ms; raise the timeout or check send times");
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    // The poll state is this thread's now. What was pushed and never sent
    // completes as dropped, so a waiter sees it done and the counts add up.
    const uint64_t p = pushed();
    q_.counters.submitted.store(p, std::memory_order_relaxed);
    if (p != ci_) {
      drop(TxDropReason::Stopped, p - ci_);
      ci_ = p;
      dev::store_release(errors_, error_count_);
      dev::store_release(completed_, ci_);
      q_.counters.completions.store(ci_, std::memory_order_relaxed);
    }
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

size_t TxEngine::poll() {
  const uint64_t p = dev::load_acquire(producer_);  // pairs with the release store of Txq::push()
  hold_until_ns_ = 0;
  if (p == ci_) return 0;
  q_.counters.submitted.store(p, std::memory_order_relaxed);
  const auto* descs = static_cast<const dev::TxDesc*>(desc_.host_ptr());
  const auto* staging = static_cast<const uint8_t*>(staging_.host_ptr());
  const uint64_t first = ci_;
  const uint64_t end = std::min<uint64_t>(p, ci_ + kTxBurst);
  frames_.clear();
  arena_frames_.clear();
  plan_.clear();
  Region region;
  bool have_region = false;  // the allocation of the last device address, looked up once per burst
  uint64_t i = first;
  for (; i < end; ++i) {
    const dev::TxDesc d = descs[i & (q_.depth - 1)];
    if ((d.flags & dev::TxWaitOnTime) && d.send_time_ns > dev::host_now_ns()) {
      if (held_index_ != i) {
        held_index_ = i;
        q_.counters.waited_on_time.fetch_add(1, std::memory_order_relaxed);
      }
      hold_until_ns_ = d.send_time_ns;  // everything before it goes now; it waits
      break;
    }
    const uint8_t* bytes = nullptr;
    std::optional<TxDropReason> why;
    if (d.len == 0) {
      why = TxDropReason::Empty;
    } else if ((d.flags & dev::TxRefused) || d.len > q_.max_packet_size) {
      why = TxDropReason::TooLong;
    } else if (d.flags & dev::TxStaged) {
      if (d.len > slot_size_) why = TxDropReason::TooLong;
      bytes = staging + (i & (q_.depth - 1)) * slot_size_;
    } else {
      if (!have_region || d.addr < region.dev_base || d.addr + d.len > region.dev_base + region.size)
        have_region = q_.gpu->resolve(d.addr, d.len, region);
      if (!have_region) {
        why = TxDropReason::NotRegistered;
      } else if (region.kind != MemKind::Gpu) {
        bytes = region.host + (d.addr - region.dev_base);  // mapped: read in place
      } else {
        // The arena holds a payload of the max size: the first of a burst always fits.
        std::optional<size_t> offset = plan_.add(d.addr, d.len, region.dev_base);
        if (!offset) break;  // the arena is full: this one starts the next burst
        arena_frames_.push_back({frames_.size(), *offset});
      }
    }
    if (why) {
      drop(*why, 1);
      // The device saw its refusal as a status; the engine's own finds are news.
      if (!(d.flags & dev::TxRefused)) {
        static log::RateLimit limit;
        limit.write(log::Level::Warn, "tx-engine", q_.queue_id,
                    "descriptor " + std::to_string(i) + " (addr " + std::to_string(d.addr) + ", len " +
                        std::to_string(d.len) + ", max packet size " + std::to_string(q_.max_packet_size) +
                        ") completed unsent as dropped(" + std::string(tx_drop_reason_name(*why)) +
                        "); send registered memory (EthTxq::register_buffer) of 1..max packet size bytes");
      }
      continue;
    }
    backend::TxFrame f{bytes, d.len, 0};
    if (d.flags & dev::TxCapture) {
      // What the receiver knew rides in the descriptor (ring.hpp, TxDesc).
      f.captured = true;
      f.timestamp_ns = d.send_time_ns;
      f.rx_queue = static_cast<uint16_t>(d.addr);
      f.epb_flags = static_cast<uint32_t>(d.reserved);
      f.original_len = std::max(d.len, static_cast<uint32_t>(d.reserved >> 32));
    }
    frames_.push_back(f);
  }
  if (!plan_.empty()) land_copies();
  send();
  ci_ = i;
  dev::store_release(errors_, error_count_);
  dev::store_release(completed_, ci_);
  q_.counters.completions.store(ci_, std::memory_order_relaxed);
  return i - first;
}

void TxEngine::land_copies() {
  auto* arena = static_cast<uint8_t*>(arena_.host_ptr());
  bool landed = true;
  if (q_.gpu->emulated) {
    // The emulated copy engine: device memory is host memory there.
    for (const TxCopyPlan::Copy& c : plan_.copies())
      std::memcpy(arena + c.dst, reinterpret_cast<const void*>(c.src), c.len);
  } else {
#if GNIO_HAVE_CUDA
    // The "NIC" reads device memory with copies (GPUDirect hardware would
    // DMA it): all of the burst's copies queued, then one wait.
    cudaError_t err = cudaSuccess;
    for (const TxCopyPlan::Copy& c : plan_.copies()) {
      err = cudaMemcpyAsync(arena + c.dst, reinterpret_cast<const void*>(c.src), c.len, cudaMemcpyDeviceToHost,
                            stream_);
      if (err != cudaSuccess) break;
    }
    const cudaError_t waited = cudaStreamSynchronize(stream_);
    if (err == cudaSuccess) err = waited;
    if (err != cudaSuccess) {
      landed = false;
      log::error("tx-engine", std::string("copying ") + std::to_string(arena_frames_.size()) +
                                  " device-memory payloads of TX queue " + std::to_string(q_.queue_id) +
                                  " failed: " + cudaGetErrorName(err) +
                                  "; they complete with an error (run `gnio doctor`)");
    }
#else
    landed = false;
#endif
  }
  TxqCounters& c = q_.counters;
  c.copy_payloads.fetch_add(arena_frames_.size(), std::memory_order_relaxed);
  c.copies.fetch_add(plan_.copies().size(), std::memory_order_relaxed);
  c.copy_bytes.fetch_add(plan_.bytes(), std::memory_order_relaxed);
  c.copy_waits.fetch_add(1, std::memory_order_relaxed);
  if (landed) {
    for (const ArenaFrame& a : arena_frames_) frames_[a.frame].data = arena + a.offset;
    return;
  }
  // Drop the frames whose bytes did not arrive; keep the others in order.
  size_t kept = 0, next_failed = 0;
  for (size_t f = 0; f < frames_.size(); ++f) {
    if (next_failed < arena_frames_.size() && arena_frames_[next_failed].frame == f) {
      ++next_failed;
      continue;
    }
    frames_[kept++] = frames_[f];
  }
  frames_.resize(kept);
  drop(TxDropReason::CopyFailed, arena_frames_.size());
}

void TxEngine::send() {
  backend::Backend& be = *q_.dev->backend;
  const uint64_t now = dev::host_now_ns();
  for (backend::TxFrame& f : frames_)
    if (!f.captured) f.timestamp_ns = now;
  size_t sent = 0;
  uint64_t bytes = 0;
  bool failed = false;
  for (uint32_t spins = 0; sent < frames_.size() && !stop_.load(std::memory_order_relaxed);) {
    Result<size_t> n = be.tx_burst(q_.queue_id, std::span(frames_).subspan(sent));
    if (!n) {
      log::error("tx-engine", n.status().to_string());
      drop(TxDropReason::BackendError, frames_.size() - sent);
      failed = true;
      break;
    }
    for (size_t k = sent; k < sent + *n; ++k) bytes += frames_[k].len;
    sent += *n;
    if (*n == 0) dev::host_backoff(++spins);
  }
  // A stop request while the backend held frames back: they complete unsent.
  if (!failed && sent < frames_.size()) drop(TxDropReason::Stopped, frames_.size() - sent);
  q_.counters.packets.fetch_add(sent, std::memory_order_relaxed);
  q_.counters.bytes.fetch_add(bytes, std::memory_order_relaxed);
}

void TxEngine::drop(TxDropReason why, uint64_t n) {
  error_count_ += n;
  q_.counters.dropped[static_cast<size_t>(why)].fetch_add(n, std::memory_order_relaxed);
}

void TxEngine::wait_for_send_time() const {
  while (!stop_.load(std::memory_order_relaxed)) {
    const uint64_t now = dev::host_now_ns();
    if (now >= hold_until_ns_) return;
    const uint64_t left = hold_until_ns_ - now;
    if (left > kSendTimeSpinNs) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(left - kSendTimeSpinNs));
    } else {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
  }
}

void TxEngine::run() {
  if (!q_.gpu->bind_thread()) return;
  uint64_t last_work_ns = dev::host_now_ns();
  uint32_t idle = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (poll() > 0) {
      last_work_ns = dev::host_now_ns();
      idle = 0;
    } else if (hold_until_ns_ != 0) {
      wait_for_send_time();
    } else if (dev::host_now_ns() - last_work_ns < kBusyPollNs) {
      // Right after work the next doorbell is likely close: spin, and now
      // and then yield in case another thread waits for this core.
      if ((++idle & 63) == 0)
        std::this_thread::yield();
      else
        dev::host_backoff(1);
    } else {
      dev::host_backoff(++idle);
    }
  }
}

}  // namespace gnio::detail
