// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Internet checksums for device and host code: the ones' complement
/// sum, the pseudo-header, the checksum state of a frame (classify()) and
/// their in-place update.
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

namespace detail {

// Four bytes in memory order as a little-endian word, at any alignment.
GNIO_HD inline uint32_t load32_le(const uint8_t* p) {
#if GNIO_DEVICE_PASS
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
#else
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
#endif
}

GNIO_HD inline uint32_t fold16(uint64_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint32_t>(sum);
}

}  // namespace detail

/// @brief The 16-bit ones' complement sum (RFC 1071) of `len` bytes read as
/// big-endian words, not inverted.
///
/// It sums little-endian 32-bit words and swaps the folded result: the
/// ones' complement sum does not depend on byte order (RFC 1071, 2(B)), and
/// wide words let the compiler vectorise the loop. Needs a little-endian
/// machine (checked at compile time).
/// @param p The bytes, at any alignment.
/// @param len Bytes to sum; an odd last byte is padded with zero.
/// @param initial An earlier partial sum (folded, or unfolded up to 32
///        bits) to add, e.g. pseudo_header_sum().
/// @return The folded sum, 0..0xFFFF (0xFFFF when a checksummed region is right).
GNIO_HD inline uint16_t ones_complement_sum(const uint8_t* p, uint32_t len, uint32_t initial = 0) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the word-wise sum assumes a little-endian machine");
  uint64_t le = 0;
  uint32_t i = 0;
  for (; i + 4 <= len; i += 4) le += detail::load32_le(p + i);
  for (; i + 2 <= len; i += 2) le += static_cast<uint32_t>(p[i]) | (static_cast<uint32_t>(p[i + 1]) << 8);
  if (i < len) le += p[i];
  const uint32_t folded = detail::fold16(le);
  const uint32_t be = ((folded & 0xFF) << 8) | (folded >> 8);
  return static_cast<uint16_t>(detail::fold16(static_cast<uint64_t>(be) + initial));
}

/// @brief The Internet checksum: the inverted ones' complement sum.
/// @param p The bytes; the checksum field among them must be zero.
/// @param len Bytes to sum.
/// @param initial An earlier partial sum to add (see ones_complement_sum()).
/// @return The checksum, ready to store big-endian in the field.
GNIO_HD inline uint16_t internet_checksum(const uint8_t* p, uint32_t len, uint32_t initial = 0) {
  return static_cast<uint16_t>(~ones_complement_sum(p, len, initial));
}

namespace detail {

// The bytes the L4 checksum covers, which the pseudo-header counts: the UDP
// length field for UDP (RFC 768; bytes after it are not UDP's), the rest
// of the IP datagram otherwise.
GNIO_HD inline uint32_t l4_length(const uint8_t* p, const ParsedPacket& pp) {
  if (has_flag(pp.flags, PacketFlags::L4Udp)) return load16(p + pp.l4_offset + 4);
  return pp.l3_end - pp.l4_offset;
}

}  // namespace detail

/// @brief The folded sum of the TCP/UDP/ICMPv6 pseudo-header: addresses,
/// protocol and L4 length (the UDP length field for UDP, the rest of the
/// IP datagram otherwise). ICMPv4 has no pseudo-header.
/// @param p The frame.
/// @param pp What parse_packet() found in it: a whole IPv4 or IPv6 packet
///        with a whole L4 header.
/// @return The folded sum, to pass as `initial` to ones_complement_sum().
GNIO_HD inline uint16_t pseudo_header_sum(const uint8_t* p, const ParsedPacket& pp) {
  const uint32_t l4_len = detail::l4_length(p, pp);
  const uint32_t sum = static_cast<uint32_t>(pp.l4_proto) + (l4_len & 0xFFFF) + (l4_len >> 16);
  if (has_flag(pp.flags, PacketFlags::L3Ipv4)) {
    return ones_complement_sum(p + pp.l3_offset + 12, 8, sum);
  }
  return ones_complement_sum(p + pp.l3_offset + 8, 32, sum);
}

