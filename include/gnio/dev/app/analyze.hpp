// What the packet-processing application learns from one frame, on the GPU:
// the protocols it carries (Ethernet, VLAN/QinQ, ARP, IPv4, IPv6, ICMP,
// ICMPv6, UDP, TCP, DNS, HTTP/1.x requests, TLS ClientHello), the checksum
// state of L3 and L4, why it is malformed or cut, its flow key, and the
// application-layer fields handed to the host (DNS name, type, rcode; HTTP
// method, host, path; TLS SNI). L2-L4 come from dev/headers.hpp, the
// application protocols from dev/app/dns.hpp, http.hpp and tls.hpp; every
// read here is bounded by the captured length and the IP datagram's end.
#pragma once

#include <cstdint>

#include "gnio/dev/app/dns.hpp"
#include "gnio/dev/app/http.hpp"
#include "gnio/dev/app/reason.hpp"
#include "gnio/dev/app/tls.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"

namespace gnio::dev::app {

// Protocol counters, one bit each in Analysis::protocols.
enum Proto : uint32_t {
  kEth,
  kVlan,         // at least one 802.1Q tag
  kQinq,         // an 802.1ad outer tag
  kArp,
  kIpv4,
  kIpv6,
  kIcmp,
  kIcmpv6,
  kUdp,
  kTcp,
  kDns,          // UDP or TCP port 53 with a DNS message (or the start of one)
  kHttpRequest,  // a TCP payload that starts like an HTTP/1.x request line, on any port
  kTlsClientHello,
  kFragment,     // an IPv4 or IPv6 fragment
  kOtherL3,      // an ethertype other than ARP, IPv4, IPv6
  kProtoCount,
};

inline constexpr const char* kProtoNames[kProtoCount] = {
    "eth", "vlan", "qinq", "arp", "ipv4", "ipv6", "icmp", "icmpv6", "udp", "tcp", "dns", "http_request",
    "tls_client_hello", "fragment", "other_l3"};

// Checksum state of one layer.
enum Csum : uint32_t { kCsumNotChecked, kCsumGood, kCsumBad, kCsumPartial, kCsumCount };
inline constexpr const char* kCsumNames[kCsumCount] = {"not_checked", "good", "bad", "partial"};

// Layers whose checksum state is counted.
enum CsumLayer : uint32_t { kCsumIpv4, kCsumUdp, kCsumTcp, kCsumIcmp, kCsumIcmpv6, kCsumLayerCount };
inline constexpr const char* kCsumLayerNames[kCsumLayerCount] = {"ipv4", "udp", "tcp", "icmp", "icmpv6"};

// Both directions of a conversation map to one key: endpoint a is the lower
// (address, port) of the two. Addresses of IPv4 flows use the first 4 bytes.
struct FlowKey {
  uint8_t a[16];
  uint8_t b[16];
  uint16_t port_a;
  uint16_t port_b;
  uint8_t proto;    // IP protocol of the L4 header (or of the fragment)
  uint8_t version;  // 4 or 6; 0: no flow (not IP, or the IP header is cut or malformed)
  uint8_t pad[2];
};

// Application-layer fields of one DNS message, HTTP request or ClientHello.
enum RecordKind : uint32_t { kRecordNone, kRecordDns, kRecordHttp, kRecordTls };

inline constexpr uint32_t kNameMax = 256;   // a DNS name as text is at most 253 characters
inline constexpr uint32_t kPathMax = 256;   // longer request targets are cut (Record::path_cut)
inline constexpr uint32_t kMethodMax = 16;

struct Record {
  uint32_t kind;         // RecordKind
  uint16_t queue;
  uint8_t version;       // IP version
  uint8_t proto;         // 6 or 17
  uint64_t packet;       // index of the packet in its queue (0 = first)
  uint64_t timestamp_ns;
  uint8_t src[16], dst[16];
  uint16_t sport, dport;
  // DNS
  uint16_t dns_id, qtype;
  uint8_t response, rcode, path_cut, pad;
  // The bytes of name and path: a name from the wire may hold any byte, 0x00
  // included (both are also zero-terminated).
  uint16_t name_len, path_len;
  char name[kNameMax];    // DNS qname, HTTP Host, TLS SNI
  char method[kMethodMax];
  char path[kPathMax];
  char http_version[12];
};

struct Analysis {
  uint32_t protocols = 0;  // 1u << Proto
  uint32_t flags = 0;      // dev::PacketFlags with checksum state
  uint32_t csum_l3 = kCsumNotChecked;
  uint32_t csum_l4 = kCsumNotChecked;
  uint32_t csum_l4_layer = kCsumLayerCount;  // which L4 layer csum_l4 is for
  uint32_t reason = kReasonNone;
  ParsedPacket pp;
  uint32_t app_offset = 0;  // first byte of the DNS message / HTTP request / TLS record
  uint32_t app_end = 0;     // one past its last byte in the capture
  uint32_t record = kRecordNone;
  FlowKey key{};
  int8_t direction = 0;     // 0: source is endpoint a; 1: source is endpoint b

