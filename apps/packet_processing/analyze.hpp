// SPDX-License-Identifier: Apache-2.0
// What the packet-processing application learns from one frame, on the GPU:
// the protocols it carries (l2l4.hpp up to L4; DNS, HTTP/1.x requests and
// the TLS ClientHello from dns.hpp, http.hpp and tls.hpp), the tunnel it
// carries and the packet inside (tunnels.hpp), the checksum state of L3 and
// L4, why it is malformed or cut, its flow key, and the record of
// application-layer fields handed to the host (records.hpp).
// Every read is bounded by the captured length and the IP datagram's end.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/dns.hpp"
#include "packet_processing/http.hpp"
#include "packet_processing/inner_ip.hpp"
#include "packet_processing/l2l4.hpp"
#include "packet_processing/reason.hpp"
#include "packet_processing/records.hpp"
#include "packet_processing/tls.hpp"
#include "packet_processing/tunnels.hpp"
#include "packet_processing/warp_checksum.hpp"

namespace gnio::dev::app {

struct Analysis {
  uint32_t protocols = 0;  // 1u << Proto, of the outer headers and, out of a tunnel, of the inner packet's
  uint32_t flags = 0;      // dev::PacketFlags of the packet pp describes (with checksum state for the frame's own)
  uint32_t csum_l3 = kCsumNotChecked;  // checksum states of the frame's own (outer) headers
  uint32_t csum_l4 = kCsumNotChecked;
  uint32_t csum_l4_layer = kCsumLayerCount;  // which L4 layer csum_l4 is for
  uint32_t reason = kReasonNone;
  uint32_t tunnel = kTunnelNone;  // the tunnel found (opened, or refused with a reason)
  // Where the packet that pp, app_offset and app_end describe starts in the
  // frame: 0 for the frame itself; out of a tunnel, the inner Ethernet
  // header, or kInnerIpAt bytes before the inner IP header (inner_ip.hpp).
  uint32_t inner_at = 0;
  ParsedPacket pp;
  uint32_t app_offset = 0;  // first byte of the DNS message / HTTP request / TLS record
  uint32_t app_end = 0;     // one past its last byte in the capture
  uint32_t record = kRecordNone;
  FlowKey key{};
  int8_t direction = 0;     // 0: source is endpoint a; 1: source is endpoint b