namespace detail {

// Whether the L4 checksum of a parsed packet can be checked or written: a
// whole, well-formed UDP/TCP/ICMP/ICMPv6 datagram, not a fragment, and not
// on its way along an IPv6 routing header (segments left > 0: the
// pseudo-header would need the final destination, RFC 8200 8.1).
GNIO_HD inline bool l4_checksummed(const uint8_t* p, const ParsedPacket& pp) {
  constexpr uint32_t kL4 = bit(PacketFlags::L4Udp) | bit(PacketFlags::L4Tcp) |
                           bit(PacketFlags::L4Icmp) | bit(PacketFlags::L4Icmpv6);
  constexpr uint32_t kNot = bit(PacketFlags::Fragment) | bit(PacketFlags::Truncated) | bit(PacketFlags::Malformed);
  if ((pp.flags & kL4) == 0 || (pp.flags & kNot) != 0) return false;
  return pp.routing_offset == 0 || p[pp.routing_offset + 3] == 0;
}

GNIO_HD inline uint32_t l4_checksum_field(const ParsedPacket& pp) {
  return pp.l4_offset + (has_flag(pp.flags, PacketFlags::L4Udp) ? 6u
                         : has_flag(pp.flags, PacketFlags::L4Tcp) ? 16u
                                                                  : 2u);
}

GNIO_HD inline uint32_t l4_initial_sum(const uint8_t* p, const ParsedPacket& pp) {
  return has_flag(pp.flags, PacketFlags::L4Icmp) ? 0u : pseudo_header_sum(p, pp);
}

// Whether the IPv4 header of a parsed packet is whole and well-formed, so
// that its checksum can be checked or written.
GNIO_HD inline bool l3_checksummed(const ParsedPacket& pp) {
  return has_flag(pp.flags, PacketFlags::L3Ipv4) && pp.l3_end != 0;
}

GNIO_HD inline uint32_t ipv4_header_length(const uint8_t* p, const ParsedPacket& pp) {
  return static_cast<uint32_t>(p[pp.l3_offset] & 0x0F) * 4;
}

}  // namespace detail

/// @brief The flags of a parsed packet plus its checksum state.
///
/// - L3 (IPv4 only): L3CsumGood or L3CsumBad whenever the IPv4 header is
///   whole and well-formed, even if the capture cut the datagram or an L4
///   header is cut or malformed; neither otherwise, and never for IPv6.
/// - L4 (UDP, TCP, ICMP; UDP, TCP, ICMPv6 with the pseudo-header): exactly
///   one of L4CsumGood, L4CsumPartial (UDP/TCP whose field holds only the
///   pseudo-header sum, left for the NIC to finish) and L4CsumBad for a
///   whole, well-formed datagram; none for fragments, cut or malformed
///   packets, packets still on their way along an IPv6 routing header
///   (segments left > 0), and IPv4 UDP with a zero checksum field (RFC 768:
///   no checksum computed).
/// @param p The frame.
/// @param pp What parse_packet() found in it (whatever it returned).
/// @param l4_sum Optional: ones_complement_sum() of the bytes the L4
///        checksum covers (from pp.l4_offset: the UDP length for UDP, to
///        pp.l3_end otherwise) without the pseudo-header, summed elsewhere
///        (a warp sums its packets' bytes together); nullptr: summed here.
/// @return pp.flags with the checksum bits added.
GNIO_HD inline uint32_t checksum_state(const uint8_t* p, const ParsedPacket& pp, const uint16_t* l4_sum = nullptr) {
  uint32_t flags = pp.flags;
  if (detail::l3_checksummed(pp)) {
    const bool good = ones_complement_sum(p + pp.l3_offset, detail::ipv4_header_length(p, pp)) == 0xFFFF;
    flags |= bit(good ? PacketFlags::L3CsumGood : PacketFlags::L3CsumBad);
  }
  if (!detail::l4_checksummed(p, pp)) return flags;
  const uint32_t field = detail::l4_checksum_field(pp);
  const uint16_t stored = detail::load16(p + field);
  const bool udp = has_flag(flags, PacketFlags::L4Udp);
  if (udp && has_flag(flags, PacketFlags::L3Ipv4) && stored == 0) return flags;
  const uint16_t pseudo = detail::l4_initial_sum(p, pp);
  const uint32_t sum = l4_sum != nullptr ? detail::fold16(uint64_t{*l4_sum} + pseudo)
                                         : ones_complement_sum(p + pp.l4_offset, detail::l4_length(p, pp), pseudo);
  if (sum == 0xFFFF) {
    return flags | bit(PacketFlags::L4CsumGood);
  }
  const bool offloadable = udp || has_flag(flags, PacketFlags::L4Tcp);
  return flags | bit(offloadable && stored == pseudo ? PacketFlags::L4CsumPartial : PacketFlags::L4CsumBad);
}

