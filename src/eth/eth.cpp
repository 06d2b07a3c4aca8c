// SPDX-License-Identifier: Apache-2.0
#include "gnio/eth.hpp"

#include <sched.h>

#include <bit>
#include <charconv>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/log.hpp"
#include "engine/rx_engine.hpp"
#include "engine/tx_engine.hpp"
#include "engine/queue_state.hpp"
#include "gnio/dev/thread.hpp"
#include "gpu/gpu_impl.hpp"

namespace gnio {

namespace {

std::string u(uint64_t v) { return std::to_string(v); }

Status bad_state(const char* what, QueueState s) {
  return {Errc::BadState, Layer::Eth,
          std::string(what) + " in state " + std::string(queue_state_name(s)) +
              "; configure queues before start(), and stop/destroy GPU handles first"};
}

Status check_pow2(const char* what, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v < lo || v > hi || (v & (v - 1)) != 0)
    return {Errc::InvalidValue, Layer::Eth,
            std::string(what) + " " + u(v) + " is outside the device's limit: a power of two in [" + u(lo) + ", " +
                u(hi) + "]"};
  return Status::ok();
}

Status check_range(const char* what, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v < lo || v > hi)
    return {Errc::InvalidValue, Layer::Eth,
            std::string(what) + " " + u(v) + " is outside the device's limit [" + u(lo) + ", " + u(hi) + "]"};
  return Status::ok();
}

// Smallest Ethernet frame without FCS.
constexpr uint32_t kMinFrame = 60;

Status check_gpu_open(const Gpu& gpu) {
  if (!gpu.impl()) return {Errc::InvalidValue, Layer::Eth, "set_gpu with a Gpu that is not open"};
  return Status::ok();
}

bool configurable(QueueState s) { return s == QueueState::Created || s == QueueState::Configured; }

template <typename Impl>
constexpr const char* kQueueKind = std::is_same_v<Impl, detail::RxqImpl> ? "RX" : "TX";

// A setter: runs `apply` on a live queue that has not started (under its
// lifecycle lock) and, when it accepts the value, marks the queue configured.
template <typename Impl, typename Apply>
Status configure(const std::shared_ptr<Impl>& impl, const char* setter, Apply&& apply) {
  if (!impl)
    return {Errc::BadState, Layer::Eth, std::string(setter) + " on a destroyed " + kQueueKind<Impl> + " queue"};
  std::lock_guard lock(impl->mu);
  if (!configurable(impl->state)) return bad_state(setter, impl->state);
  GNIO_TRY(apply(*impl));
  impl->state = QueueState::Configured;
  return Status::ok();
}

// The body of a setter whose value needs no check.
template <typename T, typename V>
Status assign(T& field, V&& value) {
  field = std::forward<V>(value);
  return Status::ok();
}

std::optional<uint32_t> parse_u32(std::string_view t) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

