// SPDX-License-Identifier: Apache-2.0
// Captures of other link types become Ethernet frames: each header decoder
// on hand-made records, then every file of data/linktypes/ against tshark's
// reading of the same records.
#include "backends/linktype.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <pcap/pcap.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "recording_sink.hpp"
#include "test_util.hpp"

namespace gnio::backend {
namespace {

using ::testing::HasSubstr;
using testing::data_path;
using testing::open_ok;
using testing::RecordingSink;

std::vector<uint8_t> bytes(std::initializer_list<int> b) { return std::vector<uint8_t>(b.begin(), b.end()); }

std::vector<uint8_t> concat(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<uint8_t> eth_header(const SyntheticL2& l2) { return {l2.eth, l2.eth + kEthHeaderLen}; }

// The first bytes of an IPv4 and an IPv6 header.
const std::vector<uint8_t> kIpv4 = bytes({0x45, 0, 0, 20});
const std::vector<uint8_t> kIpv6 = bytes({0x60, 0, 0, 0});

TEST(LinkType, SllUsesProtocolAddressAndPacketType) {
  // pkttype 1 (broadcast), hatype 1, halen 6, address, protocol ARP.
  auto rec = concat(bytes({0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x06}), bytes({0, 1, 8, 0}));
  auto l2 = synthetic_l2(LinkFraming::Sll, rec);
  ASSERT_TRUE(l2);
  EXPECT_EQ(l2->strip, 16u);
  EXPECT_EQ(eth_header(*l2), bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06}));

  // Multicast sets the group bit of the destination; an address that is
  // not 6 bytes long is not used.
  auto mc = concat(bytes({0, 2, 0, 1, 0, 4, 9, 9, 9, 9, 0, 0, 0, 0, 0x86, 0xdd}), kIpv6);
  l2 = synthetic_l2(LinkFraming::Sll, mc);
  ASSERT_TRUE(l2);
  EXPECT_EQ(eth_header(*l2), bytes({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x86, 0xdd}));
}

TEST(LinkType, SllLlcBecomesAn8023LengthField) {
  std::vector<uint8_t> llc(38, 0x42);
  auto rec = concat(bytes({0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x00, 0x04}), llc);
  auto l2 = synthetic_l2(LinkFraming::Sll, rec);
  ASSERT_TRUE(l2);
  EXPECT_EQ(l2->eth[12], 0);
  EXPECT_EQ(l2->eth[13], 38) << "the type field holds the LLC payload length";

  // CAN (protocol 0x000c), netlink (hatype 824) and a short record are not
  // Ethernet material.
  EXPECT_FALSE(synthetic_l2(LinkFraming::Sll, concat(bytes({0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0x0c}), llc)));
  EXPECT_FALSE(synthetic_l2(LinkFraming::Sll, concat(bytes({0, 0, 3, 0x38, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0}), kIpv4)));
  EXPECT_FALSE(synthetic_l2(LinkFraming::Sll, bytes({0, 0, 0, 1, 0, 6, 2, 0, 0, 0})));
}

TEST(LinkType, Sll2FieldsAreInTheirOwnPlaces) {
  // protocol IPv4, reserved, ifindex 2, hatype 1, pkttype 4 (outgoing), halen 6, address.
  auto rec = concat(bytes({0x08, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 6, 2, 0, 0, 0, 0, 7, 0, 0}), kIpv4);
  auto l2 = synthetic_l2(LinkFraming::Sll2, rec);
  ASSERT_TRUE(l2);
  EXPECT_EQ(l2->strip, 20u);
  EXPECT_EQ(eth_header(*l2), bytes({0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 7, 0x08, 0x00}));
}

TEST(LinkType, NullAndLoopFamiliesInEitherByteOrder) {
  struct Case {
    LinkFraming framing;
    std::vector<uint8_t> header;
    int type;  // -1: malformed
  };
  const Case cases[] = {
      {LinkFraming::Null, bytes({2, 0, 0, 0}), 0x0800},  {LinkFraming::Null, bytes({0, 0, 0, 2}), 0x0800},
      {LinkFraming::Null, bytes({24, 0, 0, 0}), 0x86dd}, {LinkFraming::Null, bytes({0, 0, 0, 28}), 0x86dd},
      {LinkFraming::Null, bytes({30, 0, 0, 0}), 0x86dd}, {LinkFraming::Null, bytes({7, 0, 0, 0}), -1},
      {LinkFraming::Loop, bytes({0, 0, 0, 2}), 0x0800},  {LinkFraming::Loop, bytes({0, 0, 0, 24}), 0x86dd},
      {LinkFraming::Loop, bytes({0, 0, 0, 99}), -1},     {LinkFraming::Null, bytes({2, 0}), -1},
  };
  for (const Case& c : cases) {
    auto l2 = synthetic_l2(c.framing, concat(c.header, kIpv4));
    if (c.type < 0) {
      EXPECT_FALSE(l2) << int(c.header[0]) << " " << int(c.header[3]);
      continue;
    }
    ASSERT_TRUE(l2);
    EXPECT_EQ(l2->strip, 4u);
    EXPECT_EQ(eth_header(*l2), bytes({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, c.type >> 8, c.type & 0xff}));
  }
}

TEST(LinkType, RawIpByVersionNibble) {
  auto type = [](LinkFraming f, const std::vector<uint8_t>& rec) {
    auto l2 = synthetic_l2(f, rec);
    return l2 ? (l2->eth[12] << 8 | l2->eth[13]) : -1;
  };
  EXPECT_EQ(type(LinkFraming::Raw, kIpv4), 0x0800);
  EXPECT_EQ(type(LinkFraming::Raw, kIpv6), 0x86dd);
  EXPECT_EQ(type(LinkFraming::Raw, bytes({0x50, 0})), -1);
  EXPECT_EQ(type(LinkFraming::Ipv4, kIpv4), 0x0800);
  EXPECT_EQ(type(LinkFraming::Ipv4, kIpv6), -1);
  EXPECT_EQ(type(LinkFraming::Ipv6, kIpv6), 0x86dd);
  EXPECT_EQ(type(LinkFraming::Ipv6, kIpv4), -1);
  EXPECT_EQ(synthetic_l2(LinkFraming::Raw, kIpv4)->strip, 0u);
}

TEST(LinkType, WriteEthernetCutsAtMax) {
  auto rec = concat(bytes({0, 0, 0, 2}), kIpv4);
  auto l2 = synthetic_l2(LinkFraming::Null, rec);
  ASSERT_TRUE(l2);
  EXPECT_EQ(max_ethernet_len(LinkFraming::Null, static_cast<uint32_t>(rec.size())), 18u);
  EXPECT_EQ(max_ethernet_len(LinkFraming::Sll2, 19), 0u) << "shorter than its header";
  EXPECT_EQ(max_ethernet_len(LinkFraming::Raw, 20), 34u);
  EXPECT_EQ(max_ethernet_len(LinkFraming::Ethernet, 60), 60u);
  std::vector<uint8_t> out(32, 0xAA);
  EXPECT_EQ(write_ethernet(*l2, rec, out.data(), 64), 18u);
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 12, out.begin() + 19), bytes({0x08, 0, 0x45, 0, 0, 20, 0xAA}));
  std::fill(out.begin(), out.end(), 0xAA);
  EXPECT_EQ(write_ethernet(*l2, rec, out.data(), 15), 15u);
  EXPECT_EQ(out[14], 0x45);
  EXPECT_EQ(out[15], 0xAA);
  EXPECT_EQ(write_ethernet(*l2, rec, out.data(), 10), 10u);
}

