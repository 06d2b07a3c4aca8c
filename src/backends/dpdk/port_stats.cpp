// SPDX-License-Identifier: Apache-2.0
// A port's counters: DPDK's basic stats and the frames the RX bursts
// copied into the queues' own pools.
#include <rte_ethdev.h>

#include "port_module.hpp"

namespace gnio::dpdk_module {

int stats(uint16_t port_id, gnio_dpdk_stats* out) {
  rte_eth_stats s{};
  if (rte_eth_stats_get(port_id, &s) != 0) return -1;
  *out = gnio_dpdk_stats{s.ipackets, s.ibytes, s.imissed, s.ierrors, s.rx_nombuf, s.opackets, s.obytes, s.oerrors,
                         0, 0};
  for (const RxQueueState& q : g_ports[port_id].rxq) {
    out->rx_copied += q.copied;
    out->rx_copy_dropped += q.copy_dropped;
  }
  return 0;
}

}  // namespace gnio::dpdk_module
