// SPDX-License-Identifier: Apache-2.0
// GRE (RFC 2784, with the key and sequence number of RFC 2890) on the GPU:
// flags and version, protocol type, then the optional checksum (C),
// key (K) and sequence number (S) words. The key is the tunnel's id. The
// payload is IPv4, IPv6 or Ethernet (transparent Ethernet bridging,
// 0x6558); another protocol type is not opened. Version 1 (PPTP's enhanced
// GRE, RFC 2637) is another protocol and not opened either.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/tunnel.hpp"

namespace gnio::dev::app {

// The GRE header at `begin` of an IP datagram whose bytes end at `end`.
GNIO_HD inline Tunnel gre_tunnel(const uint8_t* p, uint32_t begin, uint32_t end) {
  if (begin + 4 > end) return detail::tunnel_of(kTunnelGre, kGreHeaderCut);
  const uint8_t f0 = p[begin], f1 = p[begin + 1];
  const uint32_t version = f1 & 0x07u;
  if (version == 1) return Tunnel{};
  if (version != 0) return detail::tunnel_of(kTunnelGre, kGreBadVersion);
  // Routing (0x40), strict source route (0x08), recursion (0x07) and the
  // reserved bits of the second byte must be 0 for RFC 2784 and 2890.
  if ((f0 & 0x4Fu) != 0 || (f1 & 0xF8u) != 0) return detail::tunnel_of(kTunnelGre, kGreBadFlags);
  const bool csum = (f0 & 0x80u) != 0, key = (f0 & 0x20u) != 0, seq = (f0 & 0x10u) != 0;
  const uint32_t hlen = 4 + (csum ? 4u : 0u) + (key ? 4u : 0u) + (seq ? 4u : 0u);
  if (begin + hlen > end) return detail::tunnel_of(kTunnelGre, kGreHeaderCut);
  Tunnel t;
  t.type = kTunnelGre;
  if (key) {
    const uint32_t k = begin + 4 + (csum ? 4u : 0u);
    t.id = (uint64_t{load_be16(p + k)} << 16) | load_be16(p + k + 2);
  }
  detail::inner_by_ethertype(load_be16(p + begin + 2), begin + hlen, end, t);
  return t;
}

}  // namespace gnio::dev::app
