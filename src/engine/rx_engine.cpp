// SPDX-License-Identifier: Apache-2.0
#include "engine/rx_engine.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "core/log.hpp"
#include "engine/engine_thread.hpp"
#include "engine/rx_in_place.hpp"
#include "engine/queue_state.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/thread.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio::detail {

namespace {

// A ring is published once this many descriptors wait, or sooner when the
// backend had nothing more: a publication is one store to pinned memory.
constexpr uint64_t kPublishDescs = 256;

// Frames stay where the backend put them when the kernel can read that
// memory where it is: a ring in host memory without a packet pool. A ring
// in device memory is filled from that memory by the copy engine.
RxDelivery delivery_for(const RxqImpl& q, const std::optional<backend::RxMemory>& frame_memory) {
  if (!frame_memory || q.pool) return RxDelivery::Sink;
  return q.ring_mem == RingMem::Gpu ? RxDelivery::Dma : RxDelivery::InPlace;
}

}  // namespace

RxEngine::RxEngine(RxqImpl& q)
    : q_(q),
      be_(*q.dev->backend),
      drops_when_full_(be_.caps().drops_when_full),
      burst_(q.burst_size),
      frame_memory_(be_.rx_memory(q.queue_id)),
      delivery_(delivery_for(q, frame_memory_)),
      writer_(q.offloads, q.max_packet_size),
      sink_(writer_),
      lent_(be_, q.queue_id),
      dma_(writer_, lent_, drops_when_full_) {}

Result<std::unique_ptr<RxEngine>> RxEngine::start(RxqImpl& q) {
  std::unique_ptr<RxEngine> e(new RxEngine(q));
  GNIO_TRY(e->allocate());
  auto t = thread_for_queue(q);
  if (!t) return t.status();
  e->thread_ = std::move(*t);
  GNIO_TRY(e->thread_->attach(e.get()));
  return e;
}

Result<std::unique_ptr<RxEngine>> RxEngine::create_unattached(RxqImpl& q) {
  std::unique_ptr<RxEngine> e(new RxEngine(q));
  GNIO_TRY(e->allocate());
  return e;
}

RxEngine::~RxEngine() { stop(); }

const GpuImpl& RxEngine::gpu() const noexcept { return *q_.gpu; }

Status RxEngine::allocate() {
  GpuImpl& gpu = *q_.gpu;
  RxRingWriter& w = writer_;
  w.nstrides = q_.num_strides;
  w.ndesc = q_.num_strides;
  w.stride_shift = static_cast<uint32_t>(std::countr_zero(q_.stride_size));
  const bool in_place = delivery_ == RxDelivery::InPlace;
  const MemKind ring_kind = q_.ring_mem == RingMem::Gpu ? MemKind::Gpu : MemKind::CpuGpu;
  const size_t data_bytes = static_cast<size_t>(w.nstrides) << w.stride_shift;
  const size_t desc_bytes = static_cast<size_t>(w.ndesc) * sizeof(dev::RxDesc);

  if (delivery_ != RxDelivery::Sink) GNIO_TRY(map_backend_memory(*frame_memory_));
  if (in_place) {
    data_ = std::move(frame_map_);
  } else if (q_.pool) {
    data_ = q_.pool->memory();
  } else {
    auto d = gpu.alloc(data_bytes, ring_kind, 4096);
    if (!d) return d.status();
    data_ = std::move(*d);
  }
  w.span_end.assign(in_place ? 0 : w.ndesc, 0);
  auto desc = gpu.alloc(desc_bytes, ring_kind, 4096);
  if (!desc) return desc.status();
  desc_ = std::move(*desc);
  auto producer = gpu.alloc(128, MemKind::CpuGpu, 128);
  if (!producer) return producer.status();
  producer_ = std::move(*producer);
  // claim, released, consumer_shadow and tell_lock: a cache line each
  auto claim = gpu.alloc(256, MemKind::Gpu, 128);
  if (!claim) return claim.status();
  claim_ = std::move(*claim);
  auto consumer = gpu.alloc(128, MemKind::CpuGpu, 128);
  if (!consumer) return consumer.status();
  consumer_ = std::move(*consumer);

  // A ring in device memory is filled through a pinned mirror of itself,
  // which its receivers copy from (dev::Rxq::stage_in()); frames copied
  // from backend memory leave only descriptors and their addresses there.
  staged_ = !in_place && (data_.kind() != MemKind::CpuGpu || desc_.kind() != MemKind::CpuGpu);
  if (staged_) {
    const bool dma = delivery_ == RxDelivery::Dma;
    const size_t staged_data = dma ? 0 : data_bytes;
    const size_t src_bytes = dma ? static_cast<size_t>(w.ndesc) * sizeof(const uint8_t*) : 0;
    auto staging = gpu.alloc(staged_data + desc_bytes + src_bytes, MemKind::CpuGpu, 4096);
    if (!staging) return staging.status();
    staging_ = std::move(*staging);
    uint8_t* host = static_cast<uint8_t*>(staging_.host_ptr());
    uint8_t* device = static_cast<uint8_t*>(staging_.device_ptr());
    w.data = dma ? nullptr : host;
    w.desc = reinterpret_cast<dev::RxDesc*>(host + staged_data);
    dev_ring_.stage_data = dma ? nullptr : device;
    dev_ring_.stage_desc = reinterpret_cast<const dev::RxDesc*>(device + staged_data);
    if (dma) {
      w.src = reinterpret_cast<const uint8_t**>(host + staged_data + desc_bytes);
      dev_ring_.stage_src = reinterpret_cast<const uint8_t* const*>(device + staged_data + desc_bytes);
      dma_.map(frame_memory_->base, static_cast<const uint8_t*>(frame_map_.device_ptr()));
    }
  } else {
    w.data = in_place ? nullptr : static_cast<uint8_t*>(data_.host_ptr());
    w.desc = static_cast<dev::RxDesc*>(desc_.host_ptr());
  }

  dev_ring_.data = static_cast<uint8_t*>(data_.device_ptr());
  dev_ring_.desc = static_cast<dev::RxDesc*>(desc_.device_ptr());
  dev_ring_.producer = static_cast<uint64_t*>(producer_.device_ptr());
  dev_ring_.consumer = static_cast<uint64_t*>(consumer_.device_ptr());
  dev_ring_.claim = static_cast<uint64_t*>(claim_.device_ptr());
  dev_ring_.released = static_cast<uint64_t*>(claim_.device_ptr()) + 8;
  dev_ring_.consumer_shadow = static_cast<uint64_t*>(claim_.device_ptr()) + 16;
  dev_ring_.tell_lock = static_cast<uint64_t*>(claim_.device_ptr()) + 24;
  dev_ring_.desc_mask = w.ndesc - 1;
  dev_ring_.stride_shift = w.stride_shift;
  // An eighth of the frames the ring holds at the largest frame size, and
  // of the frames the backend lends: a kernel that told the engine later
  // would leave it waiting for buffers with packets to deliver.
  const uint32_t strides_per_frame =
      std::max<uint32_t>(1, (w.max_frame + q_.stride_size - 1) >> w.stride_shift);
  uint32_t capacity = in_place ? w.ndesc : std::min(w.ndesc, w.nstrides / strides_per_frame);
  if (frame_memory_ && frame_memory_->frames != 0) capacity = std::min(capacity, frame_memory_->frames);
  dev_ring_.release_step = std::max<uint32_t>(1, capacity / 8);

  return Status::ok();
}