  GNIO_HD bool has(Proto p) const { return (protocols >> p) & 1u; }
};

namespace detail {

using gnio::dev::detail::load16;
using gnio::dev::detail::store16;

GNIO_HD inline bool less_endpoint(const uint8_t* x, uint16_t px, const uint8_t* y, uint16_t py, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i];
  return px < py;
}

// The reason parse_packet() refused a frame, found again from its bytes.
GNIO_HD inline uint32_t l2_to_l4_reason(const uint8_t* p, uint32_t len, const ParsedPacket& pp) {
  const uint32_t f = pp.flags;
  if (len < 14) return kFrameShort;
  const uint32_t off = pp.l3_offset;
  if (has_flag(f, PacketFlags::L3Ipv4)) {
    if (len < off + 20) return kIpv4HeaderCut;
    const uint32_t ihl = static_cast<uint32_t>(p[off] & 0x0F) * 4;
    if ((p[off] >> 4) != 4) return kIpv4BadVersion;
    if (ihl < 20) return kIpv4BadIhl;
    if (load16(p + off + 2) < ihl) return kIpv4BadTotalLength;
    if (len < off + ihl) return kIpv4HeaderCut;
  } else if (has_flag(f, PacketFlags::L3Ipv6)) {
    if (len < off + 40) return kIpv6HeaderCut;
    if ((p[off] >> 4) != 6) return kIpv6BadVersion;
    if (pp.l4_offset == 0) return has_flag(f, PacketFlags::Malformed) ? kIpv6ExtOverflow : kIpv6ExtCut;
  } else {
    return has_flag(f, PacketFlags::Truncated) ? kVlanCut : kReasonNone;
  }
  const bool bad = has_flag(f, PacketFlags::Malformed);
  const bool header_whole = pp.payload_offset > pp.l4_offset || has_flag(f, PacketFlags::L4Other) ||
                            (has_flag(f, PacketFlags::Fragment) && (f & (bit(PacketFlags::L4Udp) | bit(PacketFlags::L4Tcp) |
                                                                          bit(PacketFlags::L4Icmp) |
                                                                          bit(PacketFlags::L4Icmpv6))) == 0);
  if (!header_whole) {
    const uint32_t l4 = pp.l4_offset;
    if (has_flag(f, PacketFlags::L4Tcp)) {
      if (l4 + 20 > pp.l3_end) return bad ? kTcpHeaderOverflow : kTcpHeaderCut;
      if ((p[l4 + 12] >> 4) < 5) return kTcpBadOffset;
      return bad ? kTcpHeaderOverflow : kTcpHeaderCut;
    }
    if (has_flag(f, PacketFlags::L4Udp)) {
      if (l4 + 8 > pp.l3_end) return bad ? kUdpLengthOverPayload : kUdpHeaderCut;
      return load16(p + l4 + 4) < 8 ? kUdpLengthUnderHeader : kUdpLengthOverPayload;
    }
    return bad ? kIcmpShort : kIcmpHeaderCut;
  }
  return has_flag(f, PacketFlags::Truncated) ? kDatagramCut : kReasonNone;
}

// TCP options: each but END (0) and NOP (1) has a length byte of at least 2
// that keeps it inside the header.
GNIO_HD inline bool tcp_options_ok(const uint8_t* p, uint32_t begin, uint32_t end) {
  uint32_t i = begin;
  while (i < end) {
    const uint8_t kind = p[i];
    if (kind == 0) return true;
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= end) return false;
    const uint32_t n = p[i + 1];
    if (n < 2 || i + n > end) return false;
    i += n;
  }
  return true;
}

