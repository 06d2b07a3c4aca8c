// SPDX-License-Identifier: Apache-2.0
// gnio/dev/headers.hpp: parsing, checksums, RSS, the echo transform, on
// hand-built frames and on every frame of the real capture data/sample.pcap.
#include "gnio/dev/headers.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "test_util.hpp"

namespace gnio::dev {
namespace {

using backend::testing::data_path;
using backend::testing::drain;
using backend::testing::Frame;
using backend::testing::open_ok;

void put16(std::vector<uint8_t>& f, size_t at, uint16_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}

// An L4 header with the given ports (UDP: 8 bytes, TCP: 20 bytes).
std::vector<uint8_t> l4_ports(uint8_t proto, uint16_t sport, uint16_t dport, size_t payload) {
  std::vector<uint8_t> h(proto == 6 ? 20 : 8, 0);
  put16(h, 0, sport);
  put16(h, 2, dport);
  if (proto == 6) h[12] = 0x50;
  if (proto == 17) put16(h, 4, static_cast<uint16_t>(8 + payload));
  for (size_t i = 0; i < payload; ++i) h.push_back(static_cast<uint8_t>(i * 7 + 1));
  return h;
}

// Ethernet + IPv4 (no options) + `l4`, checksums filled in.
std::vector<uint8_t> ipv4_frame(std::array<uint8_t, 4> src, std::array<uint8_t, 4> dst, uint8_t proto,
                                const std::vector<uint8_t>& l4) {
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00};
  std::vector<uint8_t> ip = {0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, proto, 0, 0};
  ip.insert(ip.end(), src.begin(), src.end());
  ip.insert(ip.end(), dst.begin(), dst.end());
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), l4.begin(), l4.end());
  put16(f, 16, static_cast<uint16_t>(20 + l4.size()));
  EXPECT_EQ(update_checksums(f.data(), static_cast<uint32_t>(f.size())), HeaderStatus::Ok);
  return f;
}

// Ethernet + IPv6 (no extension headers) + `l4`, checksums filled in.
std::vector<uint8_t> ipv6_frame(std::array<uint8_t, 16> src, std::array<uint8_t, 16> dst, uint8_t next,
                                const std::vector<uint8_t>& l4) {
  std::vector<uint8_t> f = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xDD,
                            0x60, 0, 0, 0, 0, 0, next, 64};
  f.insert(f.end(), src.begin(), src.end());
  f.insert(f.end(), dst.begin(), dst.end());
  f.insert(f.end(), l4.begin(), l4.end());
  put16(f, 18, static_cast<uint16_t>(l4.size()));
  EXPECT_EQ(update_checksums(f.data(), static_cast<uint32_t>(f.size())), HeaderStatus::Ok);
  return f;
}

// Inserts VLAN tags with the given TPIDs, outermost first; tag i has TCI 100 + i.
std::vector<uint8_t> with_vlans(std::vector<uint8_t> f, const std::vector<uint16_t>& tpids) {
  for (size_t i = tpids.size(); i-- > 0;) {
    std::vector<uint8_t> tag = {static_cast<uint8_t>(tpids[i] >> 8), static_cast<uint8_t>(tpids[i]), 0,
                                static_cast<uint8_t>(100 + i)};
    f.insert(f.begin() + 12, tag.begin(), tag.end());
  }
  return f;
}

uint32_t len_of(const std::vector<uint8_t>& f) { return static_cast<uint32_t>(f.size()); }

TEST(Headers, ParsesIpv4UdpOffsets) {
  auto f = ipv4_frame({10, 0, 0, 1}, {10, 0, 0, 2}, 17, l4_ports(17, 1000, 2000, 10));
  ParsedPacket pp;
  ASSERT_TRUE(parse_packet(f.data(), len_of(f), pp));
  EXPECT_EQ(pp.flags, bit(PacketFlags::L2Ether) | bit(PacketFlags::L3Ipv4) | bit(PacketFlags::L4Udp));
  EXPECT_EQ(pp.l3_offset, 14);
  EXPECT_EQ(pp.l4_offset, 34);
  EXPECT_EQ(pp.payload_offset, 42);
  EXPECT_EQ(pp.l3_end, 52u);
  EXPECT_EQ(pp.l4_proto, 17);
}

