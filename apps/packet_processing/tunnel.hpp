// SPDX-License-Identifier: Apache-2.0
// The tunnels the packet-processing application opens (MPLS, GRE, IP in IP,
// VXLAN, GENEVE, GTP-U): their types and names, the --decap set of them,
// and what a tunnel parser (tunnel_*.hpp) found in one header. One level of
// tunnel is opened: a tunnel inside the inner packet is classified by its
// headers, as any packet.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "packet_processing/reason.hpp"

namespace gnio::dev::app {

enum TunnelType : uint32_t {
  kTunnelNone,
  kTunnelMpls,    // ethertype 0x8847/0x8848: a label stack, then IPv4 or IPv6
  kTunnelGre,     // IP protocol 47 (RFC 2784, keys and sequence numbers RFC 2890)
  kTunnelIpip,    // IP protocol 4 or 41: IPv4 or IPv6 in IPv4 or IPv6 (RFC 2003, RFC 4213, RFC 2473)
  kTunnelVxlan,   // UDP port 4789 (RFC 7348)
  kTunnelGeneve,  // UDP port 6081 (RFC 8926)
  kTunnelGtpu,    // UDP port 2152 (3GPP TS 29.281)
  kTunnelCount,
};

/// @brief The names of TunnelType, as --decap takes them and the report, the
/// flow export and /metrics show them.
inline constexpr const char* kTunnelNames[kTunnelCount] = {"none", "mpls", "gre", "ipip", "vxlan", "geneve", "gtpu"};

// The --decap set: bit (1u << TunnelType) for each type opened.
inline constexpr uint32_t kDecapNone = 0;
inline constexpr uint32_t kDecapAll = ((1u << kTunnelCount) - 1) & ~1u;

// What follows a tunnel header.
enum InnerKind : uint32_t { kInnerNone, kInnerEthernet, kInnerIpv4, kInnerIpv6 };

// An MPLS stack deeper than this is refused (kMplsStackTooDeep); the flow
// key keeps the top kMplsKeyLabels labels of a stack.
inline constexpr uint32_t kMplsMaxLabels = 8;
inline constexpr uint32_t kMplsKeyLabels = 3;

// What a tunnel parser found. type == kTunnelNone: not a tunnel header (or
// one of a variant that is not opened, such as PPTP's GRE version 1). With
// a reason the header is malformed or cut and nothing inside is read.
// Otherwise the inner packet (inner != kInnerNone) lies in [offset, end).
struct Tunnel {
  uint32_t type = kTunnelNone;
  uint32_t reason = kReasonNone;
  uint32_t inner = kInnerNone;
  uint32_t offset = 0;  // first byte of the inner packet
  uint32_t end = 0;     // one past its last byte the outer packet holds
  uint32_t labels = 0;  // MPLS: labels in id (1..kMplsKeyLabels)
  uint64_t id = 0;      // VNI, TEID, GRE key (0: none), or MPLS labels, 20 bits each, top of stack highest
};

namespace detail {

GNIO_HD inline Tunnel tunnel_of(uint32_t type, uint32_t reason) {
  Tunnel t;
  t.type = type;
  t.reason = reason;
  return t;
}

// The inner packet of a tunnel whose payload starts with an IP header,
// told apart by its version nibble (MPLS, GTP-U); none for another nibble
// or an empty payload.
GNIO_HD inline void inner_ip_by_version(const uint8_t* p, uint32_t offset, uint32_t end, Tunnel& t) {
  t.offset = offset;
  t.end = end;
  if (offset >= end) return;
  const uint32_t version = p[offset] >> 4;
  t.inner = version == 4 ? kInnerIpv4 : version == 6 ? kInnerIpv6 : kInnerNone;
}

// The inner packet of a tunnel whose header names it by ethertype (GRE, GENEVE).
GNIO_HD inline void inner_by_ethertype(uint16_t type, uint32_t offset, uint32_t end, Tunnel& t) {
  t.offset = offset;
  t.end = end;
  t.inner = type == 0x0800 ? kInnerIpv4 : type == 0x86DD ? kInnerIpv6 : type == 0x6558 ? kInnerEthernet : kInnerNone;
}

}  // namespace detail

}  // namespace gnio::dev::app