// Copies at most cap-1 bytes of [p+from, p+to) into out as a C string.
GNIO_HD inline uint32_t copy_text(char* out, uint32_t cap, const uint8_t* p, uint32_t from, uint32_t to) {
  uint32_t n = 0;
  for (uint32_t i = from; i < to && n + 1 < cap; ++i) out[n++] = static_cast<char>(p[i]);
  out[n] = 0;
  return n;
}

}  // namespace detail

// The DNS fields of the message m[0..held) that dns_message() accepted into
// r: id, response flag, rcode, and the first question's name and type.
GNIO_HD inline void dns_fields(const uint8_t* m, uint32_t held, Record& r) {
  r.dns_id = detail::load16(m);
  const uint16_t flags = detail::load16(m + 2);
  r.response = static_cast<uint8_t>(flags >> 15);
  r.rcode = static_cast<uint8_t>(flags & 0x0F);
  r.qtype = 0;
  r.name[0] = 0;
  r.name_len = 0;
  if (detail::load16(m + 4) == 0) return;  // no question
  const DnsName name = dns_name(m, held, kDnsHeaderBytes, r.name, kNameMax);
  r.name_len = static_cast<uint16_t>(name.text_len);
  if (name.reason == kReasonNone && name.next + 2 <= held) r.qtype = detail::load16(m + name.next);
}

