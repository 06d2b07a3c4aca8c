// SPDX-License-Identifier: Apache-2.0
// The TX queue: its setters, its lifecycle (start, stop, destroy) with the
// engine that drains a GPU ring, its counters, and host_send(), the path
// without a GPU.
#include <span>
#include <utility>
#include <vector>

#include "core/log.hpp"
#include "engine/queue_state.hpp"
#include "engine/tx_engine.hpp"
#include "eth/queue_rules.hpp"
#include "gnio/dev/thread.hpp"
#include "gnio/eth.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio {

namespace detail {
TxqImpl::~TxqImpl() {
  if (engine) engine->stop(0);
  if (gpu && state == QueueState::Started) gpu->live_queues.fetch_sub(1);
}
}  // namespace detail

EthTxq& EthTxq::operator=(EthTxq&& o) noexcept {
  if (this != &o) {
    destroy();
    impl_ = std::move(o.impl_);
  }
  return *this;
}

EthTxq::~EthTxq() {
  Status s = destroy();
  if (!s) log::error("eth", "EthTxq destroyed out of order: " + s.to_string() +
                                "; the ring stays alive until the GPU handle is gone");
}

Status EthTxq::set_depth(uint32_t descriptors) {
  return eth::configure(impl_, "set_depth", [&](detail::TxqImpl& q) {
    GNIO_TRY(eth::check_pow2("TX depth", descriptors, 2, q.dev->backend->caps().max_ring_entries));
    return eth::assign(q.depth, descriptors);
  });
}

Status EthTxq::set_max_packet_size(uint32_t bytes) {
  return eth::configure(impl_, "set_max_packet_size", [&](detail::TxqImpl& q) {
    GNIO_TRY(eth::check_range("max packet size", bytes, eth::kMinFrame, q.dev->backend->caps().max_packet_size));
    return eth::assign(q.max_packet_size, bytes);
  });
}

Status EthTxq::set_staging_slot_size(uint32_t bytes) {
  return eth::configure(impl_, "set_staging_slot_size", [&](detail::TxqImpl& q) {
    GNIO_TRY(eth::check_range("TX staging slot size", bytes, 64, q.dev->backend->caps().max_packet_size));
    return eth::assign(q.staging_slot_size, bytes);
  });
}

Status EthTxq::set_type(TxqType type) {
  return eth::configure(impl_, "set_type", [&](detail::TxqImpl& q) {
    if (type == TxqType::WaitOnTime && !q.dev->backend->caps().tx_wait_on_time)
      return Status(Errc::NotSupported, Layer::Eth,
                    "device \"" + q.dev->spec + "\" does not support wait-on-time TX; use TxqType::Regular",
                    Axis::Nic);
    return eth::assign(q.type, type);
  });
}

Status EthTxq::set_gpu(const Gpu& gpu) {
  return eth::configure(impl_, "set_gpu", [&](detail::TxqImpl& q) {
    GNIO_TRY(eth::check_gpu_open(gpu));
    return eth::assign(q.gpu, gpu.impl());
  });
}

Status EthTxq::register_buffer(const BufArr& pool) {
  return eth::configure(impl_, "register_buffer", [&](detail::TxqImpl& q) {
    if (!q.gpu) return Status(Errc::BadState, Layer::Eth, "register_buffer before set_gpu(): set the GPU first");
    detail::Region r;
    if (!q.gpu->resolve(reinterpret_cast<uint64_t>(pool.memory().device_ptr()), pool.count() * pool.elem_size(), r))
      return Status(Errc::InvalidValue, Layer::Eth,
                    "TX buffer of " + eth::u(pool.count()) + " x " + eth::u(pool.elem_size()) +
                        " bytes was not allocated on this queue's GPU (" + q.gpu->bus_id + ")");
    if (pool.elem_size() < q.max_packet_size)
      return Status(Errc::InvalidValue, Layer::Eth,
                    "TX buffer element size " + eth::u(pool.elem_size()) +
                        " is smaller than the queue's max packet size " + eth::u(q.max_packet_size) +
                        "; call set_max_packet_size(" + eth::u(pool.elem_size()) + ") first, or use larger elements");
    return Status::ok();
  });
}

