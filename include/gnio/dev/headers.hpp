// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Packet header helpers for device and host code: parsing
/// (packet_parse.hpp), checksums (checksum.hpp), the RSS hash (rss.hpp),
/// and here the echo transform and a packet fingerprint.
///
/// Header-only and free of the standard library so that CUDA kernels, the
/// emulated device and the host NIC engine share one implementation; every
/// function is `__host__ __device__` and uses no shared state, so any
/// thread may call it. Every read is bounded by the captured frame length
/// and, past the IP header, by the end of the IP datagram: a short or lying
/// header yields a status, never a read of Ethernet padding, of the next
/// ring stride or past the buffer. Multi-byte header fields are big-endian
/// (network order) in the frame.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gnio/dev/checksum.hpp"
#include "gnio/dev/packet_parse.hpp"
#include "gnio/dev/rss.hpp"

namespace gnio::dev {

/// @brief The echo transform, in place: swaps Ethernet, IP and UDP/TCP
/// source and destination, and turns an ICMP / ICMPv6 echo request into an
/// echo reply.
///
/// All checksums that were valid stay valid: swapping keeps every ones'
/// complement sum, and the ICMP type change is patched incrementally
/// (RFC 1624).
/// @param p The frame, modified in place.
/// @param len Bytes of the frame.
/// @return Ok; left unchanged: Unsupported for non-IP frames and IPv6
///         packets with a routing header (a reply must neither carry the
///         request's source route back nor come from an address on it),
///         Truncated for cut packets, Malformed for malformed ones (e.g. an
///         ICMP echo request under 8 bytes).
GNIO_HD inline HeaderStatus swap_addresses(uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  if (!parse_packet(p, len, pp)) return detail::refusal(pp);
  const bool v4 = has_flag(pp.flags, PacketFlags::L3Ipv4);
  if (!v4 && !has_flag(pp.flags, PacketFlags::L3Ipv6)) return HeaderStatus::Unsupported;
  if (pp.routing_offset != 0) return HeaderStatus::Unsupported;
  detail::swap_bytes(p, p + 6, 6);
  if (v4) {
    detail::swap_bytes(p + pp.l3_offset + 12, p + pp.l3_offset + 16, 4);
  } else {
    detail::swap_bytes(p + pp.l3_offset + 8, p + pp.l3_offset + 24, 16);
  }
  if (has_flag(pp.flags, PacketFlags::L4Udp) || has_flag(pp.flags, PacketFlags::L4Tcp)) {
    detail::swap_bytes(p + pp.l4_offset, p + pp.l4_offset + 2, 2);
    return HeaderStatus::Ok;
  }
  const bool icmp4 = has_flag(pp.flags, PacketFlags::L4Icmp);
  if (!icmp4 && !has_flag(pp.flags, PacketFlags::L4Icmpv6)) return HeaderStatus::Ok;
  const uint8_t request = icmp4 ? 8 : 128;
  const uint8_t reply = icmp4 ? 0 : 129;
  uint8_t* icmp = p + pp.l4_offset;
  if (icmp[0] != request) return HeaderStatus::Ok;
  const uint16_t old_word = detail::load16(icmp);
  icmp[0] = reply;
  const uint16_t new_word = detail::load16(icmp);
  // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m').
  uint32_t sum = static_cast<uint16_t>(~detail::load16(icmp + 2));
  sum += static_cast<uint16_t>(~old_word);
  sum += new_word;
  detail::store16(icmp + 2, static_cast<uint16_t>(~detail::fold16(sum)));
  return HeaderStatus::Ok;
}

/// @brief 64-bit FNV-1a over bytes: a cheap fingerprint to compare packet
/// streams (not a cryptographic hash).
/// @param p The bytes.
/// @param len Bytes to hash.
/// @param h The state to continue from: the FNV offset basis for a new
///        hash, or the previous result to chain calls.
/// @return The updated hash.
GNIO_HD inline uint64_t fnv1a64(const uint8_t* p, size_t len, uint64_t h = 14695981039346656037ull) {
  for (size_t i = 0; i < len; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace gnio::dev