TEST(Headers, ParsesOneAndTwoVlanTags) {
  auto base = ipv4_frame({10, 0, 0, 1}, {10, 0, 0, 2}, 6, l4_ports(6, 1000, 2000, 4));
  auto one = with_vlans(base, {0x8100});
  ParsedPacket pp;
  ASSERT_TRUE(parse_packet(one.data(), len_of(one), pp));
  EXPECT_TRUE(has_flag(pp.flags, PacketFlags::Vlan));
  EXPECT_TRUE(has_flag(pp.flags, PacketFlags::L4Tcp));
  EXPECT_EQ(pp.vlan_count, 1);
  EXPECT_EQ(pp.vlan_tci[0], 100);
  EXPECT_EQ(pp.l3_offset, 18);
  EXPECT_EQ(pp.payload_offset, 18 + 20 + 20);

  auto two = with_vlans(base, {0x88A8, 0x8100});
  ASSERT_TRUE(parse_packet(two.data(), len_of(two), pp));
  EXPECT_EQ(pp.vlan_count, 2);
  EXPECT_EQ(pp.vlan_tci[0], 100);
  EXPECT_EQ(pp.vlan_tci[1], 101);
  EXPECT_EQ(pp.l3_offset, 22);
  EXPECT_EQ(pp.ethertype, 0x0800);
  EXPECT_EQ(classify(two.data(), len_of(two)) & bit(PacketFlags::L4CsumGood), bit(PacketFlags::L4CsumGood));

  // A third tag is not followed: the frame is L2 only.
  auto three = with_vlans(base, {0x88A8, 0x8100, 0x8100});
  ASSERT_TRUE(parse_packet(three.data(), len_of(three), pp));
  EXPECT_EQ(pp.flags, bit(PacketFlags::L2Ether) | bit(PacketFlags::Vlan));
}

TEST(Headers, ParsesIpv4OptionsAndIcmp) {
  std::vector<uint8_t> icmp = {8, 0, 0, 0, 0, 1, 0, 1, 'p', 'i', 'n', 'g'};
  auto f = ipv4_frame({10, 0, 0, 1}, {10, 0, 0, 2}, 1, icmp);
  // Insert 4 option bytes (NOP NOP NOP EOL): IHL 6.
  f.insert(f.begin() + 34, {1, 1, 1, 0});
  f[14] = 0x46;
  put16(f, 16, static_cast<uint16_t>(24 + icmp.size()));
  ASSERT_EQ(update_checksums(f.data(), len_of(f)), HeaderStatus::Ok);
  ParsedPacket pp;
  ASSERT_TRUE(parse_packet(f.data(), len_of(f), pp));
  EXPECT_EQ(pp.l4_offset, 38);
  EXPECT_EQ(pp.payload_offset, 46);
  EXPECT_EQ(classify(f.data(), len_of(f)),
            bit(PacketFlags::L2Ether) | bit(PacketFlags::L3Ipv4) | bit(PacketFlags::L4Icmp) |
                bit(PacketFlags::L3CsumGood) | bit(PacketFlags::L4CsumGood));
}

TEST(Headers, ParsesIpv6ExtensionHeadersAndFragments) {
  std::array<uint8_t, 16> a{}, b{};
  a[15] = 1;
  b[15] = 2;
  auto udp = l4_ports(17, 53, 5353, 6);
  // Hop-by-hop (8 bytes, next = UDP) in front of UDP.
  std::vector<uint8_t> hbh = {17, 0, 1, 4, 0, 0, 0, 0};
  hbh.insert(hbh.end(), udp.begin(), udp.end());
  auto f = ipv6_frame(a, b, 0, hbh);
  ParsedPacket pp;
  ASSERT_TRUE(parse_packet(f.data(), len_of(f), pp));
  EXPECT_TRUE(has_flag(pp.flags, PacketFlags::L4Udp));
  EXPECT_EQ(pp.l4_offset, 14 + 40 + 8);
  EXPECT_TRUE(has_flag(classify(f.data(), len_of(f)), PacketFlags::L4CsumGood));

  // First fragment: UDP header present, checksum not checkable.
  std::vector<uint8_t> frag = {17, 0, 0x00, 0x01, 0, 0, 0, 7};
  frag.insert(frag.end(), udp.begin(), udp.end());
  auto first = ipv6_frame(a, b, 44, frag);
  uint32_t flags = classify(first.data(), len_of(first));
  EXPECT_TRUE(has_flag(flags, PacketFlags::Fragment));
  EXPECT_TRUE(has_flag(flags, PacketFlags::L4Udp));
  EXPECT_FALSE(has_flag(flags, PacketFlags::L4CsumGood) || has_flag(flags, PacketFlags::L4CsumBad));

  // A later fragment (offset 8): no L4 header.
  frag[2] = 0x00;
  frag[3] = 0x08;
  auto later = ipv6_frame(a, b, 44, frag);
  ASSERT_TRUE(parse_packet(later.data(), len_of(later), pp));
  EXPECT_EQ(pp.flags, bit(PacketFlags::L2Ether) | bit(PacketFlags::L3Ipv6) | bit(PacketFlags::Fragment));

  // ESP: another protocol.
  auto esp = ipv6_frame(a, b, 50, std::vector<uint8_t>(16, 0xAB));
  ASSERT_TRUE(parse_packet(esp.data(), len_of(esp), pp));
  EXPECT_TRUE(has_flag(pp.flags, PacketFlags::L4Other));
}