// Takes the RX engine placement options (threads=, cores=, poll=) out of a
// queue spec; the rest goes to the backend.
Result<std::string> take_engine_placement(std::string_view spec, detail::EnginePlacement& out) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return std::string(spec);
  std::string rest(spec.substr(0, colon + 1));
  std::string_view opts = spec.substr(colon + 1);
  bool first = true;
  auto bad = [&](std::string_view item, const char* fix) {
    return Status(Errc::InvalidValue, Layer::Eth,
                  "queue spec '" + std::string(spec) + "': '" + std::string(item) + "' is not valid; " + fix);
  };
  while (true) {
    const size_t comma = opts.find(',');
    std::string_view item = opts.substr(0, comma);
    if (item.starts_with("threads=")) {
      auto v = parse_u32(item.substr(8));
      if (!v || *v == 0 || *v > 1024) return bad(item, "use threads=T with 1 <= T <= 1024");
      out.threads = static_cast<uint16_t>(*v);
    } else if (item.starts_with("cores=")) {
      std::string_view list = item.substr(6);
      const char* fix = "use cores=A-B (a range) or cores=A:B:C (a list) of CPU numbers";
      out.cores.clear();
      if (const size_t dash = list.find('-'); dash != std::string_view::npos) {
        auto lo = parse_u32(list.substr(0, dash)), hi = parse_u32(list.substr(dash + 1));
        if (!lo || !hi || *lo > *hi || *hi >= CPU_SETSIZE) return bad(item, fix);
        for (uint32_t c = *lo; c <= *hi; ++c) out.cores.push_back(static_cast<int>(c));
      } else {
        while (!list.empty()) {
          const size_t sep = list.find(':');
          auto c = parse_u32(list.substr(0, sep));
          if (!c || *c >= CPU_SETSIZE) return bad(item, fix);
          out.cores.push_back(static_cast<int>(*c));
          list = sep == std::string_view::npos ? std::string_view{} : list.substr(sep + 1);
        }
        if (out.cores.empty()) return bad(item, fix);
      }
      if (out.threads == 0) out.threads = static_cast<uint16_t>(out.cores.size());
    } else if (item.starts_with("poll=")) {
      if (item == "poll=busy")
        out.busy_poll = true;
      else if (item == "poll=backoff")
        out.busy_poll = false;
      else
        return bad(item, "use poll=busy or poll=backoff");
    } else {
      if (!first || !item.empty()) {
        if (rest.back() != ':') rest += ',';
        rest += item;
      }
    }
    first = false;
    if (comma == std::string_view::npos) break;
    opts = opts.substr(comma + 1);
  }
  return rest;
}

// What the queue delivers at most when nobody set it: what the backend can
// deliver, within half the ring (a packet must fit twice).
uint32_t default_max_packet_size(const detail::RxqImpl& q) {
  const uint64_t half_ring = static_cast<uint64_t>(q.num_strides) * q.stride_size / 2;
  return static_cast<uint32_t>(std::min<uint64_t>(q.dev->backend->caps().max_packet_size, half_ring));
}

}  // namespace

std::string_view queue_state_name(QueueState s) noexcept {
  switch (s) {
    case QueueState::Created: return "created";
    case QueueState::Configured: return "configured";
    case QueueState::Started: return "started";
    case QueueState::Stopped: return "stopped";
    case QueueState::Destroyed: return "destroyed";
  }
  return "unknown";
}

// ---- EthDevice -------------------------------------------------------------

Result<EthDevice> EthDevice::open(std::string_view spec) {
  detail::EnginePlacement placement;
  auto backend_spec = take_engine_placement(spec, placement);
  if (!backend_spec) return backend_spec.status();
  auto be = backend::open_backend(*backend_spec);
  if (!be) return be.status();
  auto impl = std::make_shared<detail::DeviceImpl>();
  impl->spec = std::string(spec);
  impl->backend = std::move(*be);
  impl->placement = std::move(placement);
  return EthDevice(std::move(impl));
}

const std::string& EthDevice::spec() const noexcept {
  static const std::string none;
  return impl_ ? impl_->spec : none;
}

const EthCaps& EthDevice::caps() const noexcept {
  static const EthCaps none;
  return impl_ ? impl_->backend->caps() : none;
}

bool EthDevice::rxq_type_supported(RxqType t) const noexcept {
  const EthCaps& c = caps();
  return impl_ && c.rx_supported && t == RxqType::Cyclic && c.rx_cyclic;
}

bool EthDevice::txq_type_supported(TxqType t) const noexcept {
  const EthCaps& c = caps();
  if (!impl_ || !c.tx_supported) return false;
  return t == TxqType::Regular ? c.tx_regular : c.tx_wait_on_time;
}

