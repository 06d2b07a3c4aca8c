// SPDX-License-Identifier: Apache-2.0
// Answers the packet-processing application builds in place, in the RX
// buffer of the request (sent zero-copy through a TX queue): ICMP and
// ICMPv6 echo replies, ARP replies and IPv6 neighbour advertisements for
// the configured addresses, and UDP echo on a configured port. A frame is
// answered only when it is whole and well-formed.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/analyze.hpp"

namespace gnio::dev::app {

enum ReplyKind : uint32_t { kReplyNone, kReplyIcmpEcho, kReplyIcmpv6Echo, kReplyArp, kReplyNa, kReplyUdpEcho, kReplyCount };
inline constexpr const char* kReplyNames[kReplyCount] = {"none", "icmp_echo", "icmpv6_echo", "arp", "neighbor_advertisement",
                                                         "udp_echo"};

struct ReplyConfig {
  static constexpr uint32_t kMaxAddrs = 4;
  uint8_t ipv4[kMaxAddrs][4];
  uint8_t ipv6[kMaxAddrs][16];
  uint32_t ipv4_count = 0;
  uint32_t ipv6_count = 0;
  uint8_t mac[6];
  bool has_mac = false;
  uint16_t udp_echo_port = 0;  // 0: off
};

namespace detail {

GNIO_HD inline bool equal(const uint8_t* a, const uint8_t* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
GNIO_HD inline void copy(uint8_t* d, const uint8_t* s, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) d[i] = s[i];
}

// Echo requests go to any address when none is configured.
GNIO_HD inline bool mine4(const ReplyConfig& c, const uint8_t* a, bool any_when_none) {
  if (c.ipv4_count == 0 && c.ipv6_count == 0) return any_when_none;
  for (uint32_t i = 0; i < c.ipv4_count; ++i)
    if (equal(c.ipv4[i], a, 4)) return true;
  return false;
}
GNIO_HD inline bool mine6(const ReplyConfig& c, const uint8_t* a, bool any_when_none) {
  if (c.ipv4_count == 0 && c.ipv6_count == 0) return any_when_none;
  for (uint32_t i = 0; i < c.ipv6_count; ++i)
    if (equal(c.ipv6[i], a, 16)) return true;
  return false;
}

GNIO_HD inline ReplyKind arp_reply(uint8_t* p, uint32_t len, const Analysis& a, const ReplyConfig& c) {
  const uint32_t o = a.pp.l3_offset;
  if (!c.has_mac || o + 28 > len) return kReplyNone;
  uint8_t* arp = p + o;
  // Ethernet/IPv4 request: htype 1, ptype 0x0800, hlen 6, plen 4, op 1.
  if (load_be16(arp) != 1 || load_be16(arp + 2) != 0x0800 || arp[4] != 6 || arp[5] != 4 || load_be16(arp + 6) != 1)
    return kReplyNone;
  if (!mine4(c, arp + 24, false)) return kReplyNone;
  uint8_t target_ip[4], sender_mac[6], sender_ip[4];
  copy(target_ip, arp + 24, 4);
  copy(sender_mac, arp + 8, 6);
  copy(sender_ip, arp + 14, 4);
  copy(p, sender_mac, 6);
  copy(p + 6, c.mac, 6);
  store_be16(arp + 6, 2);
  copy(arp + 8, c.mac, 6);
  copy(arp + 14, target_ip, 4);
  copy(arp + 18, sender_mac, 6);
  copy(arp + 24, sender_ip, 4);
  return kReplyArp;
}

// A neighbour solicitation (ICMPv6 135, hop limit 255, code 0) for one of
// our IPv6 addresses becomes a solicited, override advertisement with our
// MAC as target link-layer address. A solicitation from :: (duplicate
// address detection) is answered to all nodes (ff02::1), unsolicited.
GNIO_HD inline ReplyKind neighbor_advertisement(uint8_t* p, uint32_t& len, const Analysis& a, const ReplyConfig& c) {
  const ParsedPacket& pp = a.pp;
  const uint32_t l3 = pp.l3_offset, l4 = pp.l4_offset;
  if (!c.has_mac || l4 != l3 + 40 || pp.l3_end < l4 + 24) return kReplyNone;
  uint8_t* ip = p + l3;
  uint8_t* icmp = p + l4;
  if (icmp[0] != 135 || icmp[1] != 0 || ip[7] != 255) return kReplyNone;
  if (!mine6(c, icmp + 8, false)) return kReplyNone;
  const uint8_t unspecified[16] = {};
  const bool dad = equal(ip + 8, unspecified, 16);
  // The frame must hold the 32-byte advertisement (with its option).
  if (l4 + 32 > len) return kReplyNone;
  const uint8_t* requester_mac = p + 6;
  uint8_t dst_mac[6];
  if (dad) {
    const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
    copy(dst_mac, all_nodes_mac, 6);
  } else {
    copy(dst_mac, requester_mac, 6);
  }
  copy(p, dst_mac, 6);
  copy(p + 6, c.mac, 6);
  // IPv6: destination = the solicitation's source (or all nodes), source = the target.
  if (dad) {
    const uint8_t all_nodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    copy(ip + 24, all_nodes, 16);
  } else {
    copy(ip + 24, ip + 8, 16);
  }
  copy(ip + 8, icmp + 8, 16);
  store_be16(ip + 4, 32);
  ip[7] = 255;
  icmp[0] = 136;
  icmp[1] = 0;
  icmp[4] = dad ? 0x20 : 0x60;  // S (solicited) unless DAD, O (override)
  icmp[5] = icmp[6] = icmp[7] = 0;
  icmp[24] = 2;  // target link-layer address option, 8 bytes
  icmp[25] = 1;
  copy(icmp + 26, c.mac, 6);
  len = l4 + 32;
  update_checksums(p, len);
  return kReplyNa;
}

}  // namespace detail

// Turns the request in p[0..len) into its answer, in place; `len` becomes
// the answer's length. kReplyNone leaves the frame untouched; so does every
// frame with a tunnel.
GNIO_HD inline ReplyKind build_reply(uint8_t* p, uint32_t& len, const Analysis& a, const ReplyConfig& c) {
  // A packet out of a tunnel would need its reply wrapped in the tunnel again.
  if (a.reason != kReasonNone || a.tunnel != kTunnelNone) return kReplyNone;
  if (a.has(kArp)) return detail::arp_reply(p, len, a, c);
  const ParsedPacket& pp = a.pp;
  constexpr uint32_t kNot = bit(PacketFlags::Fragment) | bit(PacketFlags::Truncated) | bit(PacketFlags::Malformed);
  if ((a.flags & kNot) != 0 || pp.payload_offset <= pp.l4_offset || pp.routing_offset != 0) return kReplyNone;
  const bool v4 = a.has(kIpv4);
  const uint8_t* dst = p + pp.l3_offset + (v4 ? 16 : 24);
  const uint8_t type = p[pp.l4_offset];
  ReplyKind kind = kReplyNone;
  if (a.has(kIcmp) && type == 8 && detail::mine4(c, dst, true)) kind = kReplyIcmpEcho;
  if (a.has(kIcmpv6) && type == 128 && detail::mine6(c, dst, true)) kind = kReplyIcmpv6Echo;
  if (a.has(kIcmpv6) && type == 135) return detail::neighbor_advertisement(p, len, a, c);
  if (a.has(kUdp) && c.udp_echo_port != 0 && load_be16(p + pp.l4_offset + 2) == c.udp_echo_port &&
      (v4 ? detail::mine4(c, dst, true) : detail::mine6(c, dst, true)))
    kind = kReplyUdpEcho;
  if (kind == kReplyNone) return kReplyNone;
  // Ethernet, IP and port swap keep every checksum; the ICMP type change is
  // patched incrementally. UDP echo then gets a complete checksum, even
  // where the request left it to offload (partial).
  if (swap_addresses(p, len) != HeaderStatus::Ok) return kReplyNone;
  if (c.has_mac) detail::copy(p + 6, c.mac, 6);
  if (kind == kReplyUdpEcho) update_checksums(p, len);
  return kind;
}

}  // namespace gnio::dev::app
