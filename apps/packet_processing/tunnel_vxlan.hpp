// SPDX-License-Identifier: Apache-2.0
// VXLAN (RFC 7348) on the GPU: an 8-byte header in a UDP datagram to port
// 4789 (flags with I set, 24 reserved bits, the 24-bit VNI, 8 reserved
// bits), then an Ethernet frame.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/tunnel.hpp"

namespace gnio::dev::app {

inline constexpr uint16_t kVxlanPort = 4789;

// The VXLAN header at `begin` of a UDP payload whose bytes end at `end`.
GNIO_HD inline Tunnel vxlan_tunnel(const uint8_t* p, uint32_t begin, uint32_t end) {
  if (begin + 8 > end) return detail::tunnel_of(kTunnelVxlan, kVxlanHeaderCut);
  if ((p[begin] & 0x08u) == 0) return detail::tunnel_of(kTunnelVxlan, kVxlanBadFlags);
  Tunnel t;
  t.type = kTunnelVxlan;
  t.id = (uint64_t{p[begin + 4]} << 16) | (uint64_t{p[begin + 5]} << 8) | p[begin + 6];
  t.inner = kInnerEthernet;
  t.offset = begin + 8;
  t.end = end;
  return t;
}

}  // namespace gnio::dev::app
