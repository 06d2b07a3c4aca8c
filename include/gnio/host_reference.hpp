// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief What the host path reads from an RX spec: the reference a GPU run
/// is checked against.
///
/// Every frame of a spec's queues is read with EthRxq::host_receive(), no
/// GPU involved; host_receive_totals() computes what dev::ReceiveKernel
/// counts, so that a run's totals can be compared with the spec's own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gnio/dev/headers.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/status.hpp"

namespace gnio {

/// @brief Calls f(bytes) for every frame of an RX spec's first `queues`
///        queues, read on the host path, queue after queue.
/// @tparam F Callable as f(const std::vector<uint8_t>&).
/// @param spec The RX spec (a fresh device is opened on it).
/// @param f Called once per frame, in the order each queue delivers them.
/// @param queues How many queues to read, from queue 0.
/// @return Ok, or the first error opening, starting or reading a queue.
template <typename F>
Status for_each_host_frame(const std::string& spec, F&& f, uint16_t queues = 1) {
  auto d = EthDevice::open(spec);
  if (!d) return d.status();
  for (uint16_t id = 0; id < queues; ++id) {
    auto q = d->create_rxq(id);
    if (!q) return q.status();
    GNIO_TRY(q->start());
    while (!q->at_end()) {
      auto frames = q->host_receive(256);
      if (!frames) return frames.status();
      for (auto& fr : *frames) f(fr.data);
    }
  }
  return Status::ok();
}

/// @brief What dev::ReceiveKernel counts on a spec, computed on the host.
/// @param spec The RX spec.
/// @param queues How many queues to read, from queue 0.
/// @param filter The kernel's filter, in host memory
///        (gnio::FilterProgram::host_handle()); the default matches every frame.
/// @return The totals (bad_release 0), or the error reading the spec.
inline Result<dev::ReceiveTotals> host_receive_totals(const std::string& spec, uint16_t queues = 1,
                                                      const dev::FilterRef& filter = {}) {
  dev::ReceiveTotals t{};
  GNIO_TRY(for_each_host_frame(
      spec,
      [&](const std::vector<uint8_t>& f) {
        const auto len = static_cast<uint32_t>(f.size());
        if (filter.run(f.data(), len, len) == 0) {
          ++t.filtered;
          return;
        }
        ++t.packets;
        t.bytes += f.size();
        t.checksum += dev::fnv1a64(f.data(), f.size());
      },
      queues));
  return t;
}

}  // namespace gnio