TEST(Headers, EveryShortPrefixIsTruncatedNotOverread) {
  auto frames = {ipv4_frame({10, 0, 0, 1}, {10, 0, 0, 2}, 6, l4_ports(6, 1, 2, 30)),
                 with_vlans(ipv6_frame({}, {}, 17, l4_ports(17, 1, 2, 30)), {0x8100, 0x8100})};
  for (const auto& f : frames) {
    for (uint32_t len = 0; len < f.size(); ++len) {
      // An exact-size copy, so reading past `len` would leave the allocation.
      std::vector<uint8_t> cut(f.begin(), f.begin() + len);
      ParsedPacket pp;
      EXPECT_FALSE(parse_packet(cut.data(), len, pp)) << "len " << len;
      EXPECT_TRUE(has_flag(pp.flags, PacketFlags::Truncated)) << "len " << len;
      EXPECT_EQ(swap_addresses(cut.data(), len), HeaderStatus::Truncated);
      EXPECT_EQ(rss_hash(cut.data(), len), 0u);
    }
  }
}

TEST(Headers, MalformedHeadersAreRejected) {
  auto f = ipv4_frame({10, 0, 0, 1}, {10, 0, 0, 2}, 17, l4_ports(17, 1, 2, 8));
  auto bad_ihl = f;
  bad_ihl[14] = 0x44;  // IHL 4: under the 20-byte minimum
  ParsedPacket pp;
  EXPECT_FALSE(parse_packet(bad_ihl.data(), len_of(bad_ihl), pp));
  auto bad_version = f;
  bad_version[14] = 0x65;
  EXPECT_FALSE(parse_packet(bad_version.data(), len_of(bad_version), pp));
  auto arp = f;
  arp[12] = 0x08;
  arp[13] = 0x06;
  ASSERT_TRUE(parse_packet(arp.data(), len_of(arp), pp));
  EXPECT_EQ(pp.flags, bit(PacketFlags::L2Ether));
  EXPECT_EQ(swap_addresses(arp.data(), len_of(arp)), HeaderStatus::Unsupported);
  EXPECT_EQ(arp, [&] {
    auto a = f;
    a[12] = 0x08;
    a[13] = 0x06;
    return a;
  }());
}

TEST(Headers, ChecksumDetectsACorruptedByte) {
  auto f = ipv4_frame({192, 168, 1, 1}, {192, 168, 1, 2}, 17, l4_ports(17, 4000, 5000, 40));
  uint32_t good = bit(PacketFlags::L3CsumGood) | bit(PacketFlags::L4CsumGood);
  EXPECT_EQ(classify(f.data(), len_of(f)) & good, good);

  auto payload = f;
  payload[50] ^= 0x01;
  uint32_t flags = classify(payload.data(), len_of(payload));
  EXPECT_TRUE(has_flag(flags, PacketFlags::L3CsumGood));
  EXPECT_TRUE(has_flag(flags, PacketFlags::L4CsumBad));

  auto ttl = f;
  ttl[22] -= 1;
  flags = classify(ttl.data(), len_of(ttl));
  EXPECT_TRUE(has_flag(flags, PacketFlags::L3CsumBad));
  EXPECT_TRUE(has_flag(flags, PacketFlags::L4CsumGood));  // TTL is not in the pseudo-header

  ASSERT_EQ(update_checksums(payload.data(), len_of(payload)), HeaderStatus::Ok);
  EXPECT_EQ(classify(payload.data(), len_of(payload)) & good, good);

  // A zero UDP checksum over IPv4 means "none": neither good nor bad.
  auto none = f;
  none[40] = none[41] = 0;
  flags = classify(none.data(), len_of(none));
  EXPECT_FALSE(has_flag(flags, PacketFlags::L4CsumGood) || has_flag(flags, PacketFlags::L4CsumBad));
}

