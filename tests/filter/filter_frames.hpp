// SPDX-License-Identifier: Apache-2.0
// What the filter tests share: the table of expressions, hand-built frames
// covering the protocols the expressions test (VLAN and QinQ, IPv4 with
// options and fragments, IPv6 with a fragment header, UDP, TCP with each
// flag, ICMP, ICMPv6, ARP), and libpcap's own verdict on a packet.
#pragma once

#include <pcap/pcap.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gnio::filter_test {

using Bytes = std::vector<uint8_t>;

// The expressions every packet is decided by, through libpcap and the
// device interpreter.
inline std::vector<std::string> expressions() {
  std::vector<std::string> e = {
      "udp port 53", "host 10.0.0.1", "net 192.168.0.0/16", "tcp", "icmp", "vlan", "vlan and udp",
      "ip[2:2] > 576", "tcp[tcpflags] & tcp-syn != 0", "ip6 and udp", "not arp", "portrange 1-1024",
      "ether host 02:00:00:00:00:01", "len > 100", "greater 64", "less 80", "arp", "icmp6",
      "ip6 host fd77::1", "host 10.77.0.1 and (tcp or udp)", "ip[6:2] & 0x3fff != 0",
      "tcp[tcpflags] & (tcp-fin|tcp-rst) != 0", "ether broadcast", "ip multicast or ip6 multicast",
      "udp[8:2] = 0x1234", "vlan 100", "vlan 200 and vlan 300", "", "tcp dst port 80 and tcp[13] = 2",
  };
  std::string ports;
  for (int p = 5300; p < 5360; ++p) ports += (ports.empty() ? "port " : " or port ") + std::to_string(p);
  e.push_back(ports + " or port 53 or port 443 or port 8000");  // the long OR: 63 ports
  return e;
}

inline void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
inline void put32(Bytes& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v >> 16));
  put16(b, static_cast<uint16_t>(v));
}
inline void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

// Ethernet from 02:00:00:00:00:02 to `dst_last` (the last byte of
// 02:00:00:00:00:xx, 0xff: broadcast), with 802.1Q tags (two: QinQ,
// 802.1ad outside) and then `type`.
inline Bytes ether(uint16_t type, std::vector<uint16_t> vlans = {}, uint8_t dst_last = 1) {
  Bytes b;
  for (int i = 0; i < 6; ++i) b.push_back(dst_last == 0xff ? 0xff : (i == 0 ? 0x02 : i == 5 ? dst_last : 0));
  for (uint8_t v : {0x02, 0, 0, 0, 0, 0x02}) b.push_back(v);
  for (size_t i = 0; i < vlans.size(); ++i) {
    put16(b, vlans.size() == 2 && i == 0 ? 0x88a8 : 0x8100);
    put16(b, vlans[i]);
  }
  put16(b, type);
  return b;
}

