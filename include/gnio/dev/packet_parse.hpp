// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Packet parsing for device and host code: the flags of a frame,
/// its header offsets (parse_packet()) and big-endian field access.
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

/// @brief Parses the IP packet at `p + off`, as parse_packet() parses the
/// IP part of a frame: IPv4 (with options) or IPv6 (with up to eight
/// extension headers), then UDP, TCP, ICMP or ICMPv6. For a packet that
/// comes with no Ethernet header of its own (a tunnel's payload); offsets
/// in `out` count from `p`.
/// @param p The buffer the offsets count from.
/// @param off The IP header's offset in it.
/// @param len Bytes of the buffer that were captured (from `p`).
/// @param ethertype 0x0800 (IPv4) or 0x86DD (IPv6); any other leaves `out`
///        as it is and returns true.
/// @param out Its ethertype, l3_offset, flags and the L4 fields are set;
///        the flags found before (L2, VLAN) are kept.
/// @return As parse_packet().
GNIO_HD inline bool parse_ip(const uint8_t* p, uint32_t off, uint32_t len, uint16_t ethertype, ParsedPacket& out) {
  auto cut = [&out]() {
    out.flags |= bit(PacketFlags::Truncated);
    return false;
  };
  auto malformed = [&out]() {
    out.flags |= bit(PacketFlags::Malformed);
    return false;
  };
  out.ethertype = ethertype;
  out.l3_offset = static_cast<uint16_t>(off);

  if (ethertype == detail::kEtherIpv4) {
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

  if (ethertype == detail::kEtherIpv6) {
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
  if (len < 14) {
    out.flags |= bit(PacketFlags::Truncated);
    return false;
  }
  out.flags = bit(PacketFlags::L2Ether);
  uint32_t off = 12;
  uint16_t type = detail::load16(p + off);
  while ((type == detail::kEtherVlan || type == detail::kEtherQinq) && out.vlan_count < 2) {
    if (len < off + 6) {
      out.flags |= bit(PacketFlags::Truncated);
      return false;
    }
    out.flags |= bit(PacketFlags::Vlan);
    out.vlan_tci[out.vlan_count++] = detail::load16(p + off + 2);
    off += 4;
    type = detail::load16(p + off);
  }
  off += 2;
  out.ethertype = type;
  out.l3_offset = static_cast<uint16_t>(off);
  return parse_ip(p, off, len, type, out);
}

/// @brief Reads a 16-bit header field stored big-endian (network order).
/// @param p The field's first byte, at any alignment.
/// @return The field's value in host order.
GNIO_HD inline uint16_t load_be16(const uint8_t* p) { return detail::load16(p); }

/// @brief Writes a 16-bit header field big-endian (network order).
/// @param p The field's first byte, at any alignment.
/// @param v The value, in host order.
GNIO_HD inline void store_be16(uint8_t* p, uint16_t v) { detail::store16(p, v); }

}  // namespace gnio::dev
