// Packet header helpers for device and host code: parse, classify (with
// checksum state), checksum update, RSS hash and the echo transform.
// Header-only and free of the standard library so that CUDA kernels, the
// emulated device and the host NIC engine share one implementation. Every
// read is bounds-checked against the frame length: a short or lying header
// yields a status, never an out-of-bounds access.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

// Bits of ParsedPacket::flags (and of the RX descriptor flags).
enum class PacketFlags : uint32_t {
  None = 0,
  L2Ether = 1u << 0,
  Vlan = 1u << 1,       // at least one 802.1Q / 802.1ad tag
  L3Ipv4 = 1u << 2,
  L3Ipv6 = 1u << 3,
  L4Udp = 1u << 4,
  L4Tcp = 1u << 5,
  L4Icmp = 1u << 6,
  L4Icmpv6 = 1u << 7,
  L4Other = 1u << 8,    // an IP payload of another protocol (ESP, SCTP, ...)
  L3CsumGood = 1u << 9,
  L3CsumBad = 1u << 10,
  L4CsumGood = 1u << 11,
  L4CsumBad = 1u << 12,
  Fragment = 1u << 13,  // an IPv4 or IPv6 fragment; its L4 checksum is not checked
  Truncated = 1u << 14, // a header claims more bytes than the frame holds
  // Set by the NIC engine from what the backend said of the frame:
  FrameTruncated = 1u << 15,  // the frame was longer than the queue's max packet size and was cut to it
  SyntheticL2 = 1u << 16,     // the Ethernet header was made up (the capture had SLL/NULL/raw IP framing)
  // Checksum state, continued: the L4 checksum field holds only the
  // pseudo-header sum, left for the NIC to finish (loopback, veth captures).
  L4CsumPartial = 1u << 17,
};

GNIO_HD constexpr uint32_t bit(PacketFlags f) { return static_cast<uint32_t>(f); }
GNIO_HD constexpr bool has_flag(uint32_t flags, PacketFlags f) { return (flags & bit(f)) != 0; }

// Result of the in-place header transforms.
enum class HeaderStatus : int32_t {
  Ok = 0,
  Truncated = 1,    // the frame is shorter than its headers say, or a header is malformed
  Unsupported = 2,  // not an IPv4/IPv6 frame: left unchanged
};

struct ParsedPacket {
  uint32_t flags = 0;            // PacketFlags bits
  uint16_t l3_offset = 0;        // first byte of the IP header
  uint16_t l4_offset = 0;        // first byte of the L4 header (after IPv6 extension headers)
  uint16_t payload_offset = 0;   // first byte after the L4 header
  uint16_t ethertype = 0;        // after the VLAN tags
  uint16_t vlan_tci[2] = {0, 0}; // outer, inner
  uint8_t vlan_count = 0;
  uint8_t l4_proto = 0;          // IP protocol / IPv6 next header of the L4 header
  uint32_t l3_end = 0;           // one past the IP datagram (Ethernet padding excluded)
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

// Fills the L4 part of `out` for the header of protocol `proto` at `off`,
// inside an IP datagram that ends at `end`. False if the header is cut
// (then also flagged Truncated) or malformed.
GNIO_HD inline bool parse_l4(const uint8_t* p, uint32_t off, uint32_t end, uint8_t proto,
                             ParsedPacket& out) {
  auto cut = [&out]() {
    out.flags |= bit(PacketFlags::Truncated);
    return false;
  };
  out.l4_proto = proto;
  out.l4_offset = static_cast<uint16_t>(off);
  out.payload_offset = static_cast<uint16_t>(off);
  uint32_t avail = end - off;
  switch (proto) {
    case kProtoUdp:
      out.flags |= bit(PacketFlags::L4Udp);
      if (avail < 8) return cut();
      out.payload_offset = static_cast<uint16_t>(off + 8);
      return true;
    case kProtoTcp: {
      out.flags |= bit(PacketFlags::L4Tcp);
      if (avail < 20) return cut();
      uint32_t hlen = static_cast<uint32_t>(p[off + 12] >> 4) * 4;
      if (hlen < 20) return false;
      if (hlen > avail) return cut();
      out.payload_offset = static_cast<uint16_t>(off + hlen);
      return true;
    }
    case kProtoIcmp:
    case kProtoIcmpv6:
      out.flags |= bit(proto == kProtoIcmp ? PacketFlags::L4Icmp : PacketFlags::L4Icmpv6);
      if (avail < 8) return cut();
      out.payload_offset = static_cast<uint16_t>(off + 8);
      return true;
    default:
      out.flags |= bit(PacketFlags::L4Other);
      return true;
  }
}

}  // namespace detail