/// @brief parse_packet() plus checksum_state(): the PacketFlags of a frame.
/// @param p The frame.
/// @param len Bytes of the frame that were captured.
/// @return The PacketFlags bits, checksum state included.
GNIO_HD inline uint32_t classify(const uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  parse_packet(p, len, pp);
  return checksum_state(p, pp);
}

namespace detail {

// The transforms' answer for a packet that parse_packet() refused.
GNIO_HD inline HeaderStatus refusal(const ParsedPacket& pp) {
  return has_flag(pp.flags, PacketFlags::Malformed) ? HeaderStatus::Malformed : HeaderStatus::Truncated;
}

}  // namespace detail

/// @brief Recomputes, in place, the IPv4 header checksum and the L4
/// checksum (UDP, TCP, ICMP, ICMPv6) wherever classify() would check them.
///
/// A UDP checksum that computes to 0 is written as 0xFFFF (a zero field
/// means "no checksum").
/// @param p The frame, modified in place.
/// @param len Bytes of the frame.
/// @return Ok; Truncated or Malformed for a cut or malformed packet and
///         Unsupported for a non-IP frame, each left unchanged.
GNIO_HD inline HeaderStatus update_checksums(uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  if (!parse_packet(p, len, pp)) return detail::refusal(pp);
  if (!has_flag(pp.flags, PacketFlags::L3Ipv4) && !has_flag(pp.flags, PacketFlags::L3Ipv6)) {
    return HeaderStatus::Unsupported;
  }
  if (has_flag(pp.flags, PacketFlags::L3Ipv4)) {
    detail::store16(p + pp.l3_offset + 10, 0);
    detail::store16(p + pp.l3_offset + 10, internet_checksum(p + pp.l3_offset, detail::ipv4_header_length(p, pp)));
  }
  if (!detail::l4_checksummed(p, pp)) return HeaderStatus::Ok;
  const uint32_t field = detail::l4_checksum_field(pp);
  detail::store16(p + field, 0);
  uint16_t c = internet_checksum(p + pp.l4_offset, detail::l4_length(p, pp), detail::l4_initial_sum(p, pp));
  // UDP sends a computed 0 as 0xFFFF: a zero field means "no checksum".
  if (c == 0 && has_flag(pp.flags, PacketFlags::L4Udp)) c = 0xFFFF;
  detail::store16(p + field, c);
  return HeaderStatus::Ok;
}

/// @brief Folds a sum of 16-bit words into 16 bits by end-around carry, the
/// last step of the ones' complement sum (RFC 1071), for code that adds the
/// words itself (a sum split over the lanes of a warp).
/// @param sum The words added up, carries not yet folded.
/// @return The folded sum, 0..0xFFFF, not inverted.
GNIO_HD inline uint32_t fold_ones_complement(uint64_t sum) { return detail::fold16(sum); }

/// @brief The bytes the L4 checksum of a parsed packet covers and its
/// pseudo-header counts: the UDP length field for UDP (RFC 768; bytes after
/// it are not UDP's), the rest of the IP datagram otherwise.
/// @param p The frame.
/// @param pp What parse_packet() found in it, with a whole L4 header.
/// @return The length from the first byte of the L4 header.
GNIO_HD inline uint32_t l4_checksum_length(const uint8_t* p, const ParsedPacket& pp) {
  return detail::l4_length(p, pp);
}

/// @brief Whether the L4 checksum of a parsed packet can be checked or
/// written: a whole, well-formed UDP, TCP, ICMP or ICMPv6 datagram, not a
/// fragment, and not on its way along an IPv6 routing header with segments
/// left (the pseudo-header would need the final destination, RFC 8200 8.1).
/// @param p The frame.
/// @param pp What parse_packet() found in it.
/// @return True when the checksum over l4_checksum_length() bytes from the
///         L4 header means something.
GNIO_HD inline bool l4_checksum_applies(const uint8_t* p, const ParsedPacket& pp) {
  return detail::l4_checksummed(p, pp);
}

}  // namespace gnio::dev