Status RxEngine::map_backend_memory(const backend::RxMemory& m) {
  if (!m.base || m.bytes == 0)
    return {Errc::InvalidValue, Layer::Backend,
            be_.caps().driver + ": RX queue " + std::to_string(q_.queue_id) +
                " names backend frame memory of " + std::to_string(m.bytes) +
                " bytes with no base; a backend without its own memory returns no rx_memory()"};
  // Registered memory is pinned: a cudaMemcpyAsync from it is a DMA.
  auto mapped = q_.gpu->register_host(m.base, m.bytes);
  if (!mapped) return mapped.status();
  frame_map_ = std::move(*mapped);
  lent_.init(m, std::bit_ceil(static_cast<size_t>(writer_.ndesc) + burst_));
  return Status::ok();
}

void RxEngine::stop() {
  if (thread_) {
    thread_->detach(this);
    thread_.reset();
  }
}

bool RxEngine::drained() const noexcept {
  // Pairs with the stores of poll() and reclaim() (sequentially consistent).
  return source_done_.load() && released_atomic_.load() == published_atomic_.load();
}

Status RxEngine::source_status() const {
  std::lock_guard lock(status_mu_);
  return source_status_;
}

void RxEngine::stop_source() {
  // Pairs with the load of source_stop_ at the start of poll().
  source_stop_.store(true);
  // The turn in progress may have read the flag unset: wait for it to end.
  // Pairs with the store of turns_ at the end of poll().
  const uint64_t seen = turns_.load();
  for (uint32_t spins = 0; thread_ && turns_.load() == seen; ++spins) dev::host_backoff(spins);
}

void RxEngine::count_turn(bool work, uint64_t turn_ns, uint64_t wait_ns) {
  // One writer (this engine's thread): plain adds, no locked instruction.
  auto add = [](std::atomic<uint64_t>& a, uint64_t v) {
    a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  };
  RxqCounters& c = q_.counters;
  add(work ? c.work_polls : c.idle_polls, 1);
  add(work ? c.busy_ns : c.idle_ns, turn_ns);
  if (wait_ns) add(c.idle_ns, wait_ns);
}

void RxEngine::fail(const Status& s) {
  // The caller reports the error (source_status()); here only for tracing.
  log::write(log::Level::Debug, "rx-engine", q_.queue_id, "the source stopped: " + s.to_string());
  q_.counters.errors.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(status_mu_);
  source_status_ = s;
}

