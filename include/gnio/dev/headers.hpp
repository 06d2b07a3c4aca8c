// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Packet header helpers for device and host code: parse, classify
/// (with checksum state), checksum update, RSS hash and the echo transform.
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

#include "gnio/dev/config.hpp"

namespace gnio::dev {

/// @brief Bits of ParsedPacket::flags and of the RX descriptor flags
/// (dev::Packet::flags()), as classify() and the NIC engine's RX offloads
/// set them. Combine with bit(), test with has_flag().
enum class PacketFlags : uint32_t {
  None = 0,              ///< No bit.
  L2Ether = 1u << 0,     ///< An Ethernet header (14 bytes) is whole.
  Vlan = 1u << 1,        ///< At least one 802.1Q / 802.1ad tag.
  L3Ipv4 = 1u << 2,      ///< Ethertype IPv4 (after the VLAN tags).
  L3Ipv6 = 1u << 3,      ///< Ethertype IPv6 (after the VLAN tags).
  L4Udp = 1u << 4,       ///< The IP payload is UDP.
  L4Tcp = 1u << 5,       ///< The IP payload is TCP.
  L4Icmp = 1u << 6,      ///< The IP payload is ICMP (IPv4).
  L4Icmpv6 = 1u << 7,    ///< The IP payload is ICMPv6.
  L4Other = 1u << 8,     ///< An IP payload of another protocol (ESP, SCTP, ...).
  L3CsumGood = 1u << 9,  ///< The IPv4 header checksum is right.
  L3CsumBad = 1u << 10,  ///< The IPv4 header checksum is wrong.
  L4CsumGood = 1u << 11, ///< The UDP/TCP/ICMP/ICMPv6 checksum is right.
  L4CsumBad = 1u << 12,  ///< The UDP/TCP/ICMP/ICMPv6 checksum is wrong.
  Fragment = 1u << 13,   ///< An IPv4 or IPv6 fragment; its L4 checksum is not checked.
  Truncated = 1u << 14,  ///< The capture holds fewer bytes than a header or the IP datagram claims.
  /// Set by the NIC engine: the frame was longer than the queue's max
  /// packet size and was cut to it.
  FrameTruncated = 1u << 15,
  /// Set by the NIC engine: the Ethernet header was made up (the capture
  /// had Linux cooked, BSD loopback or raw IP framing).
  SyntheticL2 = 1u << 16,
  /// Checksum state, continued: the L4 checksum field holds only the
  /// pseudo-header sum, left for the NIC to finish (loopback, veth captures).
  L4CsumPartial = 1u << 17,
  /// The bytes contradict themselves, whatever the capture kept: a wrong IP
  /// version, an IPv4 header length under 20 or over the total length, an
  /// L4 header that does not fit in its IP datagram, a TCP data offset under
  /// 5, a UDP length under 8 or over the IP payload, an ICMP / ICMPv6
  /// message under 8 bytes.
  Malformed = 1u << 18,
};

/// @brief The bit of one flag, to combine flags into a mask.
/// @param f The flag.
/// @return Its bit as an unsigned word.
GNIO_HD constexpr uint32_t bit(PacketFlags f) { return static_cast<uint32_t>(f); }
/// @brief Whether a flag word has a flag set.
/// @param flags A word of PacketFlags bits (ParsedPacket::flags, a descriptor's flags).
/// @param f The flag to test.
/// @return True when the bit of `f` is set in `flags`.
GNIO_HD constexpr bool has_flag(uint32_t flags, PacketFlags f) { return (flags & bit(f)) != 0; }

/// @brief The result of the in-place header transforms (update_checksums(),
/// swap_addresses()).
enum class HeaderStatus : int32_t {
  Ok = 0,           ///< The transform was applied.
  Truncated = 1,    ///< The capture holds fewer bytes than the headers say: left unchanged.
  Unsupported = 2,  ///< Not an IPv4/IPv6 frame, or one the transform cannot make right: left unchanged.
  Malformed = 3,    ///< A header contradicts itself (PacketFlags::Malformed): left unchanged.
};

/// @brief What parse_packet() found in a frame: flags and header offsets.
///
/// All offsets count bytes from the start of the frame.
struct ParsedPacket {
  uint32_t flags = 0;            ///< PacketFlags bits.
  uint16_t l3_offset = 0;        ///< First byte of the IP header (after the VLAN tags).
  uint16_t l4_offset = 0;        ///< First byte of the L4 header (after IPv6 extension headers).
  uint16_t payload_offset = 0;   ///< First byte after the L4 header; l4_offset while that header is not whole.
  uint16_t ethertype = 0;        ///< The ethertype after the VLAN tags.
  uint16_t vlan_tci[2] = {0, 0}; ///< Tag control information of the outer and inner VLAN tag.
  uint8_t vlan_count = 0;        ///< VLAN tags parsed, 0..2.
  uint8_t l4_proto = 0;          ///< IP protocol / IPv6 next header of the L4 header.
  uint16_t routing_offset = 0;   ///< First byte of the IPv6 routing header; 0: none.
  /// One past the last byte of the IP datagram that the frame holds: the
  /// datagram's own end (Ethernet padding excluded), or the frame's end when
  /// the capture cut the datagram (then Truncated). 0 while the IP header
  /// itself is cut or malformed. Every read past the IP header stops here.
  uint32_t l3_end = 0;
};

namespace detail {

GNIO_HD inline uint16_t load16(const uint8_t* p) {
  return static_cast<uint16_t>((static_cast<uint32_t>(p[0]) << 8) | p[1]);
}
GNIO_HD inline uint32_t load32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | p[3];
}
GNIO_HD inline void store16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
GNIO_HD inline void swap_bytes(uint8_t* a, uint8_t* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t t = a[i];
    a[i] = b[i];
    b[i] = t;
  }
}

constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint16_t kEtherIpv6 = 0x86DD;
constexpr uint16_t kEtherVlan = 0x8100;
constexpr uint16_t kEtherQinq = 0x88A8;
constexpr uint8_t kProtoIcmp = 1;
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoUdp = 17;
constexpr uint8_t kProtoIcmpv6 = 58;
constexpr uint8_t kIpv6Routing = 43;
constexpr uint8_t kIpv6Fragment = 44;

// The bytes an IP header may read past its start: the frame holds those up
// to `held` (the datagram's end, or the capture's where it cut the
// datagram); the datagram itself claims those up to `claimed`.
struct Bounds {
  uint32_t held;
  uint32_t claimed;
};

// Whether `need` bytes from `off` are readable. If not, flags why: the
// datagram is too short for them (Malformed) or the capture cut them
// (Truncated).
GNIO_HD inline bool fits(uint32_t off, uint32_t need, Bounds b, ParsedPacket& out) {
  if (off + need <= b.held) return true;
  out.flags |= bit(off + need > b.claimed ? PacketFlags::Malformed : PacketFlags::Truncated);
  return false;
}

// Fills the L4 part of `out` for the header of protocol `proto` at `off`.
// False if the header is cut or malformed (flagged as such).
GNIO_HD inline bool parse_l4(const uint8_t* p, uint32_t off, Bounds b, uint8_t proto, ParsedPacket& out) {
  out.l4_proto = proto;
  out.l4_offset = static_cast<uint16_t>(off);
  out.payload_offset = static_cast<uint16_t>(off);
  uint32_t hlen = 8;
  switch (proto) {
    case kProtoUdp: {
      out.flags |= bit(PacketFlags::L4Udp);
      if (!fits(off, 8, b, out)) return false;
      // RFC 768: the UDP length covers header and data and must fit in the
      // IP payload (bytes after it are not UDP's); in a first fragment it
      // is the length of the whole, reassembled datagram.
      const uint32_t udp_len = load16(p + off + 4);
      const bool fragment = has_flag(out.flags, PacketFlags::Fragment);
      if (udp_len < 8 || (!fragment && off + udp_len > b.claimed)) {
        out.flags |= bit(PacketFlags::Malformed);
        return false;
      }
      break;
    }
    case kProtoTcp:
      out.flags |= bit(PacketFlags::L4Tcp);
      if (!fits(off, 20, b, out)) return false;
      hlen = static_cast<uint32_t>(p[off + 12] >> 4) * 4;
      if (hlen < 20) {
        out.flags |= bit(PacketFlags::Malformed);
        return false;
      }
      if (!fits(off, hlen, b, out)) return false;
      break;
    case kProtoIcmp:
    case kProtoIcmpv6:
      // Every ICMP and ICMPv6 message has 8 header bytes (type, code,
      // checksum and 4 bytes of the message, e.g. an echo's id and sequence).
      out.flags |= bit(proto == kProtoIcmp ? PacketFlags::L4Icmp : PacketFlags::L4Icmpv6);
      if (!fits(off, 8, b, out)) return false;
      break;
    default:
      out.flags |= bit(PacketFlags::L4Other);
      return true;
  }
  out.payload_offset = static_cast<uint16_t>(off + hlen);
  return true;
}

// The end of an IP datagram that starts at `off` and claims `claimed` bytes:
// `out.l3_end`, cut to the frame's `len` (then flagged Truncated).
GNIO_HD inline Bounds datagram_bounds(uint32_t off, uint32_t claimed, uint32_t len, ParsedPacket& out) {
  const Bounds b{off + claimed < len ? off + claimed : len, off + claimed};
  if (b.held < b.claimed) out.flags |= bit(PacketFlags::Truncated);
  out.l3_end = b.held;
  return b;
}

// The result of a parse that reached its last header: true unless the
// capture cut the datagram.
GNIO_HD inline bool whole(const ParsedPacket& out) { return !has_flag(out.flags, PacketFlags::Truncated); }

}  // namespace detail