Result<EthRxq> EthDevice::create_rxq(uint16_t queue_id) {
  if (!impl_) return Status(Errc::BadState, Layer::Eth, "create_rxq on a device that is not open");
  const EthCaps& c = caps();
  if (!c.rx_supported)
    return Status(Errc::NotSupported, Layer::Eth,
                  "device \"" + impl_->spec + "\" (" + c.driver + ") has no RX queues; use an RX-capable spec",
                  Axis::Nic);
  if (queue_id >= c.max_rx_queues)
    return Status(Errc::InvalidValue, Layer::Eth,
                  "RX queue id " + u(queue_id) + " is outside the device's limit of " + u(c.max_rx_queues) +
                      " queue(s)");
  auto q = std::make_shared<detail::RxqImpl>();
  q->dev = impl_;
  q->queue_id = queue_id;
  q->stride_size = std::min<uint32_t>(q->stride_size, c.max_stride);
  q->burst_size = std::min<uint32_t>(q->burst_size, c.max_burst);
  return EthRxq(std::move(q));
}

Result<EthTxq> EthDevice::create_txq(uint16_t queue_id) {
  if (!impl_) return Status(Errc::BadState, Layer::Eth, "create_txq on a device that is not open");
  const EthCaps& c = caps();
  if (!c.tx_supported)
    return Status(Errc::NotSupported, Layer::Eth,
                  "device \"" + impl_->spec + "\" (" + c.driver + ") has no TX queues; use a TX-capable spec",
                  Axis::Nic);
  if (queue_id >= c.max_tx_queues)
    return Status(Errc::InvalidValue, Layer::Eth,
                  "TX queue id " + u(queue_id) + " is outside the device's limit of " + u(c.max_tx_queues) +
                      " queue(s)");
  auto q = std::make_shared<detail::TxqImpl>();
  q->dev = impl_;
  q->queue_id = queue_id;
  q->max_packet_size = c.max_packet_size;
  return EthTxq(std::move(q));
}

// ---- EthRxq ----------------------------------------------------------------