// Parses Ethernet, up to two VLAN tags, IPv4 (with options) or IPv6 (with
// hop-by-hop, routing, destination-options and fragment headers), then UDP,
// TCP, ICMP or ICMPv6. Returns false when a header is cut short by `len`
// (flags then hold what was recognised plus Truncated) or is malformed (a
// wrong IP version, an IPv4 header length under 20, a TCP data offset
// under 5; flags then hold what was recognised). A frame of another
// ethertype, or with a third VLAN tag, parses as L2 only and returns true.
// Non-first fragments carry no L4 header: they get Fragment and no L4 flag.
GNIO_HD inline bool parse_packet(const uint8_t* p, uint32_t len, ParsedPacket& out) {
  out = ParsedPacket{};
  auto cut = [&out]() {
    out.flags |= bit(PacketFlags::Truncated);
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
    uint32_t ihl = static_cast<uint32_t>(p[off] & 0x0F) * 4;
    uint32_t total = detail::load16(p + off + 2);
    if ((p[off] >> 4) != 4 || ihl < 20 || total < ihl) return false;
    if (len < off + total) return cut();
    out.l3_end = off + total;
    uint16_t frag = detail::load16(p + off + 6);
    bool more = (frag & 0x2000) != 0;
    uint16_t frag_off = frag & 0x1FFF;
    if (more || frag_off != 0) out.flags |= bit(PacketFlags::Fragment);
    uint8_t proto = p[off + 9];
    if (frag_off != 0) {
      out.l4_proto = proto;
      out.l4_offset = out.payload_offset = static_cast<uint16_t>(off + ihl);
      return true;
    }
    return detail::parse_l4(p, off + ihl, out.l3_end, proto, out);
  }

  if (type == detail::kEtherIpv6) {
    out.flags |= bit(PacketFlags::L3Ipv6);
    if (len < off + 40) return cut();
    if ((p[off] >> 4) != 6) return false;
    uint32_t end = off + 40 + detail::load16(p + off + 4);
    if (len < end) return cut();
    out.l3_end = end;
    uint8_t next = p[off + 6];
    uint32_t l4 = off + 40;
    // Extension headers: hop-by-hop (0), routing (43), fragment (44),
    // destination options (60). Each starts with (next header, length).
    for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 44 || next == 60); ++i) {
      if (end < l4 + 8) return cut();
      uint8_t following = p[l4];
      if (next == 44) {
        out.flags |= bit(PacketFlags::Fragment);
        if ((detail::load16(p + l4 + 2) & 0xFFF8) != 0) {
          out.l4_proto = following;
          out.l4_offset = out.payload_offset = static_cast<uint16_t>(l4 + 8);
          return true;
        }
        l4 += 8;
      } else {
        uint32_t ext = (static_cast<uint32_t>(p[l4 + 1]) + 1) * 8;
        if (end < l4 + ext) return cut();
        l4 += ext;
      }
      next = following;
    }
    return detail::parse_l4(p, l4, end, next, out);
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

// The 16-bit ones' complement sum (RFC 1071) of `len` bytes read as
// big-endian words (an odd last byte is padded with zero), added to
// `initial` (an earlier, unfolded or folded, partial sum). Not inverted.
// It sums little-endian 32-bit words and swaps the folded result: the ones'
// complement sum does not depend on byte order (RFC 1071, 2(B)), and wide
// words let the compiler vectorise the loop.
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

// The Internet checksum: the inverted ones' complement sum, ready to store
// big-endian in a checksum field that was zero while summing.
GNIO_HD inline uint16_t internet_checksum(const uint8_t* p, uint32_t len, uint32_t initial = 0) {
  return static_cast<uint16_t>(~ones_complement_sum(p, len, initial));
}

// Folded sum of the TCP/UDP/ICMPv6 pseudo-header of a parsed IPv4/IPv6
// packet: addresses, protocol and L4 length. ICMPv4 has no pseudo-header.
GNIO_HD inline uint16_t pseudo_header_sum(const uint8_t* p, const ParsedPacket& pp) {
  uint32_t l4_len = pp.l3_end - pp.l4_offset;
  uint32_t sum = static_cast<uint32_t>(pp.l4_proto) + (l4_len & 0xFFFF) + (l4_len >> 16);
  if (has_flag(pp.flags, PacketFlags::L3Ipv4)) {
    return ones_complement_sum(p + pp.l3_offset + 12, 8, sum);
  }
  return ones_complement_sum(p + pp.l3_offset + 8, 32, sum);
}