TEST(LinkType, UnsupportedLinkTypeNamesItAndItsCause) {
  auto b = open_backend("pcap:" + data_path("linktypes/radiotap.pcap"));
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::InvalidValue);
  EXPECT_THAT(b.status().message(), HasSubstr("radiotap.pcap"));
  EXPECT_THAT(b.status().message(), HasSubstr("link type IEEE802_11_RADIO"));
  EXPECT_THAT(b.status().message(), HasSubstr("monitor mode"));
  EXPECT_THAT(b.status().message(), HasSubstr("LINUX_SLL"));

  auto usb = link_framing(DLT_USB_LINUX_MMAPPED, "usb.pcap");
  ASSERT_FALSE(usb);
  EXPECT_THAT(usb.status().message(), HasSubstr("USB"));
  EXPECT_THAT(usb.status().message(), HasSubstr("usb.pcap"));
}

// One line of tshark fields per record of `path`, or nullopt without tshark.
std::optional<std::vector<std::vector<std::string>>> tshark_fields(const std::string& path,
                                                                   const std::vector<std::string>& fields) {
  std::string cmd = "tshark -n -r '" + path + "' -T fields -E separator=/t -E occurrence=f";
  for (const std::string& f : fields) cmd += " -e " + f;
  cmd += " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (pclose(p) != 0) return std::nullopt;
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) row.push_back(cell);
    row.resize(fields.size());
    rows.push_back(row);
  }
  return rows;
}

// The protocol stack above the link layer: "sll:ethertype:ip:udp:data",
// "eth:ethertype:ip:udp:data" and "ip:udp:data" (link type IPV4, which has
// no link-layer header) all become "ip:udp:data".
std::string above_link(const std::string& protocols) {
  std::string out;
  std::istringstream parts(protocols);
  bool first = true;
  for (std::string p; std::getline(parts, p, ':'); first = false) {
    if ((first && (p == "eth" || p == "sll" || p == "null" || p == "raw")) || p == "ethertype") continue;
    out += (out.empty() ? "" : ":") + p;
  }
  return out;
}

