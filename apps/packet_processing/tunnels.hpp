// SPDX-License-Identifier: Apache-2.0
// Which tunnel a frame's outer headers lead to, on the GPU: MPLS by
// ethertype, GRE and IP in IP by IP protocol, VXLAN, GENEVE and GTP-U by UDP
// destination port; each type only when --decap opens it (the set `decap`,
// bits 1u << TunnelType). The header itself is read by its parser
// (tunnel_*.hpp).
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/tunnel.hpp"
#include "packet_processing/tunnel_geneve.hpp"
#include "packet_processing/tunnel_gre.hpp"
#include "packet_processing/tunnel_gtpu.hpp"
#include "packet_processing/tunnel_ipip.hpp"
#include "packet_processing/tunnel_mpls.hpp"
#include "packet_processing/tunnel_vxlan.hpp"

namespace gnio::dev::app {

GNIO_HD constexpr bool decap_opens(uint32_t decap, uint32_t type) { return ((decap >> type) & 1u) != 0; }

// The tunnel of the frame p[0..len) that parse_packet() parsed into `pp`
// (with flags `f`), which no reason refused. type kTunnelNone: none, or
// one that `decap` does not open.
GNIO_HD inline Tunnel find_tunnel(const uint8_t* p, uint32_t len, const ParsedPacket& pp, uint32_t f,
                                  uint32_t decap) {
  if (decap == kDecapNone) return Tunnel{};
  const bool ip = has_flag(f, PacketFlags::L3Ipv4) || has_flag(f, PacketFlags::L3Ipv6);
  if (!ip) {
    const bool mpls = pp.ethertype == 0x8847 || pp.ethertype == 0x8848;
    return mpls && decap_opens(decap, kTunnelMpls) ? mpls_tunnel(p, pp.l3_offset, len) : Tunnel{};
  }
  if (pp.l3_end == 0 || has_flag(f, PacketFlags::Fragment)) return Tunnel{};
  const uint8_t proto = pp.l4_proto;
  if (proto == 47) return decap_opens(decap, kTunnelGre) ? gre_tunnel(p, pp.l4_offset, pp.l3_end) : Tunnel{};
  if (proto == 4 || proto == 41) return decap_opens(decap, kTunnelIpip) ? ipip_tunnel(pp) : Tunnel{};
  if (!has_flag(f, PacketFlags::L4Udp) || pp.payload_offset <= pp.l4_offset) return Tunnel{};
  const uint32_t udp_end = pp.l4_offset + load_be16(p + pp.l4_offset + 4);
  const uint32_t end = udp_end < pp.l3_end ? udp_end : pp.l3_end;
  const uint16_t port = load_be16(p + pp.l4_offset + 2);
  if (port == kVxlanPort && decap_opens(decap, kTunnelVxlan)) return vxlan_tunnel(p, pp.payload_offset, end);
  if (port == kGenevePort && decap_opens(decap, kTunnelGeneve)) return geneve_tunnel(p, pp.payload_offset, end);
  if (port == kGtpuPort && decap_opens(decap, kTunnelGtpu)) return gtpu_tunnel(p, pp.payload_offset, end);
  return Tunnel{};
}

}  // namespace gnio::dev::app
