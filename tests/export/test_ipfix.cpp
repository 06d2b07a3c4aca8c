// SPDX-License-Identifier: Apache-2.0
// The IPFIX encoder against RFC 7011's byte layout (header, template set,
// enterprise field specifiers, variable-length fields, RFC 5610 type
// records), the Exporter's numbering, template resends and loss counts over
// real loopback sockets, and Debian's ipfixDump (libfixbuf) reading what it
// sent without a complaint.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gnio/ipfix.hpp"
#include "udp_sink.hpp"

namespace gnio::ipfix {
namespace {

uint16_t be16(const std::vector<uint8_t>& b, size_t at) { return static_cast<uint16_t>(b[at] << 8 | b[at + 1]); }
uint32_t be32(const std::vector<uint8_t>& b, size_t at) { return uint32_t{be16(b, at)} << 16 | be16(b, at + 2); }

const std::vector<Template> kTemplates = {
    {256, {{8, 4, 0}, {12, 4, 0}, {2, 8, 0}, {2, 8, kReversePen}}},
    {257, {{1, kVariableLength, kGnioPen}, {2, 2, kGnioPen}}},
};
const std::vector<ElementInfo> kTypes = {
    {1, kGnioPen, DataType::String, Semantics::Default, "dnsQueryName", "the name asked"},
    {2, kGnioPen, DataType::Unsigned16, Semantics::Identifier, "dnsQueryType", ""},
};

TEST(IpfixEncoding, HeaderTemplateSetAndFieldSpecifiers) {
  MessageWriter w;
  w.begin(0x5f000000, 7, 42);
  write_templates(w, kTemplates);
  auto m = w.finish();
  std::vector<uint8_t> b(m.begin(), m.end());
  // Header (RFC 7011 §3.1): version 10, length, export time, sequence, domain.
  ASSERT_EQ(be16(b, 0), 10);
  EXPECT_EQ(be16(b, 2), b.size());
  EXPECT_EQ(be32(b, 4), 0x5f000000u);
  EXPECT_EQ(be32(b, 8), 7u);
  EXPECT_EQ(be32(b, 12), 42u);
  // Template set (§3.4.1): id 2, its length, then template 256 with 4 fields.
  EXPECT_EQ(be16(b, 16), 2);
  EXPECT_EQ(be16(b, 18), b.size() - 16);
  EXPECT_EQ(be16(b, 20), 256);
  EXPECT_EQ(be16(b, 22), 4);
  EXPECT_EQ(be16(b, 24), 8);   // sourceIPv4Address, 4 bytes
  EXPECT_EQ(be16(b, 26), 4);
  EXPECT_EQ(be16(b, 32), 2);   // packetDeltaCount, IANA: no enterprise bit
  EXPECT_EQ(be16(b, 36), 0x8002);  // reverse packetDeltaCount: enterprise bit, then PEN 29305
  EXPECT_EQ(be16(b, 38), 8);
  EXPECT_EQ(be32(b, 40), 29305u);
  EXPECT_EQ(be16(b, 44), 257);
  EXPECT_EQ(be16(b, 46), 2);
  EXPECT_EQ(be16(b, 48), 0x8001);
  EXPECT_EQ(be16(b, 50), 65535);  // variable length
  EXPECT_EQ(be32(b, 52), kGnioPen);
  EXPECT_EQ(b.size(), 64u);
}

TEST(IpfixEncoding, VariableLengthFieldsShortAndLong) {
  RecordWriter r;
  r.varlen("abc");
  ASSERT_EQ(r.data().size(), 4u);
  EXPECT_EQ(r.data()[0], 3);
  r.clear();
  const std::string long_text(300, 'x');
  r.varlen(long_text);
  ASSERT_EQ(r.data().size(), 303u);  // 255, then a 2-byte length (RFC 7011 §7)
  EXPECT_EQ(r.data()[0], 255);
  EXPECT_EQ(r.data()[1], 300 >> 8);
  EXPECT_EQ(r.data()[2], 300 & 0xff);
  r.clear();
  r.varlen(std::string(254, 'y'));
  EXPECT_EQ(r.data()[0], 254);
  EXPECT_EQ(r.data().size(), 255u);
}

TEST(IpfixEncoding, TypeInformationIsAnOptionsTemplateAndOneRecordPerElement) {
  MessageWriter w;
  w.begin(1, 0, 1);
  write_type_information(w, 300, kTypes);
  auto m = w.finish();
  std::vector<uint8_t> b(m.begin(), m.end());
  // Options template set (§3.4.2.2): id 3, template 300, 9 fields, 2 of them scope.
  EXPECT_EQ(be16(b, 16), 3);
  const size_t opt_len = be16(b, 18);
  EXPECT_EQ(be16(b, 20), 300);
  EXPECT_EQ(be16(b, 22), 9);
  EXPECT_EQ(be16(b, 24), 2);
  EXPECT_EQ(be16(b, 26), 346);  // privateEnterpriseNumber
  EXPECT_EQ(be16(b, 30), 303);  // informationElementId
  EXPECT_EQ(be16(b, 34), 339);  // informationElementDataType
  EXPECT_EQ(be16(b, 38), 344);  // informationElementSemantics
  EXPECT_EQ(be16(b, 54), 341);  // informationElementName, variable
  EXPECT_EQ(be16(b, 56), 65535);
  ASSERT_EQ(opt_len, 46u);
  // The data set of template 300: PEN, id 1, type 13 (string), semantics 0, no units or range, "dnsQueryName".
  const size_t d = 16 + opt_len;
  EXPECT_EQ(be16(b, d), 300);
  EXPECT_EQ(be16(b, d + 2), b.size() - d);
  EXPECT_EQ(be32(b, d + 4), kGnioPen);
  EXPECT_EQ(be16(b, d + 8), 1);
  EXPECT_EQ(b[d + 10], 13);
  EXPECT_EQ(b[d + 11], 0);
  EXPECT_EQ(b[d + 30], 12);
  EXPECT_EQ(std::string(b.begin() + static_cast<long>(d) + 31, b.begin() + static_cast<long>(d) + 43), "dnsQueryName");
  EXPECT_EQ(b[d + 43], 14);  // the description
  EXPECT_EQ(be16(b, d + 62), 2);
  EXPECT_EQ(b[d + 64], 2);  // unsigned16
  EXPECT_EQ(b[d + 65], 4);  // identifier
}

TEST(IpfixEncoding, CollectorUrls) {
  auto u = parse_collector("udp://127.0.0.1:4739");
  ASSERT_TRUE(u) << u.status().to_string();
  EXPECT_EQ(u->transport, Collector::Transport::Udp);
  EXPECT_EQ(u->port, 4739);
  auto t = parse_collector("tcp://[::1]:9995");
  ASSERT_TRUE(t) << t.status().to_string();
  EXPECT_EQ(t->host, "::1");
  EXPECT_EQ(t->text(), "tcp://[::1]:9995");
  for (const char* bad : {"127.0.0.1:4739", "udp://host", "udp://h:0", "udp://h:70000", "sctp://h:1", "udp://:5"}) {
    auto r = parse_collector(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

using UdpPeer = gnio::test::LoopbackUdp;

std::vector<uint8_t> record(uint32_t i) {
  RecordWriter r;
  r.u32(0x0a000000 | i);
  r.u32(0x0a000001);
  r.u64(i);
  r.u64(2 * i);
  return {r.data().begin(), r.data().end()};
}

TEST(IpfixExporter, UdpNumbersDataRecordsAndSendsTemplatesFirst) {
  UdpPeer peer;
  auto e = Exporter::open(*parse_collector("udp://127.0.0.1:" + std::to_string(peer.port)), kTemplates, kTypes);
  ASSERT_TRUE(e) << e.status().to_string();
  for (uint32_t i = 0; i < 500; ++i) e->add(256, record(i));
  e->flush();
  auto msgs = peer.receive_all();
  ASSERT_GE(msgs.size(), 3u);
  EXPECT_EQ(be16(msgs[0], 16), kTemplateSetId);
  // The templates message carries the 2 type records, data records too.
  uint32_t expected_sequence = static_cast<uint32_t>(kTypes.size());
  uint64_t records = 0;
  for (size_t i = 1; i < msgs.size(); ++i) {
    const auto& m = msgs[i];
    EXPECT_LE(m.size(), 1400u);
    EXPECT_EQ(be16(m, 2), m.size());
    EXPECT_EQ(be32(m, 8), expected_sequence) << "message " << i;
    EXPECT_EQ(be16(m, 16), 256);
    const uint32_t in_message = (be16(m, 18) - 4) / 24;
    records += in_message;
    expected_sequence += in_message;
  }
  EXPECT_EQ(records, 500u);
  EXPECT_EQ(e->stats().records_sent, 500u);
  EXPECT_EQ(e->stats().lost_total(), 0u);
}

TEST(IpfixExporter, UdpCollectorAwayIsCountedAndGetsTemplatesWhenBack) {
  uint16_t port;
  std::optional<Exporter> e;
  {
    UdpPeer gone;
    port = gone.port;
    auto opened = Exporter::open(*parse_collector("udp://127.0.0.1:" + std::to_string(port)), kTemplates, kTypes);
    ASSERT_TRUE(opened);
    e = std::move(*opened);
  }
  // The port is closed: the first datagram draws an ICMP unreachable, the
  // next sends are refused and counted.
  for (int round = 0; round < 5; ++round) {
    e->add(256, record(1));
    e->flush();
  }
  EXPECT_GE(e->stats().lost[static_cast<size_t>(LossReason::CollectorDown)], 3u);
  EXPECT_EQ(e->stats().records_sent + e->stats().lost_total(), 5u);
  // The collector is back on the same port: templates come before its first data.
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  e->add(256, record(2));
  e->flush();
  std::vector<uint8_t> b(65536);
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  b.resize(static_cast<size_t>(recv(fd, b.data(), b.size(), 0)));
  EXPECT_EQ(be16(b, 16), kTemplateSetId);
  ::close(fd);
}

// A TCP listener that accepts one connection and does not read it.
struct TcpPeer {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  uint16_t port = 0;
  TcpPeer() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd, 4);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~TcpPeer() { ::close(fd); }
};

TEST(IpfixExporter, TcpCollectorThatStopsReadingIsBackPressureAndCountedLoss) {
  TcpPeer peer;
  ExporterOptions o;
  o.tcp_queue_bytes = 64 * 1024;
  o.send_buffer = 16 * 1024;
  auto e = Exporter::open(*parse_collector("tcp://127.0.0.1:" + std::to_string(peer.port)), kTemplates, kTypes, o);
  ASSERT_TRUE(e) << e.status().to_string();
  EXPECT_TRUE(e->connected());
  const int conn = accept(peer.fd, nullptr, nullptr);
  ASSERT_GE(conn, 0);
  const int small = 4096;
  setsockopt(conn, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  const uint64_t n = 200000;
  for (uint64_t i = 0; i < n; ++i) {
    e->add(256, record(static_cast<uint32_t>(i)));
    if (i % 1000 == 0) e->poll();
  }
  e->flush();
  const ExporterStats& s = e->stats();
  EXPECT_GT(s.backpressure, 0u);
  EXPECT_GT(s.lost[static_cast<size_t>(LossReason::QueueFull)], 0u);
  // Every record is either written, waiting in the queue, or counted lost.
  EXPECT_LE(s.records_sent + s.lost_total(), n);
  EXPECT_GE(s.records_sent + s.lost_total() + o.tcp_queue_bytes / 24, n);
  // The collector goes away: what the queue held is counted, reconnect sends templates first.
  ::close(conn);
  for (int i = 0; i < 50 && e->connected(); ++i) {
    e->poll();
    usleep(10000);
  }
  EXPECT_FALSE(e->connected());
  EXPECT_EQ(s.records_sent + s.lost_total(), n);
  for (int i = 0; i < 200 && !e->connected(); ++i) {
    e->poll();
    usleep(10000);
  }
  ASSERT_TRUE(e->connected());
  EXPECT_EQ(s.connects, 2u);
  const int again = accept(peer.fd, nullptr, nullptr);
  ASSERT_GE(again, 0);
  e->add(256, record(1));
  e->flush();
  e->poll();
  std::vector<uint8_t> b(4096);
  pollfd p{again, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  b.resize(static_cast<size_t>(recv(again, b.data(), b.size(), 0)));
  ASSERT_GE(b.size(), 20u);
  EXPECT_EQ(be16(b, 0), 10);
  EXPECT_EQ(be16(b, 16), kTemplateSetId);
  ::close(again);
}

TEST(IpfixExporter, IpfixDumpReadsTheStreamWithoutComplaint) {
  const std::string tool = "/usr/bin/ipfixDump";
  if (access(tool.c_str(), X_OK) != 0) GTEST_SKIP() << "ipfixDump is not installed (Debian libfixbuf-tools)";
  UdpPeer peer;
  auto e = Exporter::open(*parse_collector("udp://127.0.0.1:" + std::to_string(peer.port)), kTemplates, kTypes);
  ASSERT_TRUE(e);
  for (uint32_t i = 0; i < 100; ++i) e->add(256, record(i));
  RecordWriter r;
  r.varlen("example.org");
  r.u16(28);
  e->add(257, r.data());
  e->flush();
  const std::string dir = testing::TempDir();
  const std::string file = dir + "/gnio-ipfix-test.ipfix", out = dir + "/gnio-ipfix-test.txt",
                    err = dir + "/gnio-ipfix-test.err";
  {
    std::ofstream f(file, std::ios::binary);
    for (const auto& m : peer.receive_all()) f.write(reinterpret_cast<const char*>(m.data()), static_cast<long>(m.size()));
  }
  const int rc = std::system((tool + " --rfc5610 -i " + file + " -o " + out + " 2>" + err).c_str());
  ASSERT_EQ(rc, 0);
  std::ifstream es(err);
  std::string complaint((std::istreambuf_iterator<char>(es)), {});
  EXPECT_EQ(complaint, "");
  std::ifstream os(out);
  std::string text((std::istreambuf_iterator<char>(os)), {});
  EXPECT_NE(text.find("dnsQueryName"), std::string::npos) << text.substr(0, 2000);
  EXPECT_NE(text.find("dnsQueryName : len: 11"), std::string::npos);
  EXPECT_NE(text.find("reversePacketDeltaCount"), std::string::npos);
  EXPECT_NE(text.find("103 Data Records"), std::string::npos) << text.substr(text.size() > 600 ? text.size() - 600 : 0);
}

}  // namespace
}  // namespace gnio::ipfix