struct LinkTypeFile {
  const char* name;
  uint32_t link_header;                // bytes the original records start with
  std::map<size_t, DropReason> drops;  // record index -> why gnio does not deliver it
};

void PrintTo(const LinkTypeFile& f, std::ostream* os) { *os << f.name; }

class LinkTypeFiles : public ::testing::TestWithParam<LinkTypeFile> {};

// tshark reads each original record with its own link-layer dissector and
// gnio's Ethernet frame (written out by pcap-out) with the Ethernet one:
// the protocol stacks and the IP/ARP/LLC fields must be the same, and each
// frame's length the record's minus its link header plus 14.
TEST_P(LinkTypeFiles, DecodeAsTsharkReadsThem) {
  const LinkTypeFile& file = GetParam();
  const std::string path = data_path(std::string("linktypes/") + file.name);
  const std::vector<std::string> fields = {"frame.len",  "frame.protocols", "ip.src",    "ip.dst",
                                           "ip.len",     "ipv6.src",        "ipv6.dst",  "ipv6.plen",
                                           "udp.dstport", "arp.opcode",     "vlan.id",   "llc.dsap"};
  auto original = tshark_fields(path, fields);
  if (!original) GTEST_SKIP() << "tshark is not installed (apt-get install tshark)";

  auto b = open_ok("pcap:" + path);
  ASSERT_TRUE(b);
  RecordingSink sink(65535);
  testing::drain_into(*b, sink);
  ASSERT_EQ(sink.events.size(), original->size()) << "one event per record";

  std::string out = (std::filesystem::path(::testing::TempDir()) / (std::string("gnio_as_eth_") + file.name)).string();
  std::vector<size_t> delivered;
  {
    auto w = open_ok("pcap-out:" + out);
    ASSERT_TRUE(w);
    for (size_t i = 0; i < sink.events.size(); ++i) {
      const auto& e = sink.events[i];
      auto want = file.drops.find(i);
      if (want != file.drops.end()) {
        EXPECT_EQ(e.dropped, want->second) << "record " << i;
        continue;
      }
      ASSERT_FALSE(e.dropped) << "record " << i << " dropped as " << drop_reason_name(*e.dropped);
      EXPECT_EQ(e.flags, RxFrameSyntheticL2) << "record " << i;
      TxFrame f{e.bytes.data(), static_cast<uint32_t>(e.bytes.size()), e.timestamp_ns};
      ASSERT_EQ(w->tx_burst(0, std::span(&f, 1)).value(), 1u);
      delivered.push_back(i);
    }
  }
  auto converted = tshark_fields(out, fields);
  ASSERT_TRUE(converted);
  ASSERT_EQ(converted->size(), delivered.size());
  for (size_t k = 0; k < delivered.size(); ++k) {
    const auto& o = (*original)[delivered[k]];
    const auto& c = (*converted)[k];
    EXPECT_EQ(std::stoul(c[0]), std::stoul(o[0]) - file.link_header + kEthHeaderLen) << "record " << delivered[k];
    EXPECT_EQ(above_link(c[1]), above_link(o[1])) << "record " << delivered[k] << ": " << o[1] << " vs " << c[1];
    EXPECT_THAT(c[1], ::testing::StartsWith("eth:"));
    for (size_t j = 2; j < fields.size(); ++j) EXPECT_EQ(c[j], o[j]) << fields[j] << " of record " << delivered[k];
  }
  std::filesystem::remove(out);
}

INSTANTIATE_TEST_SUITE_P(
    Captures, LinkTypeFiles,
    ::testing::Values(LinkTypeFile{"sll.pcap", 16, {{6, DropReason::Malformed}, {7, DropReason::Malformed}, {8, DropReason::Empty}}},
                      LinkTypeFile{"sll2.pcap", 20, {{6, DropReason::Malformed}, {7, DropReason::Malformed}, {8, DropReason::Empty}}},
                      LinkTypeFile{"null-le.pcap", 4, {{4, DropReason::Malformed}}},
                      LinkTypeFile{"null-be.pcap", 4, {{4, DropReason::Malformed}}},
                      LinkTypeFile{"loop.pcap", 4, {{2, DropReason::Malformed}}},
                      LinkTypeFile{"raw.pcap", 0, {{2, DropReason::Malformed}}},
                      LinkTypeFile{"ipv4.pcap", 0, {{2, DropReason::Malformed}}},
                      LinkTypeFile{"ipv6.pcap", 0, {}}),
    [](const ::testing::TestParamInfo<LinkTypeFile>& info) {
      std::string n = info.param.name;
      n = n.substr(0, n.find('.'));
      std::replace(n.begin(), n.end(), '-', '_');
      return n;
    });

}  // namespace
}  // namespace gnio::backend
