#include "engine/rx_engine.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>

#include "core/log.hpp"
#include "engine/rx_metadata.hpp"
#include "engine/stream_ops.hpp"
#include "eth/eth_impl.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/thread.hpp"
#include "gpu/cuda_util.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio::detail {

Result<std::unique_ptr<RxEngine>> RxEngine::start(RxqImpl& q) {
  std::unique_ptr<RxEngine> e(new RxEngine(q));
  GNIO_TRY(e->allocate());
  e->thread_ = std::thread([raw = e.get()] { raw->run(); });
  return e;
}

RxEngine::~RxEngine() { stop(); }

Status RxEngine::allocate() {
  GpuImpl& gpu = *q_.gpu;
  nstrides_ = q_.num_strides;
  ndesc_ = q_.num_strides;
  stride_shift_ = static_cast<uint32_t>(std::countr_zero(q_.stride_size));
  span_end_.assign(ndesc_, 0);
  const bool device_ring = q_.ring_mem == RingMem::Gpu;
  const MemKind ring_kind = device_ring ? MemKind::Gpu : MemKind::CpuGpu;
  const size_t data_bytes = static_cast<size_t>(nstrides_) << stride_shift_;
  const size_t desc_bytes = static_cast<size_t>(ndesc_) * sizeof(dev::RxDesc);

  if (q_.pool) {
    data_ = q_.pool->memory();
  } else {
    auto d = gpu.alloc(data_bytes, ring_kind, 4096);
    if (!d) return d.status();
    data_ = std::move(*d);
  }
  auto desc = gpu.alloc(desc_bytes, ring_kind, 4096);
  if (!desc) return desc.status();
  desc_ = std::move(*desc);
  auto producer = gpu.alloc(128, ring_kind, 128);
  if (!producer) return producer.status();
  producer_ = std::move(*producer);
  auto claim = gpu.alloc(128, MemKind::Gpu, 128);
  if (!claim) return claim.status();
  claim_ = std::move(*claim);
  auto consumer = gpu.alloc(128, MemKind::CpuGpu, 128);
  if (!consumer) return consumer.status();
  consumer_ = std::move(*consumer);

  // A ring in device memory is filled through a pinned mirror of itself,
  // so every copy is one contiguous cudaMemcpyAsync.
  staged_ = data_.kind() != MemKind::CpuGpu;
  if (staged_) {
    auto staging = gpu.alloc(data_bytes + desc_bytes, MemKind::CpuGpu, 4096);
    if (!staging) return staging.status();
    staging_ = std::move(*staging);
    write_data_ = static_cast<uint8_t*>(staging_.host_ptr());
    write_desc_ = reinterpret_cast<dev::RxDesc*>(write_data_ + data_bytes);
  } else {
    write_data_ = static_cast<uint8_t*>(data_.host_ptr());
    write_desc_ = static_cast<dev::RxDesc*>(desc_.host_ptr());
  }

  dev_ring_.data = static_cast<uint8_t*>(data_.device_ptr());
  dev_ring_.desc = static_cast<dev::RxDesc*>(desc_.device_ptr());
  dev_ring_.producer = static_cast<uint64_t*>(producer_.device_ptr());
  dev_ring_.consumer = static_cast<uint64_t*>(consumer_.device_ptr());
  dev_ring_.claim = static_cast<uint64_t*>(claim_.device_ptr());
  dev_ring_.released = static_cast<uint64_t*>(claim_.device_ptr()) + 8;
  dev_ring_.desc_mask = ndesc_ - 1;
  dev_ring_.stride_shift = stride_shift_;

#if GNIO_HAVE_CUDA
  if (!gpu.emulated) {
    GNIO_TRY(gpu.bind_thread());
    GNIO_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating the RX engine stream");
  }
#endif
  return Status::ok();
}

void RxEngine::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
#if GNIO_HAVE_CUDA
  if (stream_) {
    q_.gpu->bind_thread();
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }
#endif
}

bool RxEngine::drained() const noexcept {
  return source_done_.load() && released_atomic_.load() == published_atomic_.load();
}

Status RxEngine::source_status() const {
  std::lock_guard lock(status_mu_);
  return source_status_;
}

void RxEngine::reclaim() {
  uint64_t ci = dev::load_acquire(static_cast<uint64_t*>(consumer_.host_ptr()));
  while (reclaimed_ < ci) {
    stride_tail_ = span_end_[reclaimed_ & (ndesc_ - 1)];
    ++reclaimed_;
  }
  released_atomic_.store(ci);
  q_.counters.released.store(ci, std::memory_order_relaxed);
}

void RxEngine::add_range(std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t off, uint64_t len) {
  if (!ranges.empty() && ranges.back().first + ranges.back().second == off)
    ranges.back().second += len;
  else
    ranges.emplace_back(off, len);
}

bool RxEngine::place(const uint8_t* data, uint32_t len, uint64_t ts) {
  const uint32_t need = (len + (1u << stride_shift_) - 1) >> stride_shift_;
  uint64_t pos = stride_head_;
  const uint64_t slot = pos & (nstrides_ - 1);
  if (slot + need > nstrides_) pos += nstrides_ - slot;  // keep the packet contiguous
  if (pos + need - stride_tail_ > nstrides_ || pi_ - reclaimed_ >= ndesc_) return false;

  const uint64_t start = pos & (nstrides_ - 1);
  const uint64_t offset = start << stride_shift_;
  std::memcpy(write_data_ + offset, data, len);
  // Whole strides: consecutive packets then form one range, one copy.
  if (staged_) add_range(data_ranges_, offset, static_cast<uint64_t>(need) << stride_shift_);

  dev::RxDesc& d = write_desc_[pi_ & (ndesc_ - 1)];
  d.len = len;
  d.offset = offset;
  const RxMetadata meta = describe_frame(data, len);
  d.flags = meta.flags;
  d.rss_hash = meta.rss_hash;
  d.timestamp_ns = ts;
  d.nstrides = need;

  span_end_[pi_ & (ndesc_ - 1)] = pos + need;
  stride_head_ = pos + need;
  ++pi_;
  unpublished_bytes_ += len;
  return true;
}

