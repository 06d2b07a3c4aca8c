// SPDX-License-Identifier: Apache-2.0
// What a port is and can do (port_info): its device, limits, link and the
// names of its offload and RSS capability bits.
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "port_module.hpp"

namespace gnio::dpdk_module {

namespace {

struct RssName {
  uint64_t bit;
  const char* name;
};
const RssName kRssNames[] = {
    {RTE_ETH_RSS_IPV4, "ipv4"},
    {RTE_ETH_RSS_FRAG_IPV4, "ipv4-frag"},
    {RTE_ETH_RSS_NONFRAG_IPV4_TCP, "ipv4-tcp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_UDP, "ipv4-udp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_SCTP, "ipv4-sctp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_OTHER, "ipv4-other"},
    {RTE_ETH_RSS_IPV6, "ipv6"},
    {RTE_ETH_RSS_FRAG_IPV6, "ipv6-frag"},
    {RTE_ETH_RSS_NONFRAG_IPV6_TCP, "ipv6-tcp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_UDP, "ipv6-udp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_SCTP, "ipv6-sctp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_OTHER, "ipv6-other"},
    {RTE_ETH_RSS_L2_PAYLOAD, "l2-payload"},
    {RTE_ETH_RSS_IPV6_EX, "ipv6-ex"},
    {RTE_ETH_RSS_IPV6_TCP_EX, "ipv6-tcp-ex"},
    {RTE_ETH_RSS_IPV6_UDP_EX, "ipv6-udp-ex"},
    {RTE_ETH_RSS_PORT, "port"},
    {RTE_ETH_RSS_VXLAN, "vxlan"},
    {RTE_ETH_RSS_GENEVE, "geneve"},
    {RTE_ETH_RSS_NVGRE, "nvgre"},
    {RTE_ETH_RSS_GTPU, "gtpu"},
    {RTE_ETH_RSS_ETH, "eth"},
    {RTE_ETH_RSS_S_VLAN, "s-vlan"},
    {RTE_ETH_RSS_C_VLAN, "c-vlan"},
    {RTE_ETH_RSS_ESP, "esp"},
    {RTE_ETH_RSS_AH, "ah"},
    {RTE_ETH_RSS_L2TPV3, "l2tpv3"},
    {RTE_ETH_RSS_PFCP, "pfcp"},
    {RTE_ETH_RSS_PPPOE, "pppoe"},
    {RTE_ETH_RSS_ECPRI, "ecpri"},
    {RTE_ETH_RSS_MPLS, "mpls"},
    {RTE_ETH_RSS_IPV4_CHKSUM, "ipv4-chksum"},
    {RTE_ETH_RSS_L4_CHKSUM, "l4-chksum"},
};

template <class NameOf>
void bit_names(uint64_t bits, char* out, size_t cap, NameOf name_of) {
  std::string s;
  for (int b = 0; b < 64; ++b) {
    const uint64_t bit = uint64_t{1} << b;
    if (!(bits & bit)) continue;
    const char* n = name_of(bit);
    if (!s.empty()) s += ' ';
    s += n ? n : ("bit" + std::to_string(b)).c_str();
  }
  std::snprintf(out, cap, "%s", s.c_str());
}

}  // namespace

int port_info(uint16_t port_id, gnio_dpdk_port_info* out, char* err) {
  *out = gnio_dpdk_port_info{};
  rte_eth_dev_info info;
  int rc = rte_eth_dev_info_get(port_id, &info);
  if (rc != 0) {
    set_err(err, "rte_eth_dev_info_get(port %u) failed: %s", port_id, rte_strerror(-rc));
    return -1;
  }
  out->port_id = port_id;
  rte_eth_dev_get_name_by_port(port_id, out->name);
  std::snprintf(out->driver, sizeof out->driver, "%s", info.driver_name ? info.driver_name : "");
  const rte_bus* bus = info.device ? rte_dev_bus(info.device) : nullptr;
  std::snprintf(out->bus, sizeof out->bus, "%s", bus ? rte_bus_name(bus) : "");
  out->can_dma_map = std::strcmp(out->bus, "pci") == 0 || std::strcmp(out->bus, "auxiliary") == 0;
  out->numa_node = rte_eth_dev_socket_id(port_id);
  out->max_rx_queues = info.max_rx_queues;
  out->max_tx_queues = info.max_tx_queues;
  out->rx_desc_min = info.rx_desc_lim.nb_min;
  out->rx_desc_max = info.rx_desc_lim.nb_max;
  out->rx_desc_align = info.rx_desc_lim.nb_align;
  out->tx_desc_min = info.tx_desc_lim.nb_min;
  out->tx_desc_max = info.tx_desc_lim.nb_max;
  out->tx_desc_align = info.tx_desc_lim.nb_align;
  out->max_rx_pktlen = info.max_rx_pktlen;
  out->min_mtu = info.min_mtu;
  out->max_mtu = info.max_mtu;
  uint16_t mtu = 0;
  if (rte_eth_dev_get_mtu(port_id, &mtu) == 0) out->mtu = mtu;
  out->rx_offload_capa = info.rx_offload_capa;
  out->tx_offload_capa = info.tx_offload_capa;
  out->flow_type_rss_offloads = info.flow_type_rss_offloads;
  out->hash_key_size = info.hash_key_size;
  out->reta_size = info.reta_size;
  rte_ether_addr mac{};
  if (rte_eth_macaddr_get(port_id, &mac) == 0) std::memcpy(out->mac, mac.addr_bytes, 6);
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_id, &link) == 0) {
    out->link_up = link.link_status == RTE_ETH_LINK_UP;
    out->link_speed_mbps = link.link_speed;
  }
  bit_names(info.rx_offload_capa, out->rx_offloads, sizeof out->rx_offloads,
            [](uint64_t b) { return rte_eth_dev_rx_offload_name(b); });
  bit_names(info.tx_offload_capa, out->tx_offloads, sizeof out->tx_offloads,
            [](uint64_t b) { return rte_eth_dev_tx_offload_name(b); });
  bit_names(info.flow_type_rss_offloads, out->rss_functions, sizeof out->rss_functions, [](uint64_t b) -> const char* {
    for (const auto& n : kRssNames)
      if (n.bit == b) return n.name;
    return nullptr;
  });
  return 0;
}

}  // namespace gnio::dpdk_module
