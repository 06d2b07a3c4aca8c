// SPDX-License-Identifier: Apache-2.0
// The RX queue: its setters, its lifecycle (start, stop, destroy) with the
// engine that feeds a GPU ring, its counters, and host_receive(), the path
// without a GPU.
#include <sched.h>

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "engine/queue_state.hpp"
#include "engine/rx_engine.hpp"
#include "eth/queue_rules.hpp"
#include "gnio/eth.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio {

namespace {

// What the queue delivers at most when nobody set it: what the backend can
// deliver, within half the ring (a packet must fit twice).
uint32_t default_max_packet_size(const detail::RxqImpl& q) {
  const uint64_t half_ring = static_cast<uint64_t>(q.num_strides) * q.stride_size / 2;
  return static_cast<uint32_t>(std::min<uint64_t>(q.dev->backend->caps().max_packet_size, half_ring));
}

}  // namespace

namespace detail {
RxqImpl::~RxqImpl() {
  if (engine) engine->stop();
  if (gpu && state == QueueState::Started) gpu->live_queues.fetch_sub(1);
}
}  // namespace detail

EthRxq& EthRxq::operator=(EthRxq&& o) noexcept {
  if (this != &o) {
    destroy();
    impl_ = std::move(o.impl_);
  }
  return *this;
}

EthRxq::~EthRxq() {
  Status s = destroy();
  if (!s) log::error("eth", "EthRxq destroyed out of order: " + s.to_string() +
                                "; the ring stays alive until the GPU handle is gone");
}

Status EthRxq::set_num_strides(uint32_t n) {
  return eth::configure(impl_, "set_num_strides", [&](detail::RxqImpl& q) {
    GNIO_TRY(eth::check_pow2("number of strides", n, 2, q.dev->backend->caps().max_ring_entries));
    q.num_strides = n;
    return Status::ok();
  });
}

Status EthRxq::set_stride_size(uint32_t bytes) {
  return eth::configure(impl_, "set_stride_size", [&](detail::RxqImpl& q) {
    const EthCaps& c = q.dev->backend->caps();
    GNIO_TRY(eth::check_pow2("stride size", bytes, c.min_stride, c.max_stride));
    q.stride_size = bytes;
    return Status::ok();
  });
}

Status EthRxq::set_max_packet_size(uint32_t bytes) {
  return eth::configure(impl_, "set_max_packet_size", [&](detail::RxqImpl& q) {
    GNIO_TRY(eth::check_range("max packet size", bytes, eth::kMinFrame, q.dev->backend->caps().max_packet_size));
    q.max_packet_size = bytes;
    return Status::ok();
  });
}

Status EthRxq::set_burst_size(uint32_t packets) {
  return eth::configure(impl_, "set_burst_size", [&](detail::RxqImpl& q) {
    GNIO_TRY(eth::check_range("burst size", packets, 1, q.dev->backend->caps().max_burst));
    q.burst_size = packets;
    return Status::ok();
  });
}

Status EthRxq::set_ring_mem(RingMem mem) {
  return eth::configure(impl_, "set_ring_mem", [&](detail::RxqImpl& q) { return eth::assign(q.ring_mem, mem); });
}

Status EthRxq::set_rx_offloads(RxOffloads offloads) {
  return eth::configure(impl_, "set_rx_offloads",
                        [&](detail::RxqImpl& q) { return eth::assign(q.offloads, offloads); });
}

Status EthRxq::set_engine_thread(uint16_t index) {
  return eth::configure(impl_, "set_engine_thread",
                        [&](detail::RxqImpl& q) { return eth::assign(q.engine_thread, index); });
}

Status EthRxq::set_engine_core(int core) {
  return eth::configure(impl_, "set_engine_core", [&](detail::RxqImpl& q) {
    if (core < -1 || core >= CPU_SETSIZE)
      return Status(Errc::InvalidValue, Layer::Eth,
                    "engine core " + std::to_string(core) + " is not a CPU number; use 0.." + eth::u(CPU_SETSIZE - 1) +
                        ", or -1 for not pinned");
    return eth::assign(q.engine_core, core);
  });
}

Status EthRxq::set_busy_poll(bool busy) {
  return eth::configure(impl_, "set_busy_poll",
                        [&](detail::RxqImpl& q) { return eth::assign(q.busy_poll, busy ? 1 : 0); });
}