TEST(Headers, InternetChecksumKnownAnswer) {
  // RFC 1071 section 3 example: the sum of these words is 0xddf2.
  const uint8_t words[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(ones_complement_sum(words, sizeof(words)), 0xddf2);
  EXPECT_EQ(internet_checksum(words, sizeof(words)), 0x220d);
  // An odd trailing byte is padded with zero.
  const uint8_t odd[] = {0x12, 0x34, 0x56};
  EXPECT_EQ(ones_complement_sum(odd, 3), 0x1234 + 0x5600);
}

// The verification suite of the Microsoft RSS specification (Toeplitz hash
// with the default key), IPv4 and IPv6 with and without TCP ports.
TEST(Headers, RssHashMatchesMicrosoftVerificationSuite) {
  struct V4 {
    std::array<uint8_t, 4> src, dst;
    uint16_t sport, dport;
    uint32_t ip_only, with_tcp;
  };
  const V4 v4[] = {
      {{66, 9, 149, 187}, {161, 142, 100, 80}, 2794, 1766, 0x323e8fc2, 0x51ccc178},
      {{199, 92, 111, 2}, {65, 69, 140, 83}, 14230, 4739, 0xd718262a, 0xc626b0ea},
      {{24, 19, 198, 95}, {12, 22, 207, 184}, 12898, 38024, 0xd2d0a5de, 0x5c2b394a},
      {{38, 27, 205, 30}, {209, 142, 163, 6}, 48228, 2217, 0x82989176, 0xafc7327f},
      {{153, 39, 163, 191}, {202, 188, 127, 2}, 44251, 1303, 0x5d1809c5, 0x10e828a2},
  };
  for (const V4& v : v4) {
    auto tcp = ipv4_frame(v.src, v.dst, 6, l4_ports(6, v.sport, v.dport, 0));
    EXPECT_EQ(rss_hash(tcp.data(), len_of(tcp)), v.with_tcp);
    auto icmp = ipv4_frame(v.src, v.dst, 1, std::vector<uint8_t>(8, 0));
    EXPECT_EQ(rss_hash(icmp.data(), len_of(icmp)), v.ip_only);
  }

  struct V6 {
    std::array<uint8_t, 16> src, dst;
    uint16_t sport, dport;
    uint32_t ip_only, with_tcp;
  };
  const V6 v6[] = {
      {{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7},
       {0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1},
       2794, 1766, 0x2cc18cd5, 0x40207d3d},
      {{0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef, 0xab},
       {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
       14230, 4739, 0x0f0c461c, 0xdde51bbf},
      {{0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
       {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
       44251, 38024, 0x4b61e985, 0x02d1feef},
  };
  for (const V6& v : v6) {
    auto tcp = ipv6_frame(v.src, v.dst, 6, l4_ports(6, v.sport, v.dport, 0));
    EXPECT_EQ(rss_hash(tcp.data(), len_of(tcp)), v.with_tcp);
    auto icmp = ipv6_frame(v.src, v.dst, 58, std::vector<uint8_t>(8, 0));
    EXPECT_EQ(rss_hash(icmp.data(), len_of(icmp)), v.ip_only);
  }
}

TEST(Headers, SwapTwiceIsIdentityAndKeepsChecksums) {
  std::array<uint8_t, 16> a{}, b{};
  a[0] = 0xfd;
  a[15] = 1;
  b[0] = 0xfd;
  b[15] = 2;
  std::vector<std::vector<uint8_t>> frames = {
      ipv4_frame({10, 1, 2, 3}, {10, 4, 5, 6}, 17, l4_ports(17, 1111, 2222, 33)),
      ipv4_frame({10, 1, 2, 3}, {10, 4, 5, 6}, 6, l4_ports(6, 1111, 2222, 33)),
      with_vlans(ipv6_frame(a, b, 17, l4_ports(17, 1111, 2222, 33)), {0x8100}),
      ipv6_frame(a, b, 6, l4_ports(6, 1111, 2222, 33)),
  };
  for (const auto& f : frames) {
    auto g = f;
    ASSERT_EQ(swap_addresses(g.data(), len_of(g)), HeaderStatus::Ok);
    EXPECT_NE(g, f);
    uint32_t flags = classify(g.data(), len_of(g));
    EXPECT_TRUE(has_flag(flags, PacketFlags::L4CsumGood));
    EXPECT_FALSE(has_flag(flags, PacketFlags::L3CsumBad));
    ParsedPacket pp;
    ASSERT_TRUE(parse_packet(g.data(), len_of(g), pp));
    EXPECT_EQ(0, std::memcmp(g.data(), f.data() + 6, 6));  // dst MAC = old src MAC
    EXPECT_EQ(g[pp.l4_offset], f[pp.l4_offset + 2]);      // src port = old dst port
    ASSERT_EQ(swap_addresses(g.data(), len_of(g)), HeaderStatus::Ok);
    EXPECT_EQ(g, f);
  }
}

TEST(Headers, SwapTurnsEchoRequestIntoReply) {
  std::vector<uint8_t> req4 = {8, 0, 0, 0, 0x12, 0x34, 0, 9, 'a', 'b', 'c'};
  auto f4 = ipv4_frame({10, 0, 0, 1}, {10, 0, 0, 2}, 1, req4);
  ASSERT_EQ(swap_addresses(f4.data(), len_of(f4)), HeaderStatus::Ok);
  EXPECT_EQ(f4[34], 0);  // echo reply
  EXPECT_EQ(f4[26], 10);
  EXPECT_EQ(f4[29], 2);  // source is the old destination
  EXPECT_TRUE(has_flag(classify(f4.data(), len_of(f4)), PacketFlags::L4CsumGood));

  std::array<uint8_t, 16> a{}, b{};
  a[15] = 1;
  b[15] = 2;
  std::vector<uint8_t> req6 = {128, 0, 0, 0, 0x12, 0x34, 0, 9, 'a', 'b', 'c'};
  auto f6 = ipv6_frame(a, b, 58, req6);
  ASSERT_EQ(swap_addresses(f6.data(), len_of(f6)), HeaderStatus::Ok);
  EXPECT_EQ(f6[54], 129);
  EXPECT_TRUE(has_flag(classify(f6.data(), len_of(f6)), PacketFlags::L4CsumGood));

  // A reply is not an echo request: only addresses are swapped.
  auto again = f6;
  ASSERT_EQ(swap_addresses(again.data(), len_of(again)), HeaderStatus::Ok);
  EXPECT_EQ(again[54], 129);
}

TEST(Headers, Fnv1a64KnownAnswers) {
  EXPECT_EQ(fnv1a64(nullptr, 0), 0xcbf29ce484222325ull);
  const uint8_t a[] = {'a'};
  EXPECT_EQ(fnv1a64(a, 1), 0xaf63dc4c8601ec8cull);
  const uint8_t foobar[] = {'f', 'o', 'o', 'b', 'a', 'r'};
  EXPECT_EQ(fnv1a64(foobar, 6), 0x85944171f73967e8ull);
  EXPECT_EQ(fnv1a64(foobar + 3, 3, fnv1a64(foobar, 3)), fnv1a64(foobar, 6));
}

// Counts recorded with tshark (reassembly off) when data/sample.pcap was
// made; see data/README.md.
TEST(Headers, SamplePcapProtocolCounts) {
  auto b = open_ok("pcap:" + data_path("sample.pcap"));
  ASSERT_TRUE(b);
  std::vector<Frame> frames = drain(*b, 0);
  ASSERT_EQ(frames.size(), 226u);

  auto count = [&](auto pred) {
    size_t n = 0;
    for (const Frame& f : frames) {
      ParsedPacket pp;
      EXPECT_TRUE(parse_packet(f.bytes.data(), len_of(f.bytes), pp));
      uint32_t c = classify(f.bytes.data(), len_of(f.bytes));
      n += pred(pp, c) ? 1 : 0;
    }
    return n;
  };
  auto both = [](PacketFlags l3, PacketFlags l4) {
    return [=](const ParsedPacket& pp, uint32_t) { return has_flag(pp.flags, l3) && has_flag(pp.flags, l4); };
  };
  auto one = [](PacketFlags f) { return [=](const ParsedPacket&, uint32_t c) { return has_flag(c, f); }; };

  EXPECT_EQ(count(one(PacketFlags::L2Ether)), 226u);
  EXPECT_EQ(count(one(PacketFlags::Vlan)), 0u);
  EXPECT_EQ(count(one(PacketFlags::L3Ipv4)), 137u);
  EXPECT_EQ(count(one(PacketFlags::L3Ipv6)), 89u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv4, PacketFlags::L4Udp)), 55u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv6, PacketFlags::L4Udp)), 27u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv4, PacketFlags::L4Tcp)), 46u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv6, PacketFlags::L4Tcp)), 26u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv4, PacketFlags::L4Icmp)), 32u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv6, PacketFlags::L4Icmpv6)), 32u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv4, PacketFlags::Fragment)), 6u);
  EXPECT_EQ(count(both(PacketFlags::L3Ipv6, PacketFlags::Fragment)), 6u);
  EXPECT_EQ(count(one(PacketFlags::L4Other)), 0u);
  EXPECT_EQ(count([](const ParsedPacket& pp, uint32_t) {
              return has_flag(pp.flags, PacketFlags::L3Ipv4) && pp.l4_offset - pp.l3_offset > 20;
            }),
            2u);  // the datagrams sent with IP options
  EXPECT_EQ(count([](const ParsedPacket& pp, uint32_t) {
              return has_flag(pp.flags, PacketFlags::L4Tcp) && pp.payload_offset < pp.l3_end;
            }),
            28u);  // TCP segments with payload

  // The IPv4 header checksum and ICMP checksums are computed in software
  // and valid. TCP/UDP checksums on loopback are left to "offload": the
  // field holds only the pseudo-header sum, which classify() calls partial
  // (tshark calls these 150 bad: 72 TCP + 78 UDP, see data/README.md).
  EXPECT_EQ(count(one(PacketFlags::L3CsumGood)), 137u);
  EXPECT_EQ(count(one(PacketFlags::L3CsumBad)), 0u);
  EXPECT_EQ(count(one(PacketFlags::L4CsumGood)), 64u);
  EXPECT_EQ(count(one(PacketFlags::L4CsumBad)), 0u);
  EXPECT_EQ(count(one(PacketFlags::L4CsumPartial)), 150u);
  EXPECT_EQ(count([](const ParsedPacket& pp, uint32_t c) {
              return !has_flag(pp.flags, PacketFlags::Fragment) && !has_flag(c, PacketFlags::L4CsumGood) &&
                     !has_flag(c, PacketFlags::L4CsumPartial);
            }),
            0u);

  size_t pseudo_only = 0;
  for (const Frame& f : frames) {
    ParsedPacket pp;
    ASSERT_TRUE(parse_packet(f.bytes.data(), len_of(f.bytes), pp));
    if (!has_flag(classify(f.bytes.data(), len_of(f.bytes)), PacketFlags::L4CsumPartial)) continue;
    uint32_t field = pp.l4_offset + (has_flag(pp.flags, PacketFlags::L4Udp) ? 6 : 16);
    uint16_t stored = static_cast<uint16_t>(f.bytes[field] << 8 | f.bytes[field + 1]);
    pseudo_only += stored == pseudo_header_sum(f.bytes.data(), pp) ? 1 : 0;
  }
  EXPECT_EQ(pseudo_only, 150u);
}