namespace detail {
RxqImpl::~RxqImpl() {
  if (engine) engine->stop();
  if (gpu && state == QueueState::Started) gpu->live_queues.fetch_sub(1);
}
TxqImpl::~TxqImpl() {
  if (engine) engine->stop(0);
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
  return configure(impl_, "set_num_strides", [&](detail::RxqImpl& q) {
    GNIO_TRY(check_pow2("number of strides", n, 2, q.dev->backend->caps().max_ring_entries));
    q.num_strides = n;
    return Status::ok();
  });
}

Status EthRxq::set_stride_size(uint32_t bytes) {
  return configure(impl_, "set_stride_size", [&](detail::RxqImpl& q) {
    const EthCaps& c = q.dev->backend->caps();
    GNIO_TRY(check_pow2("stride size", bytes, c.min_stride, c.max_stride));
    q.stride_size = bytes;
    return Status::ok();
  });
}

Status EthRxq::set_max_packet_size(uint32_t bytes) {
  return configure(impl_, "set_max_packet_size", [&](detail::RxqImpl& q) {
    GNIO_TRY(check_range("max packet size", bytes, kMinFrame, q.dev->backend->caps().max_packet_size));
    q.max_packet_size = bytes;
    return Status::ok();
  });
}

Status EthRxq::set_burst_size(uint32_t packets) {
  return configure(impl_, "set_burst_size", [&](detail::RxqImpl& q) {
    GNIO_TRY(check_range("burst size", packets, 1, q.dev->backend->caps().max_burst));
    q.burst_size = packets;
    return Status::ok();
  });
}

Status EthRxq::set_ring_mem(RingMem mem) {
  return configure(impl_, "set_ring_mem", [&](detail::RxqImpl& q) { return assign(q.ring_mem, mem); });
}

Status EthRxq::set_rx_offloads(RxOffloads offloads) {
  return configure(impl_, "set_rx_offloads", [&](detail::RxqImpl& q) { return assign(q.offloads, offloads); });
}

Status EthRxq::set_engine_thread(uint16_t index) {
  return configure(impl_, "set_engine_thread", [&](detail::RxqImpl& q) { return assign(q.engine_thread, index); });
}

Status EthRxq::set_engine_core(int core) {
  return configure(impl_, "set_engine_core", [&](detail::RxqImpl& q) {
    if (core < -1 || core >= CPU_SETSIZE)
      return Status(Errc::InvalidValue, Layer::Eth,
                    "engine core " + std::to_string(core) + " is not a CPU number; use 0.." + u(CPU_SETSIZE - 1) +
                        ", or -1 for not pinned");
    return assign(q.engine_core, core);
  });
}

Status EthRxq::set_busy_poll(bool busy) {
  return configure(impl_, "set_busy_poll", [&](detail::RxqImpl& q) { return assign(q.busy_poll, busy ? 1 : 0); });
}

Status EthRxq::set_gpu(const Gpu& gpu) {
  return configure(impl_, "set_gpu", [&](detail::RxqImpl& q) {
    GNIO_TRY(check_gpu_open(gpu));
    return assign(q.gpu, gpu.impl());
  });
}

Status EthRxq::set_packet_buffer(const BufArr& pool) {
  return configure(impl_, "set_packet_buffer", [&](detail::RxqImpl& q) { return assign(q.pool, pool); });
}

Status EthRxq::start() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "start on a destroyed RX queue"};
  std::lock_guard lock(impl_->mu);
  if (!configurable(impl_->state)) return bad_state("start", impl_->state);
  auto& q = *impl_;
  if (q.max_packet_size == 0) q.max_packet_size = default_max_packet_size(q);
  if (q.max_packet_size > q.num_strides * static_cast<uint64_t>(q.stride_size) / 2)
    return {Errc::InvalidValue, Layer::Eth,
            "max packet size " + u(q.max_packet_size) + " does not fit twice in a ring of " + u(q.num_strides) +
                " strides of " + u(q.stride_size) + " bytes; add strides"};
  if (q.pool) {
    if (q.pool->count() != q.num_strides || q.pool->elem_size() != q.stride_size)
      return {Errc::InvalidValue, Layer::Eth,
              "packet buffer of " + u(q.pool->count()) + " x " + u(q.pool->elem_size()) +
                  " bytes does not match the ring's " + u(q.num_strides) + " strides x " + u(q.stride_size) +
                  " bytes; create it with those values"};
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
  if (impl_->state != QueueState::Started) return bad_state("stop_source", impl_->state);
  if (impl_->engine)
    impl_->engine->stop_source();
  else
    impl_->host_source_stopped.store(true);  // host_receive() is the caller's own: nothing is in flight
  return Status::ok();
}