  GNIO_HD bool has(Proto p) const { return (protocols >> p) & 1u; }
};

namespace detail {

// The flow key and the application layer (DNS, HTTP request, TLS
// ClientHello) of the packet q[..) that `pp` describes, into `a`; the
// application layer only above a whole, well-formed L4 header of a first
// (or no) fragment of a packet no reason refused.
GNIO_HD inline void analyze_above_l3(const uint8_t* q, const ParsedPacket& pp, uint32_t f, Analysis& a) {
  flow_key(q, pp, f, a.key, a.direction);
  const bool l4_whole = pp.payload_offset > pp.l4_offset && !has_flag(f, PacketFlags::Malformed);
  if (!l4_whole || a.reason != kReasonNone) return;
  const uint32_t payload = pp.payload_offset;
  uint32_t end = pp.l3_end;
  if (has_flag(f, PacketFlags::L4Udp)) {
    const uint32_t udp_end = pp.l4_offset + load_be16(q + pp.l4_offset + 4);
    if (udp_end < end) end = udp_end;
  }
  if (has_flag(f, PacketFlags::L4Tcp) && !tcp_options_ok(q, pp.l4_offset + 20, payload)) {
    a.reason = kTcpOptionLength;
    return;
  }
  if (payload >= end) return;
  const uint16_t sp = load_be16(q + pp.l4_offset), dp = load_be16(q + pp.l4_offset + 2);
  if (sp == 53 || dp == 53) {
    a.protocols |= 1u << kDns;
    uint32_t msg = 0, held = 0;
    a.reason = dns_in_payload(q, payload, end, has_flag(f, PacketFlags::L4Tcp), msg, held);
    if (a.reason == kReasonNone) {
      a.record = kRecordDns;
      a.app_offset = msg;
      a.app_end = msg + held;
    }
    return;
  }
  if (!has_flag(f, PacketFlags::L4Tcp)) return;
  RequestLine rl;
  if (http_request_line(q + payload, end - payload, rl)) {
    a.protocols |= 1u << kHttpRequest;
    a.record = kRecordHttp;
    a.app_offset = payload;
    a.app_end = end;
    return;
  }
  const TlsHello hello = tls_client_hello(q, payload, end);
  if (hello.hello) {
    a.protocols |= 1u << kTlsClientHello;
    a.reason = hello.reason;
    if (hello.named && hello.reason == kReasonNone) {
      a.record = kRecordTls;
      a.app_offset = payload;
      a.app_end = end;
    }
  }
}

// Classifies the packet inside the well-formed tunnel `t` of the frame p as
// analyze() classifies a frame (its checksums are not checked: the
// counters hold the frame's own), keyed by its 5-tuple and the tunnel.
GNIO_HD inline void analyze_inner(const uint8_t* p, const Tunnel& t, Analysis& a) {
  const bool ethernet = t.inner == kInnerEthernet;
  a.inner_at = ethernet ? t.offset : t.offset - kInnerIpAt;
  const uint8_t* q = p + a.inner_at;
  const uint32_t len = t.end - a.inner_at;
  ParsedPacket& pp = a.pp;
  if (ethernet) {
    parse_packet(q, len, pp);
  } else {
    parse_inner_ip(q, len, t.inner == kInnerIpv6, pp);
  }
  const uint32_t f = pp.flags;
  a.flags = f;
  a.protocols |= l2l4_protocols(q, len, pp, f, a.reason);
  if (a.reason == kReasonNone && (f & (bit(PacketFlags::Malformed) | bit(PacketFlags::Truncated))) != 0)
    a.reason = l2_to_l4_reason(q, len, pp);
  analyze_above_l3(q, pp, f, a);
  if (a.key.version == 0) return;
  a.key.tunnel = static_cast<uint8_t>(t.type);
  a.key.labels = static_cast<uint8_t>(t.labels);
  a.key.tunnel_id = t.id;
}

}  // namespace detail

// Everything the application counts about one frame (no record fields:
// fill_record() adds those for the frames that carry one). A tunnel of a
// type in `decap` (bits 1u << TunnelType) whose outer headers no reason
// refused is opened and the packet inside classified instead. `parsed`, if
// given, is parse_packet()'s result for the frame and `l4_sum` the sum
// checksum_state() takes (analyze_warp() passes both).
GNIO_HD inline Analysis analyze(const uint8_t* p, uint32_t len, uint32_t decap = kDecapAll,
                                const ParsedPacket* parsed = nullptr, const uint16_t* l4_sum = nullptr) {
  Analysis a;
  ParsedPacket& pp = a.pp;
  if (parsed != nullptr) {
    pp = *parsed;
  } else {
    parse_packet(p, len, pp);
  }
  a.flags = checksum_state(p, pp, l4_sum);
  const uint32_t f = a.flags;
  a.protocols = l2l4_protocols(p, len, pp, f, a.reason);
  const ChecksumStates csum = checksum_states(f);
  a.csum_l3 = csum.l3;
  a.csum_l4 = csum.l4;
  a.csum_l4_layer = csum.l4_layer;
  if (a.reason == kReasonNone && (f & (bit(PacketFlags::Malformed) | bit(PacketFlags::Truncated))) != 0)
    a.reason = l2_to_l4_reason(p, len, pp);
  if (a.reason == kReasonNone) {
    const Tunnel t = find_tunnel(p, len, pp, f, decap);
    a.tunnel = t.type;
    a.reason = t.reason;
    if (t.type != kTunnelNone && t.reason == kReasonNone && t.inner != kInnerNone) {
      detail::analyze_inner(p, t, a);
      return a;
    }
  }
  detail::analyze_above_l3(p, pp, f, a);
  return a;
}

// The record a frame with a.record != kRecordNone hands to the host: the
// addresses and ports here (the inner packet's, out of a tunnel), the
// fields of its protocol from its parser.
GNIO_HD inline void fill_record(const uint8_t* frame, const Analysis& a, Record& r) {
  const uint8_t* p = frame + a.inner_at;
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
  r.sport = load_be16(p + pp.l4_offset);
  r.dport = load_be16(p + pp.l4_offset + 2);
  r.name[0] = r.method[0] = r.path[0] = r.http_version[0] = 0;
  r.name_len = r.path_len = 0;
  r.tunnel = a.key.tunnel;
  r.labels = a.key.labels;
  r.tunnel_id = a.key.tunnel_id;
  r.path_cut = 0;
  if (a.record == kRecordDns) {
    dns_fields(p + a.app_offset, a.app_end - a.app_offset, r);
  } else if (a.record == kRecordHttp) {
    http_fields(p + a.app_offset, a.app_end - a.app_offset, r);
  } else if (a.record == kRecordTls) {
    tls_fields(p, a.app_offset, a.app_end, r);
  }
}

// analyze() for one frame per lane of a warp, every lane calling it (`len`
// 0: this lane has none and gets an empty Analysis): the L4 checksums are
// summed by the warp together (warp_ones_complement_sum). On the emulated
// device a lane is the whole block and this is analyze().
GNIO_HD inline Analysis analyze_warp(const uint8_t* p, uint32_t len, uint32_t decap = kDecapAll) {
#if GNIO_DEVICE_PASS
  ParsedPacket pp;
  if (len != 0) parse_packet(p, len, pp);
  const bool summed = len != 0 && l4_checksum_applies(p, pp);
  const uint16_t sum = warp_ones_complement_sum(summed ? p + pp.l4_offset : nullptr,
                                                summed ? l4_checksum_length(p, pp) : 0u);
  if (len == 0) return Analysis{};
  return analyze(p, len, decap, &pp, summed ? &sum : nullptr);
#else
  return len != 0 ? analyze(p, len, decap) : Analysis{};
#endif
}

}  // namespace gnio::dev::app