TEST(Headers, SamplePcapEchoKeepsChecksumsValid) {
  auto b = open_ok("pcap:" + data_path("sample.pcap"));
  ASSERT_TRUE(b);
  size_t requests = 0;
  for (const Frame& f : drain(*b, 0)) {
    auto g = f.bytes;
    ASSERT_EQ(update_checksums(g.data(), len_of(g)), HeaderStatus::Ok);
    uint32_t before = classify(g.data(), len_of(g));
    EXPECT_FALSE(has_flag(before, PacketFlags::L3CsumBad) || has_flag(before, PacketFlags::L4CsumBad));
    ParsedPacket pp;
    ASSERT_TRUE(parse_packet(g.data(), len_of(g), pp));
    bool request = (has_flag(pp.flags, PacketFlags::L4Icmp) && g[pp.l4_offset] == 8) ||
                   (has_flag(pp.flags, PacketFlags::L4Icmpv6) && g[pp.l4_offset] == 128);
    requests += request ? 1 : 0;
    auto once = g;
    ASSERT_EQ(swap_addresses(once.data(), len_of(once)), HeaderStatus::Ok);
    EXPECT_EQ(classify(once.data(), len_of(once)), before);
    auto twice = once;
    ASSERT_EQ(swap_addresses(twice.data(), len_of(twice)), HeaderStatus::Ok);
    if (!request) {
      EXPECT_EQ(twice, g);
    } else {
      EXPECT_EQ(once[pp.l4_offset], has_flag(pp.flags, PacketFlags::L4Icmp) ? 0 : 129);
    }
  }
  EXPECT_EQ(requests, 32u);
}

}  // namespace
}  // namespace gnio::dev