// Everything the application counts about one frame (no record fields:
// fill_record() adds those for the frames that carry one). `parsed`, if
// given, is parse_packet()'s result for the frame and `l4_sum` the sum
// checksum_state() takes (analyze_warp() passes both).
GNIO_HD inline Analysis analyze(const uint8_t* p, uint32_t len, const ParsedPacket* parsed = nullptr,
                                const uint16_t* l4_sum = nullptr) {
  Analysis a;
  ParsedPacket& pp = a.pp;
  if (parsed != nullptr) {
    pp = *parsed;
  } else {
    parse_packet(p, len, pp);
  }
  a.flags = checksum_state(p, pp, l4_sum);
  const uint32_t f = a.flags;
  if (len >= 14) a.protocols |= 1u << kEth;
  if (has_flag(f, PacketFlags::Vlan)) {
    a.protocols |= 1u << kVlan;
    if (detail::load16(p + 12) == 0x88A8) a.protocols |= 1u << kQinq;
  }
  const bool v4 = has_flag(f, PacketFlags::L3Ipv4), v6 = has_flag(f, PacketFlags::L3Ipv6);
  if (v4) a.protocols |= 1u << kIpv4;
  if (v6) a.protocols |= 1u << kIpv6;
  if (len >= 14 && !v4 && !v6) {
    if (pp.ethertype == 0x0806) {
      a.protocols |= 1u << kArp;
      if (pp.l3_offset + 28u > len) a.reason = kArpCut;
    } else if (!has_flag(f, PacketFlags::Truncated)) {
      a.protocols |= 1u << kOtherL3;
    }
  }
  if (has_flag(f, PacketFlags::Fragment)) a.protocols |= 1u << kFragment;
  if (has_flag(f, PacketFlags::L4Udp)) a.protocols |= 1u << kUdp;
  if (has_flag(f, PacketFlags::L4Tcp)) a.protocols |= 1u << kTcp;
  if (has_flag(f, PacketFlags::L4Icmp)) a.protocols |= 1u << kIcmp;
  if (has_flag(f, PacketFlags::L4Icmpv6)) a.protocols |= 1u << kIcmpv6;

  // Checksum state.
  if (has_flag(f, PacketFlags::L3CsumGood)) a.csum_l3 = kCsumGood;
  if (has_flag(f, PacketFlags::L3CsumBad)) a.csum_l3 = kCsumBad;
  if (has_flag(f, PacketFlags::L4CsumGood)) a.csum_l4 = kCsumGood;
  if (has_flag(f, PacketFlags::L4CsumBad)) a.csum_l4 = kCsumBad;
  if (has_flag(f, PacketFlags::L4CsumPartial)) a.csum_l4 = kCsumPartial;
  a.csum_l4_layer = has_flag(f, PacketFlags::L4Udp)      ? kCsumUdp
                    : has_flag(f, PacketFlags::L4Tcp)    ? kCsumTcp
                    : has_flag(f, PacketFlags::L4Icmp)   ? kCsumIcmp
                    : has_flag(f, PacketFlags::L4Icmpv6) ? kCsumIcmpv6
                                                         : kCsumLayerCount;

  if (a.reason == kReasonNone && (f & (bit(PacketFlags::Malformed) | bit(PacketFlags::Truncated))) != 0)
    a.reason = detail::l2_to_l4_reason(p, len, pp);

  // Flow key: any IP packet whose IP header is whole and well-formed.
  if (pp.l3_end != 0 && (v4 || v6)) {
    const uint32_t n = v4 ? 4 : 16;
    const uint8_t* src = p + pp.l3_offset + (v4 ? 12 : 8);
    const uint8_t* dst = src + n;
    uint16_t sp = 0, dp = 0;
    const bool ports = (has_flag(f, PacketFlags::L4Udp) || has_flag(f, PacketFlags::L4Tcp)) &&
                       pp.payload_offset > pp.l4_offset;
    if (ports) {
      sp = detail::load16(p + pp.l4_offset);
      dp = detail::load16(p + pp.l4_offset + 2);
    }
    const bool swap = detail::less_endpoint(dst, dp, src, sp, n);
    const uint8_t* lo = swap ? dst : src;
    const uint8_t* hi = swap ? src : dst;
    for (uint32_t i = 0; i < 16; ++i) {
      a.key.a[i] = i < n ? lo[i] : 0;
      a.key.b[i] = i < n ? hi[i] : 0;
    }
    a.key.port_a = swap ? dp : sp;
    a.key.port_b = swap ? sp : dp;
    a.key.proto = pp.l4_proto;
    a.key.version = v4 ? 4 : 6;
    a.direction = swap ? 1 : 0;
  }

  // Application layer: only above a whole, well-formed L4 header of a
  // first (or no) fragment.
  const bool l4_whole = pp.payload_offset > pp.l4_offset && !has_flag(f, PacketFlags::Malformed);
  if (!l4_whole || a.reason != kReasonNone) return a;
  const uint32_t payload = pp.payload_offset;
  uint32_t end = pp.l3_end;
  if (has_flag(f, PacketFlags::L4Udp)) {
    const uint32_t udp_end = pp.l4_offset + detail::load16(p + pp.l4_offset + 4);
    if (udp_end < end) end = udp_end;
  }
  if (has_flag(f, PacketFlags::L4Tcp) && !detail::tcp_options_ok(p, pp.l4_offset + 20, payload)) {
    a.reason = kTcpOptionLength;
    return a;
  }
  if (payload >= end) return a;
  const uint16_t sp = detail::load16(p + pp.l4_offset), dp = detail::load16(p + pp.l4_offset + 2);
  if (sp == 53 || dp == 53) {
    a.protocols |= 1u << kDns;
    // Over TCP a length prefix gives the message's size: it may end before
    // the segment (another message follows) or go on in later segments.
    uint32_t msg = payload, n = end - payload;
    if (has_flag(f, PacketFlags::L4Tcp)) {
      if (payload + 2 > end) {
        a.reason = kDnsHeaderCut;
        return a;
      }
      msg = payload + 2;
      n = detail::load16(p + payload);
    }
    const uint32_t held = n < end - msg ? n : end - msg;
    a.reason = dns_message(p + msg, n, held);
    if (a.reason == kReasonNone) {
      a.record = kRecordDns;
      a.app_offset = msg;
      a.app_end = msg + held;
    }
    return a;
  }
  if (!has_flag(f, PacketFlags::L4Tcp)) return a;
  RequestLine rl;
  if (http_request_line(p + payload, end - payload, rl)) {
    a.protocols |= 1u << kHttpRequest;
    a.record = kRecordHttp;
    a.app_offset = payload;
    a.app_end = end;
    return a;
  }
  const TlsHello hello = tls_client_hello(p, payload, end);
  if (hello.hello) {
    a.protocols |= 1u << kTlsClientHello;
    a.reason = hello.reason;
    if (hello.named && hello.reason == kReasonNone) {
      a.record = kRecordTls;
      a.app_offset = payload;
      a.app_end = end;
    }
  }
  return a;
}