void RxEngine::reclaim() {
  // Pairs with the release store of `consumer` in Rxq::tell_engine()
  // (include/gnio/dev/rxq.hpp): the kernel's reads of the packets it
  // released happen before the engine reuses their strides or hands their
  // frames back.
  const uint64_t ci = dev::load_acquire(static_cast<uint64_t*>(consumer_.host_ptr()));
  RxRingWriter& w = writer_;
  if (ci == w.reclaimed) return;
  // Descriptors are released in order: the last one tells where the free
  // strides end.
  if (delivery_ != RxDelivery::InPlace) w.stride_tail = w.span_end[(ci - 1) & (w.ndesc - 1)];
  w.reclaimed = ci;
  if (delivery_ != RxDelivery::Sink) lent_.release(ci);
  released_atomic_.store(ci);  // pairs with the load in drained()
  q_.counters.released.store(ci, std::memory_order_relaxed);
}

Result<size_t> RxEngine::pull(uint32_t room) {
  switch (delivery_) {
    case RxDelivery::Sink:
      return sink_.pull(be_, q_.queue_id, room);
    case RxDelivery::InPlace:
      return pull_in_place(writer_, lent_, room);
    case RxDelivery::Dma:
      break;
  }
  return dma_.pull(room);
}

void RxEngine::count_lost() {
  const DropCounts lost = be_.take_rx_drops(q_.queue_id);
  for (size_t r = 0; r < kDropReasons; ++r) {
    writer_.new_dropped[r] += lost[r];
    writer_.new_offered += lost[r];
  }
}

bool RxEngine::holds_frames() const {
  return be_.rx_held(q_.queue_id) || (delivery_ == RxDelivery::Dma && !lent_.all_placed());
}

Status RxEngine::publish() {
  RxRingWriter& w = writer_;
  RxqCounters& c = q_.counters;
  // Offers are counted before the deliveries and drops they cover, which
  // are released after them: EthRxq::stats() (src/eth/rxq.cpp) loads them
  // in the other order, so a reader never sees more delivered and dropped
  // than offered. Pairs with those loads.
  if (w.new_offered) c.offered.fetch_add(w.new_offered, std::memory_order_release);
  w.new_offered = 0;
  if (w.pi != w.published) {
    const uint64_t t0 = dev::host_now_ns();
    // The producer index is stored after the bytes and descriptors it
    // covers (or their staged copies), with release order: it pairs with
    // the acquire of `producer` in Rxq::receive_one() and Rxq::published()
    // (include/gnio/dev/rxq.hpp).
    dev::store_release(static_cast<uint64_t*>(producer_.host_ptr()), w.pi);
    c.publish_ns.fetch_add(dev::host_now_ns() - t0, std::memory_order_relaxed);
    c.packets.fetch_add(w.pi - w.published, std::memory_order_release);  // pairs with EthRxq::stats()
    c.bytes.fetch_add(w.new_bytes, std::memory_order_relaxed);
    c.bursts.fetch_add(1, std::memory_order_relaxed);
    w.new_bytes = 0;
    w.published = w.pi;
    published_atomic_.store(w.pi);  // pairs with the load in drained()
  }
  for (size_t r = 0; r < kDropReasons; ++r) {
    // Pairs with EthRxq::stats(), as `packets` does.
    if (w.new_dropped[r]) c.dropped[r].fetch_add(w.new_dropped[r], std::memory_order_release);
    w.new_dropped[r] = 0;
  }
  if (w.new_truncated) c.truncated.fetch_add(w.new_truncated, std::memory_order_relaxed);
  w.new_truncated = 0;
  return Status::ok();
}

bool RxEngine::batch_full() const { return writer_.pi - writer_.published >= kPublishDescs; }

bool RxEngine::poll() {
  // Pairs with the store in stop_source().
  if (!backend_done_ && source_stop_.load()) {
    backend_done_ = true;
    if (delivery_ == RxDelivery::Dma) lent_.give_back_unplaced(writer_.pi, writer_.reclaimed);
  }
  const uint64_t reclaimed_before = writer_.reclaimed;
  reclaim();
  bool moved = writer_.reclaimed != reclaimed_before;
  const uint16_t qid = q_.queue_id;
  // Pull until the batch is worth publishing, the ring is full, or the
  // backend had less than asked (then publish at once: latency stays low
  // when traffic is light).
  while (!backend_done_) {
    const uint64_t free_desc = writer_.ndesc - (writer_.pi - writer_.reclaimed);
    const uint32_t room = static_cast<uint32_t>(drops_when_full_ ? burst_ : std::min<uint64_t>(burst_, free_desc));
    if (room == 0) break;
    Result<size_t> got = pull(room);
    count_lost();
    if (!got) {
      fail(got.status());
      backend_done_ = true;
      break;
    }
    moved |= *got > 0;
    if (*got == 0 && be_.at_end(qid) && !holds_frames()) backend_done_ = true;
    if (*got < room) break;
    if (batch_full()) break;
  }
  if (Status s = publish(); !s) {
    fail(s);
    backend_done_ = true;
  }
  source_done_.store(backend_done_);  // pairs with the load in drained()
  turns_.store(turns_.load(std::memory_order_relaxed) + 1);  // pairs with the loads in stop_source()
  return moved;
}

}  // namespace gnio::detail