/// @brief Parses Ethernet, up to two VLAN tags, IPv4 (with options) or
/// IPv6 (with up to eight hop-by-hop, routing, destination-options and
/// fragment headers), then UDP, TCP, ICMP or ICMPv6.
///
/// A frame of another ethertype, or with a third VLAN tag, parses as L2
/// only and returns true. Non-first fragments carry no L4 header: they get
/// Fragment and no L4 flag.
/// @param p The frame, starting at the Ethernet header.
/// @param len Bytes of the frame that were captured.
/// @param out Overwritten with the flags and offsets found. After a false
///        return the headers that are whole are parsed and their offsets set.
/// @return True for a whole, well-formed packet. False when the capture cut
///         a header or the IP datagram (flags then hold what was recognised
///         plus Truncated) or when a header is malformed (flags hold what
///         was recognised plus Malformed).
GNIO_HD inline bool parse_packet(const uint8_t* p, uint32_t len, ParsedPacket& out) {
  out = ParsedPacket{};
  auto cut = [&out]() {
    out.flags |= bit(PacketFlags::Truncated);
    return false;
  };
  auto malformed = [&out]() {
    out.flags |= bit(PacketFlags::Malformed);
    return false;
  };
  if (len < 14) return cut();
  out.flags = bit(PacketFlags::L2Ether);
  uint32_t off = 12;
  uint16_t type = detail::load16(p + off);
  while ((type == detail::kEtherVlan || type == detail::kEtherQinq) && out.vlan_count < 2) {
    if (len < off + 6) return cut();
    out.flags |= bit(PacketFlags::Vlan);
    out.vlan_tci[out.vlan_count++] = detail::load16(p + off + 2);
    off += 4;
    type = detail::load16(p + off);
  }
  off += 2;
  out.ethertype = type;
  out.l3_offset = static_cast<uint16_t>(off);

  if (type == detail::kEtherIpv4) {
    out.flags |= bit(PacketFlags::L3Ipv4);
    if (len < off + 20) return cut();
    const uint32_t ihl = static_cast<uint32_t>(p[off] & 0x0F) * 4;
    const uint32_t total = detail::load16(p + off + 2);
    if ((p[off] >> 4) != 4 || ihl < 20 || total < ihl) return malformed();
    if (len < off + ihl) return cut();
    const detail::Bounds b = detail::datagram_bounds(off, total, len, out);
    const uint16_t frag = detail::load16(p + off + 6);
    const bool more = (frag & 0x2000) != 0;
    const uint16_t frag_off = frag & 0x1FFF;
    if (more || frag_off != 0) out.flags |= bit(PacketFlags::Fragment);
    const uint8_t proto = p[off + 9];
    if (frag_off != 0) {
      out.l4_proto = proto;
      out.l4_offset = out.payload_offset = static_cast<uint16_t>(off + ihl);
      return detail::whole(out);
    }
    return detail::parse_l4(p, off + ihl, b, proto, out) && detail::whole(out);
  }

  if (type == detail::kEtherIpv6) {
    out.flags |= bit(PacketFlags::L3Ipv6);
    if (len < off + 40) return cut();
    if ((p[off] >> 4) != 6) return malformed();
    const detail::Bounds b = detail::datagram_bounds(off, 40u + detail::load16(p + off + 4), len, out);
    uint8_t next = p[off + 6];
    uint32_t l4 = off + 40;
    // Extension headers: hop-by-hop (0), routing (43), fragment (44),
    // destination options (60). Each starts with (next header, length).
    for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 44 || next == 60); ++i) {
      if (!detail::fits(l4, 8, b, out)) return false;
      const uint8_t following = p[l4];
      if (next == detail::kIpv6Fragment) {
        out.flags |= bit(PacketFlags::Fragment);
        if ((detail::load16(p + l4 + 2) & 0xFFF8) != 0) {
          out.l4_proto = following;
          out.l4_offset = out.payload_offset = static_cast<uint16_t>(l4 + 8);
          return detail::whole(out);
        }
        l4 += 8;
      } else {
        const uint32_t ext = (static_cast<uint32_t>(p[l4 + 1]) + 1) * 8;
        if (!detail::fits(l4, ext, b, out)) return false;
        if (next == detail::kIpv6Routing) out.routing_offset = static_cast<uint16_t>(l4);
        l4 += ext;
      }
      next = following;
    }
    return detail::parse_l4(p, l4, b, next, out) && detail::whole(out);
  }
  return true;
}

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
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  detail::store16(icmp + 2, static_cast<uint16_t>(~sum));
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

/// @brief Reads a 16-bit header field stored big-endian (network order).
/// @param p The field's first byte, at any alignment.
/// @return The field's value in host order.
GNIO_HD inline uint16_t load_be16(const uint8_t* p) { return detail::load16(p); }

/// @brief Writes a 16-bit header field big-endian (network order).
/// @param p The field's first byte, at any alignment.
/// @param v The value, in host order.
GNIO_HD inline void store_be16(uint8_t* p, uint16_t v) { detail::store16(p, v); }

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
