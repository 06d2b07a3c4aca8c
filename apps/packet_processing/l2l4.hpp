// SPDX-License-Identifier: Apache-2.0
// L2-L4 for the packet-processing application, on the GPU: the protocols a
// frame carries up to its L4 header (Ethernet, VLAN/QinQ, ARP, IPv4, IPv6,
// ICMP, ICMPv6, UDP, TCP, fragments), the checksum state of L3 and L4, the
// reason a frame that parse_packet() refused is malformed or cut, and the
// flow key of its conversation. The headers themselves are parsed by the
// library (gnio/dev/headers.hpp); this turns what it found into the
// application's counters and key.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/reason.hpp"

namespace gnio::dev::app {

// Protocol counters, one bit each in Analysis::protocols.
enum Proto : uint32_t {
  kEth,
  kVlan,         // at least one 802.1Q tag
  kQinq,         // an 802.1ad outer tag
  kArp,
  kIpv4,
  kIpv6,
  kIcmp,
  kIcmpv6,
  kUdp,
  kTcp,
  kDns,          // UDP or TCP port 53 with a DNS message (or the start of one)
  kHttpRequest,  // a TCP payload that starts like an HTTP/1.x request line, on any port
  kTlsClientHello,
  kFragment,     // an IPv4 or IPv6 fragment
  kOtherL3,      // an ethertype other than ARP, IPv4, IPv6
  kProtoCount,
};

inline constexpr const char* kProtoNames[kProtoCount] = {
    "eth", "vlan", "qinq", "arp", "ipv4", "ipv6", "icmp", "icmpv6", "udp", "tcp", "dns", "http_request",
    "tls_client_hello", "fragment", "other_l3"};

// Checksum state of one layer.
enum Csum : uint32_t { kCsumNotChecked, kCsumGood, kCsumBad, kCsumPartial, kCsumCount };
inline constexpr const char* kCsumNames[kCsumCount] = {"not_checked", "good", "bad", "partial"};

// Layers whose checksum state is counted.
enum CsumLayer : uint32_t { kCsumIpv4, kCsumUdp, kCsumTcp, kCsumIcmp, kCsumIcmpv6, kCsumLayerCount };
inline constexpr const char* kCsumLayerNames[kCsumLayerCount] = {"ipv4", "udp", "tcp", "icmp", "icmpv6"};

// Both directions of a conversation map to one key: endpoint a is the lower
// (address, port) of the two. Addresses of IPv4 flows use the first 4 bytes.
// A packet that came out of a tunnel is keyed by its own (inner) addresses
// and ports and by the tunnel's type and id, so that the same inner
// conversation in two VNIs or TEIDs is two flows.
struct FlowKey {
  uint8_t a[16];
  uint8_t b[16];
  uint16_t port_a;
  uint16_t port_b;
  uint8_t proto;    // IP protocol of the L4 header (or of the fragment)
  uint8_t version;  // 4 or 6; 0: no flow (not IP, or the IP header is cut or malformed)
  uint8_t tunnel;   // TunnelType (tunnel.hpp) the packet came out of; 0: none
  uint8_t labels;   // MPLS: labels in tunnel_id (1..3); else 0
  uint64_t tunnel_id;  // VNI, TEID, GRE key, or MPLS labels (20 bits each, top of stack highest); 0: none
};
static_assert(sizeof(FlowKey) == 48, "the flow key is 12 words (warp_merge.hpp shuffles it word by word)");

// The checksum state of a frame's layers, from its flags (checksum_state()).
struct ChecksumStates {
  uint32_t l3 = kCsumNotChecked;
  uint32_t l4 = kCsumNotChecked;
  uint32_t l4_layer = kCsumLayerCount;  // which L4 layer l4 is for
};

namespace detail {

GNIO_HD inline bool less_endpoint(const uint8_t* x, uint16_t px, const uint8_t* y, uint16_t py, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i];
  return px < py;
}

}  // namespace detail