// An IPv4 header of 20 bytes (24 with `options`: NOP NOP NOP EOL), total
// length over `l4`, `frag` the flags and fragment offset field.
inline Bytes ipv4(uint8_t proto, uint32_t src, uint32_t dst, const Bytes& l4, uint16_t frag = 0, bool options = false) {
  Bytes b;
  const uint16_t hlen = options ? 24 : 20;
  b.push_back(static_cast<uint8_t>(0x40 | hlen / 4));
  b.push_back(0);
  put16(b, static_cast<uint16_t>(hlen + l4.size()));
  put16(b, 0x1c46);
  put16(b, frag);
  b.push_back(64);
  b.push_back(proto);
  put16(b, 0);
  put32(b, src);
  put32(b, dst);
  if (options) put32(b, 0x01010100);
  uint32_t sum = 0;
  for (size_t i = 0; i < hlen; i += 2) sum += static_cast<uint32_t>(b[i] << 8 | b[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  b[10] = static_cast<uint8_t>(~sum >> 8);
  b[11] = static_cast<uint8_t>(~sum);
  append(b, l4);
  return b;
}

// An IPv6 header from fd77::<src> to <dst> (ff02::1 when dst is 0), with a
// fragment header before `l4` when `fragment_offset` >= 0.
inline Bytes ipv6(uint8_t next, uint8_t src, uint8_t dst, const Bytes& l4, int fragment_offset = -1) {
  Bytes b;
  put32(b, 0x60000000);
  put16(b, static_cast<uint16_t>(l4.size() + (fragment_offset >= 0 ? 8 : 0)));
  b.push_back(fragment_offset >= 0 ? 44 : next);
  b.push_back(64);
  for (uint8_t last : {src, dst}) {
    const bool mcast = last == 0;
    put16(b, mcast ? 0xff02 : 0xfd77);
    for (int i = 0; i < 6; ++i) put16(b, 0);
    put16(b, mcast ? 1 : last);
  }
  if (fragment_offset >= 0) {
    b.push_back(next);
    b.push_back(0);
    put16(b, static_cast<uint16_t>(fragment_offset << 3 | 1));
    put32(b, 0xabcd);
  }
  append(b, l4);
  return b;
}

inline Bytes filler(size_t n, uint8_t seed) {
  Bytes b;
  for (size_t i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(seed + i));
  return b;
}

// UDP with its first payload bytes 0x1234 (what "udp[8:2] = 0x1234" looks for).
inline Bytes udp(uint16_t sport, uint16_t dport, size_t payload) {
  Bytes b;
  put16(b, sport);
  put16(b, dport);
  put16(b, static_cast<uint16_t>(8 + payload));
  put16(b, 0);
  Bytes data = filler(payload, 7);
  if (payload >= 2) {
    data[0] = 0x12;
    data[1] = 0x34;
  }
  append(b, data);
  return b;
}

inline Bytes tcp(uint16_t sport, uint16_t dport, uint8_t flags, size_t payload) {
  Bytes b;
  put16(b, sport);
  put16(b, dport);
  put32(b, 1000);
  put32(b, flags & 0x10 ? 2000 : 0);
  b.push_back(0x50);
  b.push_back(flags);
  put16(b, 65535);
  put32(b, 0);
  append(b, filler(payload, 3));
  return b;
}

inline Bytes icmp(uint8_t type, size_t payload) {
  Bytes b = {type, 0, 0, 0, 0x12, 0x34, 0, 1};
  append(b, filler(payload, 9));
  return b;
}

inline Bytes arp(uint16_t op, uint32_t sender, uint32_t target) {
  Bytes b;
  put16(b, 1);
  put16(b, 0x0800);
  b.push_back(6);
  b.push_back(4);
  put16(b, op);
  for (uint8_t v : {0x02, 0, 0, 0, 0, 0x02}) b.push_back(v);
  put32(b, sender);
  for (int i = 0; i < 6; ++i) b.push_back(0);
  put32(b, target);
  return b;
}

constexpr uint32_t ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return static_cast<uint32_t>(a) << 24 | static_cast<uint32_t>(b) << 16 | static_cast<uint32_t>(c) << 8 | d;
}

// Every combination of VLAN tags, addresses, protocols and sizes the
// expressions distinguish.
inline std::vector<Bytes> hand_built_frames() {
  std::vector<Bytes> out;
  const std::vector<std::vector<uint16_t>> tags = {{}, {100}, {200, 300}};
  const uint32_t v4_pairs[][2] = {{ip(10, 0, 0, 1), ip(10, 0, 0, 2)},
                                  {ip(192, 168, 3, 4), ip(172, 16, 0, 1)},
                                  {ip(10, 77, 0, 1), ip(224, 0, 0, 251)}};
  for (const auto& vlans : tags) {
    for (size_t payload : {size_t{4}, size_t{700}}) {
      for (const auto& pair : v4_pairs) {
        auto v4 = [&](uint8_t proto, const Bytes& l4, uint16_t frag = 0, bool opts = false) {
          Bytes f = ether(0x0800, vlans);
          append(f, ipv4(proto, pair[0], pair[1], l4, frag, opts));
          out.push_back(f);
        };
        v4(17, udp(40000, 53, payload));
        v4(17, udp(53, 5300, payload));
        v4(17, udp(1024, 1025, payload), 0, true);
        v4(6, tcp(40001, 80, 0x02, payload));
        v4(6, tcp(80, 40001, 0x12, payload));
        v4(6, tcp(40002, 443, 0x10, payload));
        v4(6, tcp(2000, 3000, 0x01, payload));
        v4(6, tcp(2001, 3001, 0x04, payload), 0, true);
        v4(1, icmp(8, payload));
        v4(1, icmp(0, payload));
        v4(17, udp(5000, 53, payload), 0x2000);      // first fragment (MF)
        v4(17, filler(payload + 8, 1), 185);        // a later fragment: no UDP header
        v4(6, tcp(22, 8000, 0x18, payload), 0x4000);  // DF only: not a fragment
      }
      auto v6 = [&](uint8_t next, uint8_t src, uint8_t dst, const Bytes& l4, int frag = -1) {
        Bytes f = ether(0x86dd, vlans);
        append(f, ipv6(next, src, dst, l4, frag));
        out.push_back(f);
      };
      v6(17, 2, 1, udp(40000, 53, payload));
      v6(17, 1, 0, udp(5353, 5353, payload));
      v6(6, 1, 2, tcp(443, 40003, 0x11, payload));
      v6(6, 2, 1, tcp(40004, 80, 0x02, payload));
      v6(58, 2, 1, icmp(128, payload));
      v6(58, 1, 0, icmp(135, payload));
      v6(17, 2, 1, udp(7, 1023, payload), 0);     // first fragment
      v6(17, 2, 1, filler(payload + 8, 2), 100);  // a later fragment
    }
    for (uint16_t op : {1, 2}) {
      Bytes f = ether(0x0806, vlans, op == 1 ? 0xff : 1);
      append(f, arp(op, ip(10, 0, 0, 1), ip(10, 0, 0, 2)));
      out.push_back(f);
    }
    out.push_back(ether(0x88cc, vlans, 0xff));  // an ethertype none of the expressions knows, header only
  }
  return out;
}

// libpcap's verdict on a packet with a program compiled by libpcap.
inline uint32_t pcap_verdict(const bpf_program& prog, const uint8_t* pkt, uint32_t caplen, uint32_t wirelen) {
  pcap_pkthdr h{};
  h.caplen = caplen;
  h.len = wirelen;
  return static_cast<uint32_t>(pcap_offline_filter(&prog, &h, pkt));
}

}  // namespace gnio::filter_test