namespace detail {

// Whether the L4 checksum of a parsed packet can be checked or written:
// a whole UDP/TCP/ICMP/ICMPv6 datagram, not behind an IPv6 routing header
// (whose pseudo-header would need the final destination).
GNIO_HD inline bool l4_checksummed(const uint8_t* p, const ParsedPacket& pp) {
  constexpr uint32_t kL4 = bit(PacketFlags::L4Udp) | bit(PacketFlags::L4Tcp) |
                           bit(PacketFlags::L4Icmp) | bit(PacketFlags::L4Icmpv6);
  if ((pp.flags & kL4) == 0 || has_flag(pp.flags, PacketFlags::Fragment)) return false;
  if (has_flag(pp.flags, PacketFlags::L3Ipv6) && pp.l4_offset != pp.l3_offset + 40) {
    uint32_t off = pp.l3_offset + 40;
    uint8_t next = p[pp.l3_offset + 6];
    while (off < pp.l4_offset) {
      if (next == 43) return false;
      next = p[off];
      off += (static_cast<uint32_t>(p[off + 1]) + 1) * 8;
    }
  }
  return true;
}

GNIO_HD inline uint32_t l4_checksum_field(const ParsedPacket& pp) {
  return pp.l4_offset + (has_flag(pp.flags, PacketFlags::L4Udp) ? 6u
                         : has_flag(pp.flags, PacketFlags::L4Tcp) ? 16u
                                                                  : 2u);
}

GNIO_HD inline uint32_t l4_initial_sum(const uint8_t* p, const ParsedPacket& pp) {
  return has_flag(pp.flags, PacketFlags::L4Icmp) ? 0u : pseudo_header_sum(p, pp);
}

}  // namespace detail

// The flags of a parsed packet plus its checksum state: L3CsumGood/Bad for
// the IPv4 header, L4CsumGood/Bad for UDP, TCP, ICMP (IPv4) and UDP, TCP,
// ICMPv6 (IPv6, with pseudo-header). Fragments get no L4 state; neither
// does IPv4 UDP with a zero checksum field (RFC 768: no checksum was
// computed).
GNIO_HD inline uint32_t checksum_state(const uint8_t* p, const ParsedPacket& pp) {
  uint32_t flags = pp.flags;
  if (has_flag(flags, PacketFlags::L3Ipv4)) {
    uint32_t ihl = static_cast<uint32_t>(p[pp.l3_offset] & 0x0F) * 4;
    bool good = ones_complement_sum(p + pp.l3_offset, ihl) == 0xFFFF;
    flags |= bit(good ? PacketFlags::L3CsumGood : PacketFlags::L3CsumBad);
  }
  if (!detail::l4_checksummed(p, pp)) return flags;
  uint32_t field = detail::l4_checksum_field(pp);
  if (has_flag(flags, PacketFlags::L4Udp) && has_flag(flags, PacketFlags::L3Ipv4) && detail::load16(p + field) == 0) {
    return flags;
  }
  uint32_t l4_len = pp.l3_end - pp.l4_offset;
  bool good = ones_complement_sum(p + pp.l4_offset, l4_len, detail::l4_initial_sum(p, pp)) == 0xFFFF;
  return flags | bit(good ? PacketFlags::L4CsumGood : PacketFlags::L4CsumBad);
}

// parse_packet() plus checksum_state().
GNIO_HD inline uint32_t classify(const uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  if (!parse_packet(p, len, pp)) return pp.flags;
  return checksum_state(p, pp);
}

// Recomputes, in place, the IPv4 header checksum and the L4 checksum (UDP,
// TCP, ICMP, ICMPv6) wherever classify() would check them.
GNIO_HD inline HeaderStatus update_checksums(uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  if (!parse_packet(p, len, pp)) return HeaderStatus::Truncated;
  bool v4 = has_flag(pp.flags, PacketFlags::L3Ipv4);
  if (!v4 && !has_flag(pp.flags, PacketFlags::L3Ipv6)) return HeaderStatus::Unsupported;
  if (v4) {
    uint32_t ihl = static_cast<uint32_t>(p[pp.l3_offset] & 0x0F) * 4;
    detail::store16(p + pp.l3_offset + 10, 0);
    detail::store16(p + pp.l3_offset + 10, internet_checksum(p + pp.l3_offset, ihl));
  }
  if (!detail::l4_checksummed(p, pp)) return HeaderStatus::Ok;
  uint32_t field = detail::l4_checksum_field(pp);
  detail::store16(p + field, 0);
  uint16_t c = internet_checksum(p + pp.l4_offset, pp.l3_end - pp.l4_offset, detail::l4_initial_sum(p, pp));
  // UDP sends a computed 0 as 0xFFFF: a zero field means "no checksum".
  if (c == 0 && has_flag(pp.flags, PacketFlags::L4Udp)) c = 0xFFFF;
  detail::store16(p + field, c);
  return HeaderStatus::Ok;
}

