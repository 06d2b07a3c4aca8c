// SPDX-License-Identifier: Apache-2.0
// The datapath: RX bursts, which hand over frames that lie in their queue's
// region, the frees of their mbufs, and TX bursts, which copy frames into
// mbufs of the queue's pool.
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "port_module.hpp"

namespace gnio::dpdk_module {

namespace {

constexpr uint16_t kChunk = 64;  // mbufs per inner burst (stack arrays)

// A frame whose data is not one segment inside the queue's region (net_ring
// hands over whatever mbufs were enqueued; a frame longer than the data
// room is chained) is copied once into an mbuf of the queue's pool, so that
// every frame the backend returns lies in its rx_memory(). nullptr: no mbuf
// free for the copy (the frame is dropped).
rte_mbuf* into_region(RxQueueState& q, rte_mbuf* m) {
  const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
  if (m->nb_segs == 1 && data >= q.base && data + m->data_len <= q.end) return m;
  rte_mbuf* copy = rte_pktmbuf_alloc(q.pool);
  if (!copy) {
    ++q.copy_dropped;
    rte_pktmbuf_free(m);
    return nullptr;
  }
  const uint32_t room = rte_pktmbuf_tailroom(copy);
  const uint32_t len = std::min<uint32_t>(m->pkt_len, room);
  char* dst = rte_pktmbuf_append(copy, static_cast<uint16_t>(len));
  const void* src = rte_pktmbuf_read(m, 0, len, dst);
  if (src != dst) std::memcpy(dst, src, len);
  copy->pkt_len = len;
  copy->hash = m->hash;
  copy->ol_flags |= m->ol_flags & RTE_MBUF_F_RX_RSS_HASH;
  copy->port = m->port;
  rte_pktmbuf_free(m);
  ++q.copied;
  return copy;
}

}  // namespace

uint16_t rx_burst(uint16_t port_id, uint16_t queue, gnio_dpdk_rx* out, uint16_t n) {
  RxQueueState& q = g_ports[port_id].rxq[queue];
  uint16_t got = 0;
  rte_mbuf* m[kChunk];
  while (got < n) {
    const uint16_t want = static_cast<uint16_t>(std::min<int>(kChunk, n - got));
    const uint16_t k = rte_eth_rx_burst(port_id, queue, m, want);
    for (uint16_t i = 0; i < k; ++i) {
      const uint32_t wire_len = m[i]->pkt_len;
      rte_mbuf* f_m = into_region(q, m[i]);
      if (!f_m) continue;
      gnio_dpdk_rx& f = out[got++];
      f.data = rte_pktmbuf_mtod(f_m, const uint8_t*);
      f.len = f_m->data_len;
      f.pkt_len = wire_len;
      f.has_rss_hash = (f_m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0;
      f.rss_hash = f.has_rss_hash ? f_m->hash.rss : 0;
      f.mbuf = f_m;
    }
    if (k < want) break;
  }
  return got;
}

void free_mbufs(void* const* mbufs, uint32_t n) {
  rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(const_cast<void**>(mbufs)), n);
}

int tx_burst(uint16_t port_id, uint16_t queue, const uint8_t* const* data, const uint32_t* len, uint16_t n,
             char* err) {
  PortState& st = g_ports[port_id];
  if (queue >= st.tx_alloc.size()) {
    set_err(err, "port %u has no TX queue %u", port_id, queue);
    return -1;
  }
  rte_mempool* pool = st.tx_alloc[queue];
  int sent = 0;
  rte_mbuf* m[kChunk];
  while (sent < n) {
    const uint16_t want = static_cast<uint16_t>(std::min<int>(kChunk, n - sent));
    for (uint16_t i = 0; i < want; ++i)
      if (len[sent + i] > st.data_room) {
        set_err(err, "a frame of %u bytes does not fit the %u-byte mbufs of port %u", len[sent + i], st.data_room,
                port_id);
        return -1;
      }
    if (rte_pktmbuf_alloc_bulk(pool, m, want) != 0) {
      // Mbufs wait in the NIC's ring for completions: collect them, once.
      rte_eth_tx_done_cleanup(port_id, queue, 0);
      if (rte_pktmbuf_alloc_bulk(pool, m, want) != 0) break;
    }
    for (uint16_t i = 0; i < want; ++i) {
      char* dst = rte_pktmbuf_append(m[i], static_cast<uint16_t>(len[sent + i]));
      std::memcpy(dst, data[sent + i], len[sent + i]);
    }
    const uint16_t k = rte_eth_tx_burst(port_id, queue, m, want);
    if (k < want) rte_pktmbuf_free_bulk(m + k, want - k);
    sent += k;
    if (k < want) break;
  }
  return sent;
}

}  // namespace gnio::dpdk_module
