// SPDX-License-Identifier: Apache-2.0
// GTP-U (3GPP TS 29.281), the user plane of GPRS, LTE and 5G, on the GPU: a
// GTPv1 header in a UDP datagram to port 2152 (flags with version 1 and
// protocol type 1, message type, length of what follows the first 8 bytes,
// TEID), the sequence number, N-PDU number and next extension type when
// any of E, S, PN is set, then extension headers (length in 4-byte words,
// content, next type) up to type 0. Only a G-PDU (type 255) carries a user
// packet, IPv4 or IPv6 by its first nibble; echo, error indication and end
// marker messages are counted as GTP-U and not opened. The TEID is the
// tunnel's id.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/tunnel.hpp"

namespace gnio::dev::app {

inline constexpr uint16_t kGtpuPort = 2152;
inline constexpr uint32_t kGtpuMaxExtensions = 8;

// The GTP-U header at `begin` of a UDP payload whose bytes end at `end`.
GNIO_HD inline Tunnel gtpu_tunnel(const uint8_t* p, uint32_t begin, uint32_t end) {
  if (begin + 8 > end) return detail::tunnel_of(kTunnelGtpu, kGtpuHeaderCut);
  const uint8_t flags = p[begin];
  if ((flags >> 5) != 1 || (flags & 0x10u) == 0) return detail::tunnel_of(kTunnelGtpu, kGtpuBadVersion);
  const uint32_t message_end = begin + 8 + load_be16(p + begin + 2);
  if (message_end > end) return detail::tunnel_of(kTunnelGtpu, kGtpuBadLength);
  Tunnel t;
  t.type = kTunnelGtpu;
  t.id = (uint64_t{load_be16(p + begin + 4)} << 16) | load_be16(p + begin + 6);
  uint32_t off = begin + 8;
  if ((flags & 0x07u) != 0) {
    if (begin + 12 > end) return detail::tunnel_of(kTunnelGtpu, kGtpuHeaderCut);
    if (begin + 12 > message_end) return detail::tunnel_of(kTunnelGtpu, kGtpuBadLength);
    uint8_t next = (flags & 0x04u) != 0 ? p[begin + 11] : 0;
    off = begin + 12;
    for (uint32_t n = 0; next != 0; ++n) {
      if (n == kGtpuMaxExtensions || off >= message_end) return detail::tunnel_of(kTunnelGtpu, kGtpuExtLength);
      const uint32_t ext = uint32_t{p[off]} * 4;
      if (ext == 0 || off + ext > message_end) return detail::tunnel_of(kTunnelGtpu, kGtpuExtLength);
      next = p[off + ext - 1];
      off += ext;
    }
  }
  if (p[begin + 1] == 0xFF) detail::inner_ip_by_version(p, off, message_end, t);
  return t;
}

}  // namespace gnio::dev::app
