// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief The RSS hash of a frame as a NIC computes it: the Toeplitz hash,
/// the default key and the bytes a NIC hashes.
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

#include <cstdint>

#include "gnio/dev/packet_parse.hpp"

namespace gnio::dev {

/// @brief The Toeplitz hash (the Microsoft RSS algorithm) of `n` input bytes.
/// @param key The hash key, e.g. rss_default_key().bytes.
/// @param key_len Bytes of the key, at least 4 and at least `n` + 4 for
///        the standard result (missing key bits count as zero).
/// @param in The input, e.g. from rss_input().
/// @param n Bytes of input.
/// @return The 32-bit hash.
GNIO_HD inline uint32_t toeplitz_hash(const uint8_t* key, uint32_t key_len, const uint8_t* in, uint32_t n) {
  uint32_t hash = 0;
  // The 32-bit key window that lines up with the current input bit.
  uint32_t window = detail::load32(key);
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t next_key = i + 4 < key_len ? key[i + 4] : 0;
    for (int b = 7; b >= 0; --b) {
      if ((in[i] >> b) & 1) hash ^= window;
      window = (window << 1) | ((next_key >> b) & 1);
    }
  }
  return hash;
}

/// @brief A 40-byte RSS hash key.
struct RssKey {
  uint8_t bytes[40];  ///< The key bytes, in the order the hash consumes them.
};
/// @brief The common default RSS key (Microsoft RSS specification), as
///        NICs use it without configuration.
/// @return The key.
GNIO_HD constexpr RssKey rss_default_key() {
  return {{0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
           0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
           0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa}};
}

/// @brief The longest RSS input in bytes: IPv6 source and destination, two ports.
inline constexpr uint32_t kRssMaxInput = 36;

/// @brief The bytes a NIC hashes for RSS: source address, destination
/// address and, for whole UDP or TCP headers outside fragments, source and
/// destination port; the addresses only for other IP packets and all
/// fragments.
///
/// Reads only what parse_packet() found whole.
/// @param p The frame.
/// @param pp What parse_packet() found in it.
/// @param in Receives the input bytes, in frame order.
/// @return Bytes written to `in`: 12 or 8 for IPv4, 36 or 32 for IPv6; 0
///         for non-IP packets and those whose IP header is cut or malformed.
GNIO_HD inline uint32_t rss_input(const uint8_t* p, const ParsedPacket& pp, uint8_t (&in)[kRssMaxInput]) {
  if (pp.l3_end == 0) return 0;
  uint32_t n = 0;
  if (has_flag(pp.flags, PacketFlags::L3Ipv4)) {
    for (uint32_t i = 0; i < 8; ++i) in[n++] = p[pp.l3_offset + 12 + i];
  } else {
    for (uint32_t i = 0; i < 32; ++i) in[n++] = p[pp.l3_offset + 8 + i];
  }
  constexpr uint32_t kPorts = bit(PacketFlags::L4Udp) | bit(PacketFlags::L4Tcp);
  const bool header = pp.payload_offset > pp.l4_offset;
  if ((pp.flags & kPorts) != 0 && header && !has_flag(pp.flags, PacketFlags::Fragment)) {
    for (uint32_t i = 0; i < 4; ++i) in[n++] = p[pp.l4_offset + i];
  }
  return n;
}

/// @brief The RSS hash of a frame as a NIC computes it with the default
/// key: toeplitz_hash() of rss_input() under rss_default_key().
/// @param p The frame.
/// @param len Bytes of the frame that were captured.
/// @return The hash; 0 for non-IP, cut or malformed frames.
GNIO_HD inline uint32_t rss_hash(const uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  if (!parse_packet(p, len, pp)) return 0;
  uint8_t in[kRssMaxInput];
  const uint32_t n = rss_input(p, pp, in);
  if (n == 0) return 0;
  const RssKey key = rss_default_key();
  return toeplitz_hash(key.bytes, sizeof(key.bytes), in, n);
}

}  // namespace gnio::dev
