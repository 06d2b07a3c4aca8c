// SPDX-License-Identifier: Apache-2.0
#include "backends/backend.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

Backend::QueueRx& Backend::queue_rx(uint16_t queue) {
  std::lock_guard lock(rx_mu_);
  if (rx_.size() <= queue) rx_.resize(queue + 1u);
  if (!rx_[queue]) rx_[queue] = std::make_unique<QueueRx>();
  return *rx_[queue];
}

bool Backend::rx_held(uint16_t queue) const {
  std::lock_guard lock(rx_mu_);
  return queue < rx_.size() && rx_[queue] && !rx_[queue]->held.empty();
}

Result<size_t> Backend::rx_into(uint16_t queue, RxSink& sink) {
  // A frame that found no room is offered again, first, at the next call.
  QueueRx& state = queue_rx(queue);
  std::vector<HeldFrame>& held = state.held;
  if (!held.empty()) {
    size_t offered = 0;
    while (offered < held.size() && sink.room() > 0) {
      HeldFrame& h = held[offered];
      uint8_t* dst = sink.claim(static_cast<uint32_t>(h.bytes.size()));
      if (!dst) break;
      std::memcpy(dst, h.bytes.data(), h.bytes.size());
      sink.commit_hashed(static_cast<uint32_t>(h.bytes.size()), h.timestamp_ns, h.flags, h.wire_len, h.rss_hash);
      ++offered;
    }
    held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(offered));
    return offered;
  }
  std::vector<RxFrame>& frames = state.burst;
  frames.resize(sink.room());
  Result<size_t> got = rx_burst(queue, frames);
  if (!got) return got.status();
  for (size_t i = 0; i < *got; ++i) {
    RxFrame& f = frames[i];
    if (f.len == 0) {
      sink.drop(DropReason::Empty);
      continue;
    }
    if (f.len > sink.max_frame()) {
      if (f.wire_len == 0) f.wire_len = f.len;
      f.len = sink.max_frame();
      f.flags |= RxFrameTruncated;
    }
    uint8_t* dst = held.empty() ? sink.claim(f.len) : nullptr;
    if (dst) {
      std::memcpy(dst, f.data, f.len);
      sink.commit_hashed(f.len, f.timestamp_ns, f.flags, f.wire_len, f.rss_hash);
    } else if (caps().drops_when_full) {
      sink.drop(DropReason::RingFull);  // a wire does not wait for the ring
    } else {
      held.push_back({std::vector<uint8_t>(f.data, f.data + f.len), f.timestamp_ns, f.flags, f.wire_len, f.rss_hash});
    }
  }
  if (*got > 0 && rx_memory(queue)) rx_release(queue, std::span<const RxFrame>(frames.data(), *got));
  return *got;
}

Result<std::unique_ptr<Backend>> open_backend(std::string_view spec) {
  struct Driver {
    std::string_view name;
    Result<std::unique_ptr<Backend>> (*open)(std::string_view);
  };
#define GNIO_OPEN_ROW(name, open, describe) Driver{name, open},
  static constexpr Driver kDrivers[] = {GNIO_DRIVER_TABLE(GNIO_OPEN_ROW)};
#undef GNIO_OPEN_ROW
  const std::string_view driver = spec_driver(spec);
  std::string known;
  for (const Driver& d : kDrivers) {
    if (d.name == driver) return d.open(spec);
    known += (known.empty() ? "" : ", ") + std::string(d.name);
  }
  return Status(Errc::InvalidValue, Layer::Backend,
                "queue spec '" + std::string(spec) + "': unknown driver '" + std::string(driver) +
                    "'; known drivers: " + known + " (e.g. 'pcap:FILE', 'loop:', 'mem:')");
}

}  // namespace gnio::backend