// Toeplitz hash (the Microsoft RSS algorithm) of `n` input bytes under the
// 40-byte `key` (input bytes + 4 must not exceed the key length).
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

// The common default RSS key (Microsoft RSS specification).
struct RssKey {
  uint8_t bytes[40];
};
GNIO_HD constexpr RssKey rss_default_key() {
  return {{0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
           0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
           0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa}};
}

// The longest RSS input: IPv6 source and destination, two ports.
inline constexpr uint32_t kRssMaxInput = 36;

// The bytes a NIC hashes for RSS, into `in`: source address, destination
// address and, for whole UDP or TCP datagrams, source and destination port;
// the addresses only for other IP packets and all fragments. Returns their
// count; 0 for non-IP packets.
GNIO_HD inline uint32_t rss_input(const uint8_t* p, const ParsedPacket& pp, uint8_t (&in)[kRssMaxInput]) {
  uint32_t n = 0;
  if (has_flag(pp.flags, PacketFlags::L3Ipv4)) {
    for (uint32_t i = 0; i < 8; ++i) in[n++] = p[pp.l3_offset + 12 + i];
  } else if (has_flag(pp.flags, PacketFlags::L3Ipv6)) {
    for (uint32_t i = 0; i < 32; ++i) in[n++] = p[pp.l3_offset + 8 + i];
  } else {
    return 0;
  }
  constexpr uint32_t kPorts = bit(PacketFlags::L4Udp) | bit(PacketFlags::L4Tcp);
  if ((pp.flags & kPorts) != 0 && !has_flag(pp.flags, PacketFlags::Fragment)) {
    for (uint32_t i = 0; i < 4; ++i) in[n++] = p[pp.l4_offset + i];
  }
  return n;
}

// RSS hash of a frame as a NIC computes it with the default key: Toeplitz
// over rss_input(). 0 for non-IP or truncated frames.
GNIO_HD inline uint32_t rss_hash(const uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  if (!parse_packet(p, len, pp)) return 0;
  uint8_t in[kRssMaxInput];
  const uint32_t n = rss_input(p, pp, in);
  if (n == 0) return 0;
  const RssKey key = rss_default_key();
  return toeplitz_hash(key.bytes, sizeof(key.bytes), in, n);
}

// The echo transform, in place: swaps Ethernet, IP and UDP/TCP source and
// destination, and turns an ICMP / ICMPv6 echo request into an echo reply.
// All checksums that were valid stay valid: swapping keeps every ones'
// complement sum, and the ICMP type change is patched incrementally
// (RFC 1624). Unsupported (frame untouched) for non-IP frames.
GNIO_HD inline HeaderStatus swap_addresses(uint8_t* p, uint32_t len) {
  ParsedPacket pp;
  if (!parse_packet(p, len, pp)) return HeaderStatus::Truncated;
  bool v4 = has_flag(pp.flags, PacketFlags::L3Ipv4);
  if (!v4 && !has_flag(pp.flags, PacketFlags::L3Ipv6)) return HeaderStatus::Unsupported;
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
  bool icmp4 = has_flag(pp.flags, PacketFlags::L4Icmp);
  if (!icmp4 && !has_flag(pp.flags, PacketFlags::L4Icmpv6)) return HeaderStatus::Ok;
  uint8_t request = icmp4 ? 8 : 128;
  uint8_t reply = icmp4 ? 0 : 129;
  uint8_t* icmp = p + pp.l4_offset;
  if (icmp[0] != request) return HeaderStatus::Ok;
  uint16_t old_word = detail::load16(icmp);
  icmp[0] = reply;
  uint16_t new_word = detail::load16(icmp);
  // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m').
  uint32_t sum = static_cast<uint16_t>(~detail::load16(icmp + 2));
  sum += static_cast<uint16_t>(~old_word);
  sum += new_word;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  detail::store16(icmp + 2, static_cast<uint16_t>(~sum));
  return HeaderStatus::Ok;
}

// 64-bit FNV-1a over bytes: a cheap fingerprint to compare packet streams.
// Chain calls by passing the previous result as `h`.
GNIO_HD inline uint64_t fnv1a64(const uint8_t* p, size_t len, uint64_t h = 14695981039346656037ull) {
  for (size_t i = 0; i < len; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace gnio::dev
