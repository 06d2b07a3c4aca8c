// SPDX-License-Identifier: Apache-2.0
// The per-packet work of the reference application, shared by the kernel
// and the host-side verification so both count the same way.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/headers.hpp"

namespace gnio::examples {

struct TrafficCounters {
  uint64_t packets, bytes;
  uint64_t ipv4, ipv6, udp, tcp, icmp, other;
  uint64_t dns;            // UDP to or from port 53
  uint64_t http;           // TCP to or from port 80/8080 whose payload starts like HTTP/1.x
  uint64_t echo_requests;  // ICMP / ICMPv6 echo requests to answer (answered when TX is on)
  uint64_t l3_csum_bad, l4_csum_bad;
  uint64_t l4_csum_partial;  // UDP/TCP checksums left for the NIC to finish (loopback, veth captures)
  uint64_t echo_refused;     // echo requests not answered: behind an IPv6 routing header, or cut by the capture
  uint64_t malformed;        // headers that contradict themselves (dev::PacketFlags::Malformed)

  GNIO_HD void add(const TrafficCounters& o) {
    uint64_t* d = &packets;
    const uint64_t* s = &o.packets;
    for (int i = 0; i < kFields; ++i) d[i] += s[i];
  }
  GNIO_HD void publish_to(TrafficCounters* shared) const {
    const uint64_t* s = &packets;
    uint64_t* d = &shared->packets;
    for (int i = 0; i < kFields; ++i) dev::fetch_add_relaxed(&d[i], s[i]);
  }
  static constexpr int kFields = 16;
};

GNIO_HD inline uint16_t port_at(const uint8_t* p, uint32_t off) {
  return static_cast<uint16_t>((p[off] << 8) | p[off + 1]);
}

GNIO_HD inline bool looks_like_http(const uint8_t* p, uint32_t len) {
  const char* starts[] = {"GET ", "POST", "HEAD", "PUT ", "HTTP"};
  if (len < 4) return false;
  for (const char* s : starts)
    if (p[0] == s[0] && p[1] == s[1] && p[2] == s[2] && p[3] == s[3]) return true;
  return false;
}

// Counts one packet; returns true when it is an echo request to answer
// (dev::swap_addresses() then makes the reply). Reads only the headers the
// parser found whole and payload bytes before the IP datagram's end.
GNIO_HD inline bool account(const uint8_t* p, uint32_t len, TrafficCounters& c) {
  ++c.packets;
  c.bytes += len;
  dev::ParsedPacket pp;
  const bool whole = dev::parse_packet(p, len, pp);
  const uint32_t flags = dev::checksum_state(p, pp);
  if (dev::has_flag(flags, dev::PacketFlags::L3Ipv4)) ++c.ipv4;
  if (dev::has_flag(flags, dev::PacketFlags::L3Ipv6)) ++c.ipv6;
  if (dev::has_flag(flags, dev::PacketFlags::L3CsumBad)) ++c.l3_csum_bad;
  if (dev::has_flag(flags, dev::PacketFlags::L4CsumBad)) ++c.l4_csum_bad;
  if (dev::has_flag(flags, dev::PacketFlags::L4CsumPartial)) ++c.l4_csum_partial;
  if (dev::has_flag(flags, dev::PacketFlags::Malformed)) ++c.malformed;
  // The L4 header is whole (and not that of a later fragment) exactly when
  // the parser moved the payload past it.
  const bool l4_header = pp.payload_offset > pp.l4_offset;
  const bool fragment = dev::has_flag(flags, dev::PacketFlags::Fragment);
  if (dev::has_flag(flags, dev::PacketFlags::L4Udp)) {
    ++c.udp;
    if (!fragment && l4_header && (port_at(p, pp.l4_offset) == 53 || port_at(p, pp.l4_offset + 2) == 53)) ++c.dns;
  } else if (dev::has_flag(flags, dev::PacketFlags::L4Tcp)) {
    ++c.tcp;
    if (!fragment && l4_header && pp.payload_offset < pp.l3_end) {
      const uint16_t sp = port_at(p, pp.l4_offset), dp = port_at(p, pp.l4_offset + 2);
      const bool web = sp == 80 || dp == 80 || sp == 8080 || dp == 8080;
      if (web && looks_like_http(p + pp.payload_offset, pp.l3_end - pp.payload_offset)) ++c.http;
    }
  } else if (dev::has_flag(flags, dev::PacketFlags::L4Icmp) || dev::has_flag(flags, dev::PacketFlags::L4Icmpv6)) {
    ++c.icmp;
    const bool v6 = dev::has_flag(flags, dev::PacketFlags::L4Icmpv6);
    if (!fragment && l4_header && p[pp.l4_offset] == (v6 ? 128 : 8)) {
      // swap_addresses() answers exactly the whole requests without a routing header.
      if (whole && pp.routing_offset == 0) {
        ++c.echo_requests;
        return true;
      }
      ++c.echo_refused;
    }
  } else {
    ++c.other;
  }
  return false;
}

}  // namespace gnio::examples
