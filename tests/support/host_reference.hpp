// SPDX-License-Identifier: Apache-2.0
// What the host path reads from an RX spec: the reference a GPU run is
// checked against (every frame, or the totals ReceiveKernel counts), and
// the RX counters of several queues added up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gnio/dev/headers.hpp"
#include "gnio/eth.hpp"
#include "gnio/status.hpp"
#include "test_kernels.hpp"

namespace gnio::examples {

// Calls f(bytes) for every frame of an RX spec's first `queues` queues,
// read on the host path, queue after queue: the reference a GPU run is
// checked against.
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

// What ReceiveKernel computes, computed on the host.
inline Result<ReceiveTotals> host_receive_totals(const std::string& spec, uint16_t queues = 1) {
  ReceiveTotals t{};
  GNIO_TRY(for_each_host_frame(
      spec,
      [&](const std::vector<uint8_t>& f) {
        ++t.packets;
        t.bytes += f.size();
        t.checksum += dev::fnv1a64(f.data(), f.size());
      },
      queues));
  return t;
}

// The RX counters of several queues added up.
inline RxqStats add_stats(const RxqStats& a, const RxqStats& b) {
  RxqStats s = a;
  s.offered += b.offered;
  s.packets += b.packets;
  s.bytes += b.bytes;
  s.bursts += b.bursts;
  s.rx_missed += b.rx_missed;
  for (size_t r = 0; r < kDropReasons; ++r) s.dropped[r] += b.dropped[r];
  s.truncated += b.truncated;
  s.released += b.released;
  s.errors += b.errors;
  s.copies += b.copies;
  s.publish_ns += b.publish_ns;
  s.work_polls += b.work_polls;
  s.idle_polls += b.idle_polls;
  s.busy_ns += b.busy_ns;
  s.idle_ns += b.idle_ns;
  return s;
}

}  // namespace gnio::examples
