// SPDX-License-Identifier: Apache-2.0
// The headers of a packet that a tunnel carries with no Ethernet header of
// its own (IP in IP, GRE, MPLS, GENEVE and GTP-U with an IP payload), parsed
// as parse_packet() parses the IP part of a frame. The library's
// parse_packet() starts at an Ethernet header; here the packet is seen
// through a view that starts 14 bytes before its IP header (the tunnel's
// own headers are at least that long), so that the offsets in the result
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
  auto cut = [&out]() {
    out.flags |= bit(PacketFlags::Truncated);
    return false;
  };
  auto malformed = [&out]() {
    out.flags |= bit(PacketFlags::Malformed);
    return false;
  };
  const uint32_t off = kInnerIpAt;
  out.l3_offset = static_cast<uint16_t>(off);
  if (!v6) {
    out.ethertype = ::gnio::dev::detail::kEtherIpv4;
    out.flags |= bit(PacketFlags::L3Ipv4);
    if (len < off + 20) return cut();
    const uint32_t ihl = static_cast<uint32_t>(q[off] & 0x0F) * 4;
    const uint32_t total = load_be16(q + off + 2);
    if ((q[off] >> 4) != 4 || ihl < 20 || total < ihl) return malformed();
    if (len < off + ihl) return cut();
    const ::gnio::dev::detail::Bounds b = ::gnio::dev::detail::datagram_bounds(off, total, len, out);
    const uint16_t frag = load_be16(q + off + 6);
    const uint16_t frag_off = frag & 0x1FFF;
    if ((frag & 0x2000) != 0 || frag_off != 0) out.flags |= bit(PacketFlags::Fragment);
    const uint8_t proto = q[off + 9];
    if (frag_off != 0) {
      out.l4_proto = proto;
      out.l4_offset = out.payload_offset = static_cast<uint16_t>(off + ihl);
      return ::gnio::dev::detail::whole(out);
    }
    return ::gnio::dev::detail::parse_l4(q, off + ihl, b, proto, out) && ::gnio::dev::detail::whole(out);
  }
  out.ethertype = ::gnio::dev::detail::kEtherIpv6;
  out.flags |= bit(PacketFlags::L3Ipv6);
  if (len < off + 40) return cut();
  if ((q[off] >> 4) != 6) return malformed();
  const ::gnio::dev::detail::Bounds b =
      ::gnio::dev::detail::datagram_bounds(off, 40u + load_be16(q + off + 4), len, out);
  uint8_t next = q[off + 6];
  uint32_t l4 = off + 40;
  for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 44 || next == 60); ++i) {
    if (!::gnio::dev::detail::fits(l4, 8, b, out)) return false;
    const uint8_t following = q[l4];
    if (next == ::gnio::dev::detail::kIpv6Fragment) {
      out.flags |= bit(PacketFlags::Fragment);
      if ((load_be16(q + l4 + 2) & 0xFFF8) != 0) {
        out.l4_proto = following;
        out.l4_offset = out.payload_offset = static_cast<uint16_t>(l4 + 8);
        return ::gnio::dev::detail::whole(out);
      }
      l4 += 8;
    } else {
      const uint32_t ext = (static_cast<uint32_t>(q[l4 + 1]) + 1) * 8;
      if (!::gnio::dev::detail::fits(l4, ext, b, out)) return false;
      if (next == ::gnio::dev::detail::kIpv6Routing) out.routing_offset = static_cast<uint16_t>(l4);
      l4 += ext;
    }
    next = following;
  }
  return ::gnio::dev::detail::parse_l4(q, l4, b, next, out) && ::gnio::dev::detail::whole(out);
}

}  // namespace gnio::dev::app