// The protocol bits (1u << Proto) of the frame p[0..len) up to L4, from
// parse_packet()'s result pp and the flags `f` (checksum_state() of it); an
// ARP message the capture cut sets `reason` to kArpCut.
GNIO_HD inline uint32_t l2l4_protocols(const uint8_t* p, uint32_t len, const ParsedPacket& pp, uint32_t f,
                                       uint32_t& reason) {
  uint32_t protocols = 0;
  if (len >= 14) protocols |= 1u << kEth;
  if (has_flag(f, PacketFlags::Vlan)) {
    protocols |= 1u << kVlan;
    if (load_be16(p + 12) == 0x88A8) protocols |= 1u << kQinq;
  }
  const bool v4 = has_flag(f, PacketFlags::L3Ipv4), v6 = has_flag(f, PacketFlags::L3Ipv6);
  if (v4) protocols |= 1u << kIpv4;
  if (v6) protocols |= 1u << kIpv6;
  if (len >= 14 && !v4 && !v6) {
    if (pp.ethertype == 0x0806) {
      protocols |= 1u << kArp;
      if (pp.l3_offset + 28u > len) reason = kArpCut;
    } else if (!has_flag(f, PacketFlags::Truncated)) {
      protocols |= 1u << kOtherL3;
    }
  }
  if (has_flag(f, PacketFlags::Fragment)) protocols |= 1u << kFragment;
  if (has_flag(f, PacketFlags::L4Udp)) protocols |= 1u << kUdp;
  if (has_flag(f, PacketFlags::L4Tcp)) protocols |= 1u << kTcp;
  if (has_flag(f, PacketFlags::L4Icmp)) protocols |= 1u << kIcmp;
  if (has_flag(f, PacketFlags::L4Icmpv6)) protocols |= 1u << kIcmpv6;
  return protocols;
}

// The checksum state of L3 and L4 that the flags `f` hold.
GNIO_HD inline ChecksumStates checksum_states(uint32_t f) {
  ChecksumStates c;
  if (has_flag(f, PacketFlags::L3CsumGood)) c.l3 = kCsumGood;
  if (has_flag(f, PacketFlags::L3CsumBad)) c.l3 = kCsumBad;
  if (has_flag(f, PacketFlags::L4CsumGood)) c.l4 = kCsumGood;
  if (has_flag(f, PacketFlags::L4CsumBad)) c.l4 = kCsumBad;
  if (has_flag(f, PacketFlags::L4CsumPartial)) c.l4 = kCsumPartial;
  c.l4_layer = has_flag(f, PacketFlags::L4Udp)      ? kCsumUdp
               : has_flag(f, PacketFlags::L4Tcp)    ? kCsumTcp
               : has_flag(f, PacketFlags::L4Icmp)   ? kCsumIcmp
               : has_flag(f, PacketFlags::L4Icmpv6) ? kCsumIcmpv6
                                                    : kCsumLayerCount;
  return c;
}

