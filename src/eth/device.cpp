// SPDX-License-Identifier: Apache-2.0
// Opening a device from its spec, what it can do, and creating its queues.
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

#include "engine/queue_state.hpp"
#include "engine/rx_engine.hpp"
#include "engine/tx_engine.hpp"
#include "eth/queue_rules.hpp"
#include "gnio/eth.hpp"

namespace gnio {

namespace {

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

}  // namespace

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
                  "RX queue id " + eth::u(queue_id) + " is outside the device's limit of " +
                      eth::u(c.max_rx_queues) + " queue(s)");
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
                  "TX queue id " + eth::u(queue_id) + " is outside the device's limit of " +
                      eth::u(c.max_tx_queues) + " queue(s)");
  auto q = std::make_shared<detail::TxqImpl>();
  q->dev = impl_;
  q->queue_id = queue_id;
  q->max_packet_size = c.max_packet_size;
  return EthTxq(std::move(q));
}

}  // namespace gnio