Status EthRxq::set_gpu(const Gpu& gpu) {
  return eth::configure(impl_, "set_gpu", [&](detail::RxqImpl& q) {
    GNIO_TRY(eth::check_gpu_open(gpu));
    return eth::assign(q.gpu, gpu.impl());
  });
}

Status EthRxq::set_packet_buffer(const BufArr& pool) {
  return eth::configure(impl_, "set_packet_buffer", [&](detail::RxqImpl& q) { return eth::assign(q.pool, pool); });
}

Status EthRxq::start() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "start on a destroyed RX queue"};
  std::lock_guard lock(impl_->mu);
  if (!eth::configurable(impl_->state)) return eth::bad_state("start", impl_->state);
  auto& q = *impl_;
  if (q.max_packet_size == 0) q.max_packet_size = default_max_packet_size(q);
  if (q.max_packet_size > q.num_strides * static_cast<uint64_t>(q.stride_size) / 2)
    return {Errc::InvalidValue, Layer::Eth,
            "max packet size " + eth::u(q.max_packet_size) + " does not fit twice in a ring of " +
                eth::u(q.num_strides) + " strides of " + eth::u(q.stride_size) + " bytes; add strides"};
  if (q.pool) {
    if (q.pool->count() != q.num_strides || q.pool->elem_size() != q.stride_size)
      return {Errc::InvalidValue, Layer::Eth,
              "packet buffer of " + eth::u(q.pool->count()) + " x " + eth::u(q.pool->elem_size()) +
                  " bytes does not match the ring's " + eth::u(q.num_strides) + " strides x " +
                  eth::u(q.stride_size) + " bytes; create it with those values"};
    if (!q.gpu) return {Errc::BadState, Layer::Eth, "a packet buffer was registered but no GPU: call set_gpu()"};
    if (q.pool->memory().device_ptr() == nullptr)
      return {Errc::InvalidValue, Layer::Eth, "the registered packet buffer holds no memory"};
  }
  if (q.gpu) {
    if (q.gpu->closed.load()) return {Errc::BadState, Layer::Eth, "start with a GPU context that was closed"};
    auto e = detail::RxEngine::start(q);
    if (!e) return e.status();
    q.engine = std::move(*e);
    q.gpu->live_queues.fetch_add(1);
  }
  q.state = QueueState::Started;
  return Status::ok();
}

Status EthRxq::stop_source() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "stop_source on a destroyed RX queue"};
  std::lock_guard lock(impl_->mu);
  if (impl_->state != QueueState::Started) return eth::bad_state("stop_source", impl_->state);
  if (impl_->engine)
    impl_->engine->stop_source();
  else
    impl_->host_source_stopped.store(true);  // host_receive() is the caller's own: nothing is in flight
  return Status::ok();
}

Status EthRxq::stop() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "stop on a destroyed RX queue"};
  std::lock_guard lock(impl_->mu);
  if (impl_->state != QueueState::Started) return eth::bad_state("stop", impl_->state);
  if (impl_->gpu_handles.load() > 0)
    return {Errc::BadState, Layer::Eth,
            "stopping RX queue " + eth::u(impl_->queue_id) + " while " + eth::u(impl_->gpu_handles.load()) +
                " GPU handle(s) expose it; destroy the GpuRxq first"};
  if (impl_->engine) {
    impl_->engine->stop();
    impl_->gpu->live_queues.fetch_sub(1);
  }
  impl_->state = QueueState::Stopped;
  return Status::ok();
}

Status EthRxq::destroy() {
  if (!impl_) return Status::ok();
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->gpu_handles.load() > 0)
      return {Errc::BadState, Layer::Eth,
              "destroying RX queue " + eth::u(impl_->queue_id) + " while " + eth::u(impl_->gpu_handles.load()) +
                  " GPU handle(s) expose it; destroy the GpuRxq first"};
  }
  if (impl_->state == QueueState::Started) GNIO_TRY(stop());
  impl_->state = QueueState::Destroyed;
  impl_.reset();
  return Status::ok();
}

QueueState EthRxq::state() const noexcept { return impl_ ? impl_->state : QueueState::Destroyed; }