// The record a frame with a.record != kRecordNone hands to the host.
GNIO_HD inline void fill_record(const uint8_t* p, const Analysis& a, Record& r) {
  const ParsedPacket& pp = a.pp;
  const bool v4 = a.key.version == 4;
  const uint32_t n = v4 ? 4 : 16;
  const uint8_t* src = p + pp.l3_offset + (v4 ? 12 : 8);
  for (uint32_t i = 0; i < 16; ++i) {
    r.src[i] = i < n ? src[i] : 0;
    r.dst[i] = i < n ? src[n + i] : 0;
  }
  r.kind = a.record;
  r.version = a.key.version;
  r.proto = pp.l4_proto;
  r.sport = detail::load16(p + pp.l4_offset);
  r.dport = detail::load16(p + pp.l4_offset + 2);
  r.name[0] = r.method[0] = r.path[0] = r.http_version[0] = 0;
  r.name_len = r.path_len = 0;
  r.path_cut = 0;
  if (a.record == kRecordDns) {
    dns_fields(p + a.app_offset, a.app_end - a.app_offset, r);
  } else if (a.record == kRecordHttp) {
    const uint8_t* q = p + a.app_offset;
    const uint32_t len = a.app_end - a.app_offset;
    RequestLine rl;
    http_request_line(q, len, rl);
    detail::copy_text(r.method, kMethodMax, q, 0, rl.method_end);
    const uint32_t got = detail::copy_text(r.path, kPathMax, q, rl.target_begin, rl.target_end);
    r.path_len = static_cast<uint16_t>(got);
    r.path_cut = got < rl.target_end - rl.target_begin;
    detail::copy_text(r.http_version, sizeof(r.http_version), q, rl.version_begin, rl.version_end);
    uint32_t hb, he;
    http_host(q, rl.line_end, len, hb, he);
    r.name_len = static_cast<uint16_t>(detail::copy_text(r.name, kNameMax, q, hb, he));
  } else if (a.record == kRecordTls) {
    const TlsHello hello = tls_client_hello(p, a.app_offset, a.app_end);
    r.name_len = static_cast<uint16_t>(detail::copy_text(r.name, kNameMax, p, hello.sni_begin, hello.sni_end));
  }
}

#if defined(__CUDACC__)
namespace detail {
// The sum of the little-endian 16-bit halves of the 16-byte aligned block
// at `at`, the bytes outside [start, end) counted as zero.
__device__ inline uint32_t block_halves_sum(uintptr_t at, uintptr_t start, uintptr_t end) {
  constexpr uintptr_t kBlock = 16;
  const uint4 v = *reinterpret_cast<const uint4*>(at);
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
  if (at < start || at + kBlock > end)
    for (uint32_t i = 0; i < kBlock; ++i)
      if (at + i < start || at + i >= end) w[i / 4] &= ~(0xFFu << (8 * (i % 4)));
  uint32_t sum = 0;
  for (uint32_t j = 0; j < 4; ++j) sum += (w[j] & 0xFFFFu) + (w[j] >> 16);
  return sum;
}

// One step of a warp's reduce-scatter of 32 sums per lane: part[0..W)
// becomes this lane's and its partner's (lane ^ W) sums of the W packets
// on this lane's side.
template <uint32_t W>
__device__ inline void keep_half(uint32_t (&part)[32], uint32_t lane) {
  const bool upper = (lane & W) != 0;
#pragma unroll
  for (uint32_t i = 0; i < W; ++i) {
    const uint32_t low = part[i], high = part[i + W];  // values, so that part stays in registers
    const uint32_t keep = upper ? high : low;
    const uint32_t give = upper ? low : high;
    part[i] = keep + __shfl_xor_sync(0xffffffffu, give, W);
  }
}
}  // namespace detail

