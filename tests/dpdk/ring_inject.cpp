// SPDX-License-Identifier: Apache-2.0
#include "ring_inject.hpp"

#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstring>

namespace gnio::dpdktest {

bool inject_frame(const std::string& ring_name, const uint8_t* data, uint32_t len) {
  static rte_mempool* pool =
      rte_pktmbuf_pool_create("inject_pool", 1024, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  rte_ring* ring = rte_ring_lookup(ring_name.c_str());
  if (!pool || !ring) return false;
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (!m) return false;
  char* dst = rte_pktmbuf_append(m, static_cast<uint16_t>(len));
  if (dst) std::memcpy(dst, data, len);
  if (!dst || rte_ring_enqueue(ring, m) != 0) {
    rte_pktmbuf_free(m);
    return false;
  }
  return true;
}

std::vector<std::vector<uint8_t>> drain_frames(const std::string& ring_name) {
  std::vector<std::vector<uint8_t>> frames;
  rte_ring* ring = rte_ring_lookup(ring_name.c_str());
  if (!ring) return frames;
  void* m = nullptr;
  while (rte_ring_dequeue(ring, &m) == 0) {
    auto* mb = static_cast<rte_mbuf*>(m);
    std::vector<uint8_t> f(mb->pkt_len);
    const void* bytes = rte_pktmbuf_read(mb, 0, mb->pkt_len, f.data());
    if (bytes != f.data()) std::memcpy(f.data(), bytes, mb->pkt_len);
    frames.push_back(std::move(f));
    rte_pktmbuf_free(mb);
  }
  return frames;
}

}  // namespace gnio::dpdktest
