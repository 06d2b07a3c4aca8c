// SPDX-License-Identifier: Apache-2.0
// The headers of a packet that a tunnel carries with no Ethernet header of
// its own (IP in IP, GRE, MPLS, GENEVE and GTP-U with an IP payload), parsed
// by the library's parse_ip(). The packet is seen through a view that
// starts 14 bytes before its IP header (the tunnel's own headers are at
// least that long), so that the offsets in the result
// count from the view's start as they count from a frame's, and every
// parser above L3 (l2l4.hpp, dns.hpp, ...) reads the view as it reads a
// frame. The 14 bytes before the IP header are never read.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"

namespace gnio::dev::app {

inline constexpr uint32_t kInnerIpAt = 14;  // the IP header's offset in the view

// Parses the IPv4 (v6 false) or IPv6 packet at q + kInnerIpAt, with `len`
// bytes of the view held (the IP header's included). Same result as
// parse_packet() on an Ethernet frame of that ethertype, without L2Ether.
GNIO_HD inline bool parse_inner_ip(const uint8_t* q, uint32_t len, bool v6, ParsedPacket& out) {
  out = ParsedPacket{};
  return parse_ip(q, kInnerIpAt, len, v6 ? ::gnio::dev::detail::kEtherIpv6 : ::gnio::dev::detail::kEtherIpv4, out);
}

}  // namespace gnio::dev::app