// The ones' complement sum of `bytes` bytes at `region` for every lane of a
// warp (0 bytes: nothing to sum), as ones_complement_sum() gives it, by the
// whole warp together. Each lane sums its 16-byte aligned blocks of every
// lane's packet (one load instruction of the warp covers 512 bytes of a
// packet; a lane summing its own packet made every load touch 32 packets,
// which on the H200 held the parser at a third of what the queue delivered
// at 1500 B), the 32 packets' loads independent of one another; then one
// reduce-scatter (31 shuffles) leaves each lane its own packet's total.
// The aligned blocks at either end are read whole, the bytes outside the
// region counted as zero: a 16-byte block never crosses a page. Partial
// sums fit 32 bits: a lane holds at most 128 blocks of a 64 KiB packet.
// Every lane of the warp must call it.
__device__ inline uint16_t warp_ones_complement_sum(const uint8_t* region, uint32_t bytes) {
  constexpr uint32_t kAll = 0xffffffffu;
  constexpr uintptr_t kBlock = 16, kStride = 32 * kBlock;
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t part[32];  // this lane's sum of lane k's packet
#pragma unroll
  for (uint32_t k = 0; k < 32; ++k) {
    const uint32_t n = __shfl_sync(kAll, bytes, k);
    const uintptr_t start = __shfl_sync(kAll, reinterpret_cast<uintptr_t>(region), k);
    const uintptr_t end = start + n;
    uintptr_t at = (start & ~(kBlock - 1)) + lane * kBlock;
    uint32_t sum = 0;
    if (n != 0 && at < end) {
      sum = detail::block_halves_sum(at, start, end);
      for (at += kStride; at < end; at += kStride) sum += detail::block_halves_sum(at, start, end);
    }
    part[k] = sum;
  }
  // Halving: at each step a lane keeps the half of the packets whose index
  // has its lane's bit and adds its partner's sums of them.
  detail::keep_half<16>(part, lane);
  detail::keep_half<8>(part, lane);
  detail::keep_half<4>(part, lane);
  detail::keep_half<2>(part, lane);
  detail::keep_half<1>(part, lane);
  if (bytes == 0) return 0;
  // Big-endian words of the region start at `region`: where that address is
  // even, the halves summed are those words byte-swapped.
  const uint32_t folded = dev::detail::fold16(part[0]);
  const uint32_t swapped = ((folded & 0xFFu) << 8) | (folded >> 8);
  return static_cast<uint16_t>((reinterpret_cast<uintptr_t>(region) & 1u) == 0 ? swapped : folded);
}
#endif

// analyze() for one frame per lane of a warp, every lane calling it (`len`
// 0: this lane has none and gets an empty Analysis): the L4 checksums are
// summed by the warp together (warp_ones_complement_sum). On the emulated
// device a lane is the whole block and this is analyze().
GNIO_HD inline Analysis analyze_warp(const uint8_t* p, uint32_t len) {
#if GNIO_DEVICE_PASS
  ParsedPacket pp;
  if (len != 0) parse_packet(p, len, pp);
  const bool summed = len != 0 && dev::detail::l4_checksummed(p, pp);
  const uint16_t sum = warp_ones_complement_sum(summed ? p + pp.l4_offset : nullptr,
                                                summed ? dev::detail::l4_length(p, pp) : 0u);
  if (len == 0) return Analysis{};
  return analyze(p, len, &pp, summed ? &sum : nullptr);
#else
  return len != 0 ? analyze(p, len) : Analysis{};
#endif
}

}  // namespace gnio::dev::app