Status RxEngine::publish() {
  if (pi_ == published_) return Status::ok();
  const uint64_t t0 = dev::host_now_ns();
  uint8_t* ring_data = static_cast<uint8_t*>(data_.device_ptr());
  uint8_t* ring_desc = static_cast<uint8_t*>(desc_.device_ptr());
  const uint8_t* stage_desc = reinterpret_cast<const uint8_t*>(write_desc_);
  // The new descriptors: one range, or two where they wrap the ring.
  desc_ranges_.clear();
  if (staged_) {
    const uint64_t first = published_ & (ndesc_ - 1), count = pi_ - published_;
    const uint64_t head = std::min<uint64_t>(count, ndesc_ - first);
    add_range(desc_ranges_, first * sizeof(dev::RxDesc), head * sizeof(dev::RxDesc));
    if (count > head) add_range(desc_ranges_, 0, (count - head) * sizeof(dev::RxDesc));
  }

  if (staged_ && q_.gpu->emulated) {
    // The emulated copy engine: same ranges, same order, then the index.
    for (auto [off, len] : data_ranges_) std::memcpy(ring_data + off, write_data_ + off, len);
    for (auto [off, len] : desc_ranges_) std::memcpy(ring_desc + off, stage_desc + off, len);
    dev::store_release(static_cast<uint64_t*>(producer_.device_ptr()), pi_);
  } else if (staged_) {
#if GNIO_HAVE_CUDA
    for (auto [off, len] : data_ranges_)
      GNIO_CUDA_TRY(cudaMemcpyAsync(ring_data + off, write_data_ + off, len, cudaMemcpyHostToDevice, stream_),
                    "copying RX packet bytes to the GPU ring");
    for (auto [off, len] : desc_ranges_)
      GNIO_CUDA_TRY(cudaMemcpyAsync(ring_desc + off, stage_desc + off, len, cudaMemcpyHostToDevice, stream_),
                    "copying RX descriptors to the GPU ring");
    GNIO_TRY(stream_write_value64(stream_, producer_.device_ptr(), pi_));
#endif
  } else {
    dev::store_release(static_cast<uint64_t*>(producer_.host_ptr()), pi_);
  }
  if (staged_) q_.counters.copies.fetch_add(data_ranges_.size() + desc_ranges_.size(), std::memory_order_relaxed);
  q_.counters.publish_ns.fetch_add(dev::host_now_ns() - t0, std::memory_order_relaxed);
  q_.counters.packets.fetch_add(pi_ - published_, std::memory_order_relaxed);
  q_.counters.bytes.fetch_add(unpublished_bytes_, std::memory_order_relaxed);
  unpublished_bytes_ = 0;
  data_ranges_.clear();
  published_ = pi_;
  published_atomic_.store(pi_);
  q_.counters.bursts.fetch_add(1, std::memory_order_relaxed);
  return Status::ok();
}

void RxEngine::run() {
  if (Status s = q_.gpu->bind_thread(); !s) {
    std::lock_guard lock(status_mu_);
    source_status_ = s;
    source_done_.store(true);
    return;
  }
  backend::Backend& be = *q_.dev->backend;
  const bool wire = be.caps().drops_when_full;
  std::vector<backend::RxFrame> frames(q_.burst_size);
  uint32_t idle = 0;
  bool backend_done = false;
  auto fail = [&](const Status& s) {
    log::error("rx-engine", s.to_string());
    q_.counters.errors.fetch_add(1);
    std::lock_guard lock(status_mu_);
    source_status_ = s;
  };

  while (!stop_.load(std::memory_order_relaxed)) {
    reclaim();
    while (!pending_.empty() && place(pending_.front().bytes.data(),
                                      static_cast<uint32_t>(pending_.front().bytes.size()), pending_.front().ts))
      pending_.pop_front();
    bool progressed = false;
    const uint64_t free_desc = ndesc_ - (pi_ - reclaimed_);
    if (pending_.empty() && !backend_done && (wire || free_desc > 0)) {
      size_t want = wire ? frames.size() : std::min<size_t>(frames.size(), free_desc);
      Result<size_t> got = be.rx_burst(q_.queue_id, std::span(frames.data(), want));
      if (!got) {
        fail(got.status());
        backend_done = true;
      } else {
        for (size_t i = 0; i < *got; ++i) {
          const backend::RxFrame& f = frames[i];
          if (f.len == 0 || f.len > q_.max_packet_size) {
            q_.counters.errors.fetch_add(1, std::memory_order_relaxed);
            continue;
          }
          // Once one frame waits, the rest of the burst waits behind it:
          // a smaller frame that would still fit must not overtake it.
          if (pending_.empty() && place(f.data, f.len, f.timestamp_ns)) continue;
          if (wire)
            q_.counters.rx_missed.fetch_add(1, std::memory_order_relaxed);
          else
            pending_.push_back({std::vector<uint8_t>(f.data, f.data + f.len), f.timestamp_ns});
        }
        progressed = *got > 0;
        if (*got == 0 && be.at_end(q_.queue_id)) backend_done = true;
      }
    }
    if (Status s = publish(); !s) {
      fail(s);
      source_done_.store(true);
      break;
    }
    source_done_.store(backend_done && pending_.empty());
    if (progressed) {
      idle = 0;
    } else {
      dev::host_backoff(++idle);
    }
  }
}

}  // namespace gnio::detail
