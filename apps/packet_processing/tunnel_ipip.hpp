// SPDX-License-Identifier: Apache-2.0
// IP in IP on the GPU: IPv4 (protocol 4, RFC 2003) or IPv6 (protocol 41,
// RFC 4213 and RFC 2473) right after an IPv4 or IPv6 header, with no
// tunnel header of its own and no id; `ip link` types ipip, sit and
// ip6tnl. A fragment of the outer packet is not opened: its inner packet
// is not whole.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/tunnel.hpp"

namespace gnio::dev::app {

// The IP packet inside the whole, unfragmented outer IP packet `pp` of protocol 4 or 41.
GNIO_HD inline Tunnel ipip_tunnel(const ParsedPacket& pp) {
  Tunnel t;
  t.type = kTunnelIpip;
  t.inner = pp.l4_proto == 4 ? kInnerIpv4 : kInnerIpv6;
  t.offset = pp.l4_offset;
  t.end = pp.l3_end;
  return t;
}

}  // namespace gnio::dev::app