RxqStats EthRxq::stats() const noexcept {
  if (!impl_) return {};
  const auto& c = impl_->counters;
  RxqStats s;
  // Deliveries and drops before offers: a reader never sees more delivered
  // and dropped than offered (GNIO_RXQ_COUNTERS lists packets first).
  for (size_t r = 0; r < kDropReasons; ++r) s.dropped[r] = c.dropped[r].load();
#define GNIO_RXQ_COUNTER(field, metric, unit, help) s.field = c.field.load();
  GNIO_RXQ_COUNTERS(GNIO_RXQ_COUNTER)
#undef GNIO_RXQ_COUNTER
  s.rx_missed = s.dropped[static_cast<size_t>(DropReason::RingFull)];
  return s;
}

uint32_t EthRxq::num_strides() const noexcept { return impl_ ? impl_->num_strides : 0; }
uint32_t EthRxq::stride_size() const noexcept { return impl_ ? impl_->stride_size : 0; }
uint32_t EthRxq::max_packet_size() const noexcept {
  if (!impl_) return 0;
  return impl_->max_packet_size ? impl_->max_packet_size : default_max_packet_size(*impl_);
}
RxOffloads EthRxq::rx_offloads() const noexcept { return impl_ ? impl_->offloads : RxOffloads{}; }
uint32_t EthRxq::burst_size() const noexcept { return impl_ ? impl_->burst_size : 0; }
RingMem EthRxq::ring_mem() const noexcept { return impl_ ? impl_->ring_mem : RingMem::Gpu; }

Result<std::vector<HostFrame>> EthRxq::host_receive(size_t max) {
  if (!impl_) return Status(Errc::BadState, Layer::Eth, "host_receive on a destroyed RX queue");
  if (impl_->state != QueueState::Started) return eth::bad_state("host_receive", impl_->state);
  if (impl_->gpu)
    return Status(Errc::BadState, Layer::Eth,
                  "host_receive on RX queue " + eth::u(impl_->queue_id) +
                      " whose datapath is on a GPU; receive in the kernel, or start it without set_gpu()");
  auto& q = *impl_;
  if (q.host_source_stopped.load()) return std::vector<HostFrame>{};
  backend::Backend& be = *q.dev->backend;
  if (q.max_packet_size == 0) q.max_packet_size = default_max_packet_size(q);
  std::vector<backend::RxFrame> frames(std::min<size_t>(max, q.burst_size));
  auto n = be.rx_burst(q.queue_id, frames);
  if (!n) return n.status();
  // The same rules as the NIC engine: empty frames are dropped, longer ones cut.
  std::vector<HostFrame> out;
  out.reserve(*n);
  uint64_t bytes = 0, truncated = 0, empty = 0;
  for (size_t i = 0; i < *n; ++i) {
    const backend::RxFrame& f = frames[i];
    if (f.len == 0) {
      ++empty;
      continue;
    }
    const uint32_t len = std::min(f.len, q.max_packet_size);
    truncated += len < f.len;
    out.push_back({std::vector<uint8_t>(f.data, f.data + len), f.timestamp_ns});
    bytes += len;
  }
  if (*n > 0 && be.rx_memory(q.queue_id))
    be.rx_release(q.queue_id, std::span<const backend::RxFrame>(frames.data(), *n));
  const DropCounts lost = be.take_rx_drops(q.queue_id);
  uint64_t lost_total = 0;
  for (size_t r = 0; r < kDropReasons; ++r) lost_total += lost[r];
  // Offers first (see stats(): a reader never sees more delivered and
  // dropped than offered).
  q.counters.offered.fetch_add(*n + lost_total);
  for (size_t r = 0; r < kDropReasons; ++r) q.counters.dropped[r].fetch_add(lost[r]);
  q.counters.dropped[static_cast<size_t>(DropReason::Empty)].fetch_add(empty);
  q.counters.packets.fetch_add(out.size());
  q.counters.bytes.fetch_add(bytes);
  q.counters.truncated.fetch_add(truncated);
  if (*n == 0 && impl_->dev->backend->at_end(impl_->queue_id)) impl_->host_path_end.store(true);
  return out;
}

bool EthRxq::at_end() const noexcept {
  if (!impl_) return true;
  if (impl_->engine) return impl_->engine->drained();
  return impl_->host_path_end.load() || impl_->host_source_stopped.load();
}

Status EthRxq::source_status() const {
  if (!impl_ || !impl_->engine) return Status::ok();
  return impl_->engine->source_status();
}

}  // namespace gnio