Status EthTxq::start() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "start on a destroyed TX queue"};
  std::lock_guard lock(impl_->mu);
  if (!eth::configurable(impl_->state)) return eth::bad_state("start", impl_->state);
  if (impl_->gpu) {
    if (impl_->gpu->closed.load()) return {Errc::BadState, Layer::Eth, "start with a GPU context that was closed"};
    auto e = detail::TxEngine::start(*impl_);
    if (!e) return e.status();
    impl_->engine = std::move(*e);
    impl_->gpu->live_queues.fetch_add(1);
  }
  impl_->state = QueueState::Started;
  return Status::ok();
}

Status EthTxq::stop(uint32_t timeout_ms) {
  if (!impl_) return {Errc::BadState, Layer::Eth, "stop on a destroyed TX queue"};
  std::lock_guard lock(impl_->mu);
  if (impl_->state != QueueState::Started) return eth::bad_state("stop", impl_->state);
  if (impl_->gpu_handles.load() > 0)
    return {Errc::BadState, Layer::Eth,
            "stopping TX queue " + eth::u(impl_->queue_id) + " while " + eth::u(impl_->gpu_handles.load()) +
                " GPU handle(s) expose it; destroy the GpuTxq first"};
  Status result;
  if (impl_->engine) {
    result = impl_->engine->stop(timeout_ms);
    impl_->gpu->live_queues.fetch_sub(1);
  }
  impl_->state = QueueState::Stopped;
  Status f = impl_->dev->backend->flush();
  return result.is_ok() ? f : result;
}

Status EthTxq::destroy() {
  if (!impl_) return Status::ok();
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->gpu_handles.load() > 0)
      return {Errc::BadState, Layer::Eth,
              "destroying TX queue " + eth::u(impl_->queue_id) + " while " + eth::u(impl_->gpu_handles.load()) +
                  " GPU handle(s) expose it; destroy the GpuTxq first"};
  }
  Status s;
  if (impl_->state == QueueState::Started) s = stop();
  impl_->state = QueueState::Destroyed;
  impl_.reset();
  return s;
}

QueueState EthTxq::state() const noexcept { return impl_ ? impl_->state : QueueState::Destroyed; }

TxqStats EthTxq::stats() const noexcept {
  if (!impl_) return {};
  const auto& c = impl_->counters;
  TxqStats s;
#define GNIO_TXQ_COUNTER(field, metric, unit, help) s.field = c.field.load();
  GNIO_TXQ_COUNTERS(GNIO_TXQ_COUNTER)
#undef GNIO_TXQ_COUNTER
  for (size_t r = 0; r < kTxDropReasons; ++r) {
    s.dropped[r] = c.dropped[r].load();
    s.errors += s.dropped[r];
  }
  return s;
}

uint32_t EthTxq::depth() const noexcept { return impl_ ? impl_->depth : 0; }
uint32_t EthTxq::max_packet_size() const noexcept { return impl_ ? impl_->max_packet_size : 0; }
uint32_t EthTxq::staging_slot_size() const noexcept { return impl_ ? detail::staging_slot_bytes(*impl_) : 0; }
TxqType EthTxq::type() const noexcept { return impl_ ? impl_->type : TxqType::Regular; }

Result<size_t> EthTxq::host_send(std::span<const std::span<const uint8_t>> frames) {
  if (!impl_) return Status(Errc::BadState, Layer::Eth, "host_send on a destroyed TX queue");
  if (impl_->state != QueueState::Started) return eth::bad_state("host_send", impl_->state);
  if (impl_->gpu)
    return Status(Errc::BadState, Layer::Eth,
                  "host_send on TX queue " + eth::u(impl_->queue_id) +
                      " whose datapath is on a GPU; send from the kernel, or start it without set_gpu()");
  std::vector<backend::TxFrame> tx;
  tx.reserve(frames.size());
  const uint64_t now = dev::host_now_ns();
  for (const auto& f : frames) {
    if (f.size() > impl_->max_packet_size)
      return Status(Errc::InvalidValue, Layer::Eth,
                    "frame of " + eth::u(f.size()) + " bytes exceeds the queue's max packet size " +
                        eth::u(impl_->max_packet_size));
    tx.push_back({f.data(), static_cast<uint32_t>(f.size()), now});
  }
  auto n = impl_->dev->backend->tx_burst(impl_->queue_id, tx);
  if (!n) return n.status();
  for (size_t i = 0; i < *n; ++i) {
    impl_->counters.packets.fetch_add(1);
    impl_->counters.bytes.fetch_add(tx[i].len);
  }
  return *n;
}

Status EthTxq::flush() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "flush on a destroyed TX queue"};
  return impl_->dev->backend->flush();
}

}  // namespace gnio
