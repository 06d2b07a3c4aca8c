// SPDX-License-Identifier: Apache-2.0
// MPLS (RFC 3032) on the GPU: the label stack after the Ethernet header
// (ethertype 0x8847 or 0x8848), four bytes a label (label 20 bits, traffic
// class 3, bottom of stack 1, TTL 8), then, without a payload type on the
// wire, IPv4 or IPv6 told apart by the first nibble (RFC 4928 §2); another
// payload (a pseudowire's control word) is not opened.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/tunnel.hpp"

namespace gnio::dev::app {

// The stack that starts at `begin` in a frame of `len` captured bytes.
GNIO_HD inline Tunnel mpls_tunnel(const uint8_t* p, uint32_t begin, uint32_t len) {
  Tunnel t;
  t.type = kTunnelMpls;
  uint32_t off = begin;
  for (uint32_t n = 0;; ++n) {
    if (n == kMplsMaxLabels) return detail::tunnel_of(kTunnelMpls, kMplsStackTooDeep);
    if (off + 4 > len) return detail::tunnel_of(kTunnelMpls, kMplsStackCut);
    const uint32_t word = (uint32_t{load_be16(p + off)} << 16) | load_be16(p + off + 2);
    if (n < kMplsKeyLabels) {
      t.id = (t.id << 20) | (word >> 12);
      t.labels = n + 1;
    }
    off += 4;
    if ((word >> 8) & 1u) break;
  }
  detail::inner_ip_by_version(p, off, len, t);
  return t;
}

}  // namespace gnio::dev::app
