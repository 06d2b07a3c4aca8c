// SPDX-License-Identifier: Apache-2.0
// GENEVE (RFC 8926) on the GPU: an 8-byte header in a UDP datagram to port
// 6081 (version 2 bits, options length 6 bits in 4-byte words, O and C
// flags, protocol type, 24-bit VNI), options skipped by their length, then
// Ethernet (0x6558), IPv4 or IPv6 by the protocol type; another type is not
// opened.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/tunnel.hpp"

namespace gnio::dev::app {

inline constexpr uint16_t kGenevePort = 6081;

// The GENEVE header at `begin` of a UDP payload whose bytes end at `end`.
GNIO_HD inline Tunnel geneve_tunnel(const uint8_t* p, uint32_t begin, uint32_t end) {
  if (begin + 8 > end) return detail::tunnel_of(kTunnelGeneve, kGeneveHeaderCut);
  if ((p[begin] >> 6) != 0) return detail::tunnel_of(kTunnelGeneve, kGeneveBadVersion);
  const uint32_t hlen = 8 + (p[begin] & 0x3Fu) * 4;
  if (begin + hlen > end) return detail::tunnel_of(kTunnelGeneve, kGeneveHeaderCut);
  Tunnel t;
  t.type = kTunnelGeneve;
  t.id = (uint64_t{p[begin + 4]} << 16) | (uint64_t{p[begin + 5]} << 8) | p[begin + 6];
  detail::inner_by_ethertype(load_be16(p + begin + 2), begin + hlen, end, t);
  return t;
}

}  // namespace gnio::dev::app