Status EthRxq::stop() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "stop on a destroyed RX queue"};
  std::lock_guard lock(impl_->mu);
  if (impl_->state != QueueState::Started) return bad_state("stop", impl_->state);
  if (impl_->gpu_handles.load() > 0)
    return {Errc::BadState, Layer::Eth,
            "stopping RX queue " + u(impl_->queue_id) + " while " + u(impl_->gpu_handles.load()) +
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
              "destroying RX queue " + u(impl_->queue_id) + " while " + u(impl_->gpu_handles.load()) +
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
  if (impl_->state != QueueState::Started) return bad_state("host_receive", impl_->state);
  if (impl_->gpu)
    return Status(Errc::BadState, Layer::Eth,
                  "host_receive on RX queue " + u(impl_->queue_id) +
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
  if (*n > 0 && be.rx_memory(q.queue_id)) be.rx_release(q.queue_id, std::span<const backend::RxFrame>(frames.data(), *n));
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

// ---- EthTxq ----------------------------------------------------------------

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
  return configure(impl_, "set_depth", [&](detail::TxqImpl& q) {
    GNIO_TRY(check_pow2("TX depth", descriptors, 2, q.dev->backend->caps().max_ring_entries));
    return assign(q.depth, descriptors);
  });
}

Status EthTxq::set_max_packet_size(uint32_t bytes) {
  return configure(impl_, "set_max_packet_size", [&](detail::TxqImpl& q) {
    GNIO_TRY(check_range("max packet size", bytes, kMinFrame, q.dev->backend->caps().max_packet_size));
    return assign(q.max_packet_size, bytes);
  });
}

Status EthTxq::set_staging_slot_size(uint32_t bytes) {
  return configure(impl_, "set_staging_slot_size", [&](detail::TxqImpl& q) {
    GNIO_TRY(check_range("TX staging slot size", bytes, 64, q.dev->backend->caps().max_packet_size));
    return assign(q.staging_slot_size, bytes);
  });
}

Status EthTxq::set_type(TxqType type) {
  return configure(impl_, "set_type", [&](detail::TxqImpl& q) {
    if (type == TxqType::WaitOnTime && !q.dev->backend->caps().tx_wait_on_time)
      return Status(Errc::NotSupported, Layer::Eth,
                    "device \"" + q.dev->spec + "\" does not support wait-on-time TX; use TxqType::Regular",
                    Axis::Nic);
    return assign(q.type, type);
  });
}

Status EthTxq::set_gpu(const Gpu& gpu) {
  return configure(impl_, "set_gpu", [&](detail::TxqImpl& q) {
    GNIO_TRY(check_gpu_open(gpu));
    return assign(q.gpu, gpu.impl());
  });
}

Status EthTxq::register_buffer(const BufArr& pool) {
  return configure(impl_, "register_buffer", [&](detail::TxqImpl& q) {
    if (!q.gpu) return Status(Errc::BadState, Layer::Eth, "register_buffer before set_gpu(): set the GPU first");
    detail::Region r;
    if (!q.gpu->resolve(reinterpret_cast<uint64_t>(pool.memory().device_ptr()), pool.count() * pool.elem_size(), r))
      return Status(Errc::InvalidValue, Layer::Eth,
                    "TX buffer of " + u(pool.count()) + " x " + u(pool.elem_size()) +
                        " bytes was not allocated on this queue's GPU (" + q.gpu->bus_id + ")");
    if (pool.elem_size() < q.max_packet_size)
      return Status(Errc::InvalidValue, Layer::Eth,
                    "TX buffer element size " + u(pool.elem_size()) + " is smaller than the queue's max packet size " +
                        u(q.max_packet_size) + "; call set_max_packet_size(" + u(pool.elem_size()) +
                        ") first, or use larger elements");
    return Status::ok();
  });
}

Status EthTxq::start() {
  if (!impl_) return {Errc::BadState, Layer::Eth, "start on a destroyed TX queue"};
  std::lock_guard lock(impl_->mu);
  if (!configurable(impl_->state)) return bad_state("start", impl_->state);
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
  if (impl_->state != QueueState::Started) return bad_state("stop", impl_->state);
  if (impl_->gpu_handles.load() > 0)
    return {Errc::BadState, Layer::Eth,
            "stopping TX queue " + u(impl_->queue_id) + " while " + u(impl_->gpu_handles.load()) +
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
              "destroying TX queue " + u(impl_->queue_id) + " while " + u(impl_->gpu_handles.load()) +
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
  if (impl_->state != QueueState::Started) return bad_state("host_send", impl_->state);
  if (impl_->gpu)
    return Status(Errc::BadState, Layer::Eth,
                  "host_send on TX queue " + u(impl_->queue_id) +
                      " whose datapath is on a GPU; send from the kernel, or start it without set_gpu()");
  std::vector<backend::TxFrame> tx;
  tx.reserve(frames.size());
  const uint64_t now = dev::host_now_ns();
  for (const auto& f : frames) {
    if (f.size() > impl_->max_packet_size)
      return Status(Errc::InvalidValue, Layer::Eth,
                    "frame of " + u(f.size()) + " bytes exceeds the queue's max packet size " +
                        u(impl_->max_packet_size));
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