// The reason parse_packet() refused a frame, found again from its bytes.
GNIO_HD inline uint32_t l2_to_l4_reason(const uint8_t* p, uint32_t len, const ParsedPacket& pp) {
  const uint32_t f = pp.flags;
  if (len < 14) return kFrameShort;
  const uint32_t off = pp.l3_offset;
  if (has_flag(f, PacketFlags::L3Ipv4)) {
    if (len < off + 20) return kIpv4HeaderCut;
    const uint32_t ihl = static_cast<uint32_t>(p[off] & 0x0F) * 4;
    if ((p[off] >> 4) != 4) return kIpv4BadVersion;
    if (ihl < 20) return kIpv4BadIhl;
    if (load_be16(p + off + 2) < ihl) return kIpv4BadTotalLength;
    if (len < off + ihl) return kIpv4HeaderCut;
  } else if (has_flag(f, PacketFlags::L3Ipv6)) {
    if (len < off + 40) return kIpv6HeaderCut;
    if ((p[off] >> 4) != 6) return kIpv6BadVersion;
    if (pp.l4_offset == 0) return has_flag(f, PacketFlags::Malformed) ? kIpv6ExtOverflow : kIpv6ExtCut;
  } else {
    return has_flag(f, PacketFlags::Truncated) ? kVlanCut : kReasonNone;
  }
  const bool bad = has_flag(f, PacketFlags::Malformed);
  const bool header_whole = pp.payload_offset > pp.l4_offset || has_flag(f, PacketFlags::L4Other) ||
                            (has_flag(f, PacketFlags::Fragment) && (f & (bit(PacketFlags::L4Udp) | bit(PacketFlags::L4Tcp) |
                                                                          bit(PacketFlags::L4Icmp) |
                                                                          bit(PacketFlags::L4Icmpv6))) == 0);
  if (!header_whole) {
    const uint32_t l4 = pp.l4_offset;
    if (has_flag(f, PacketFlags::L4Tcp)) {
      if (l4 + 20 > pp.l3_end) return bad ? kTcpHeaderOverflow : kTcpHeaderCut;
      if ((p[l4 + 12] >> 4) < 5) return kTcpBadOffset;
      return bad ? kTcpHeaderOverflow : kTcpHeaderCut;
    }
    if (has_flag(f, PacketFlags::L4Udp)) {
      if (l4 + 8 > pp.l3_end) return bad ? kUdpLengthOverPayload : kUdpHeaderCut;
      return load_be16(p + l4 + 4) < 8 ? kUdpLengthUnderHeader : kUdpLengthOverPayload;
    }
    return bad ? kIcmpShort : kIcmpHeaderCut;
  }
  return has_flag(f, PacketFlags::Truncated) ? kDatagramCut : kReasonNone;
}

// TCP options: each but END (0) and NOP (1) has a length byte of at least 2
// that keeps it inside the header.
GNIO_HD inline bool tcp_options_ok(const uint8_t* p, uint32_t begin, uint32_t end) {
  uint32_t i = begin;
  while (i < end) {
    const uint8_t kind = p[i];
    if (kind == 0) return true;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= end) return false;
    const uint32_t n = p[i + 1];
    if (n < 2 || i + n > end) return false;
    i += n;
  }
  return true;
}

// The flow key of an IP packet whose IP header is whole and well-formed
// (pp.l3_end != 0; otherwise `key` is left as it is): the two endpoints in
// order, and into `direction` 0 where the source is endpoint a, 1 where it
// is endpoint b. Ports are those of a whole UDP or TCP header, else 0.
GNIO_HD inline void flow_key(const uint8_t* p, const ParsedPacket& pp, uint32_t f, FlowKey& key, int8_t& direction) {
  const bool v4 = has_flag(f, PacketFlags::L3Ipv4), v6 = has_flag(f, PacketFlags::L3Ipv6);
  if (pp.l3_end == 0 || !(v4 || v6)) return;
  const uint32_t n = v4 ? 4 : 16;
  const uint8_t* src = p + pp.l3_offset + (v4 ? 12 : 8);
  const uint8_t* dst = src + n;
  uint16_t sp = 0, dp = 0;
  const bool ports = (has_flag(f, PacketFlags::L4Udp) || has_flag(f, PacketFlags::L4Tcp)) &&
                     pp.payload_offset > pp.l4_offset;
  if (ports) {
    sp = load_be16(p + pp.l4_offset);
    dp = load_be16(p + pp.l4_offset + 2);
  }
  const bool swap = detail::less_endpoint(dst, dp, src, sp, n);
  const uint8_t* lo = swap ? dst : src;
  const uint8_t* hi = swap ? src : dst;
  for (uint32_t i = 0; i < 16; ++i) {
    key.a[i] = i < n ? lo[i] : 0;
    key.b[i] = i < n ? hi[i] : 0;
  }
  key.port_a = swap ? dp : sp;
  key.port_b = swap ? sp : dp;
  key.proto = pp.l4_proto;
  key.version = v4 ? 4 : 6;
  direction = swap ? 1 : 0;
}

}  // namespace gnio::dev::app
