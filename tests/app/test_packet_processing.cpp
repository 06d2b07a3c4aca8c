// SPDX-License-Identifier: Apache-2.0
// `gnio run packet-processing` checked against an independent dissector:
// for every capture in data/, the per-protocol counts, checksum states, DNS
// questions, HTTP request lines and TLS server names the application reports
// must equal what tshark reports for the same file, field by field. Replies
// are checked byte for byte against replies built here from the requests,
// and by tshark.
//
// Where gnio and tshark define things differently, these rules apply (the
// README lists them too):
// - Reassembly is off in tshark (IP fragments, TCP segments): gnio looks at
//   one packet at a time. A first fragment counts as its L4 protocol, a
//   later fragment as IP only; fragments' L4 checksums are not checked.
// - Only the outermost L4 header counts: the IP/UDP/TCP header quoted inside
//   an ICMP error is not counted as UDP/TCP.
// - tshark shows a DNS rcode for responses only; so does the comparison.
// - `partial` (the checksum field holds only the pseudo-header sum, left for
//   offload) is tshark's "bad".
// - A frame gnio finds malformed or cut carries no application protocol for
//   gnio; tshark may still dissect part of it (compared on whole frames only,
//   see the adversarial test).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tshark_answers.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kCli = GNIO_CLI;
const std::string kData = GNIO_DATA_DIR;

using Output = gnio::apptest::ToolOutput;
using gnio::apptest::run_tool;
Output run(const std::string& cmd) { return run_tool(cmd); }

// tshark's answer for FILE with ARGS, recorded or replayed (tshark_answers.hpp).
using gnio::apptest::kNoTsharkAnswer;
Output tshark(const std::string& file, const std::string& args) {
  const gnio::apptest::ToolOutput o = gnio::apptest::tshark_answer(file, args);
  return {o.status, o.text};
}

using gnio::apptest::split;

std::string tmp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("gnio-app-" + std::to_string(getpid()) + "-" + name)).string();
}

// The device the tests run on: the emulated one, or with GNIO_TEST_GPU=auto
// the first CUDA GPU (exit 77 when there is none).
std::string device_args() {
  const char* g = std::getenv("GNIO_TEST_GPU");
  return g != nullptr && std::string(g) == "auto" ? " --gpu auto --require-gpu" : " --gpu cpu";
}

struct AppRun {
  json report;
  std::string output;
  bool skipped = false;
};

AppRun run_app(const std::string& capture, const std::string& extra = "") {
  const std::string out = tmp_path(fs::path(capture).filename().string() + ".json");
  const Output o = run(kCli + " run packet-processing --quiet --rx pcap:" + capture + device_args() + " --json " + out +
                       extra);
  AppRun r;
  r.output = o.text;
  if (o.status == 77) {
    r.skipped = true;
    return r;
  }
  EXPECT_EQ(o.status, 0) << o.text;
  std::ifstream in(out);
  if (in) r.report = json::parse(in);
  fs::remove(out);
  return r;
}

// What tshark reports, per frame, with the rules above applied.
struct TsharkView {
  std::map<std::string, uint64_t> protocols;                  // gnio's names
  std::map<std::string, std::map<std::string, uint64_t>> csum;  // layer -> good/bad
  std::vector<std::string> dns;                               // "qname type response rcode", in frame order
  std::vector<std::string> http;                              // "METHOD uri host"
  std::vector<std::string> sni;
};

const char* kTsharkFields[] = {"frame.protocols",       "ip.checksum.status",      "udp.checksum.status",
                               "tcp.checksum.status",   "icmp.checksum.status",    "icmpv6.checksum.status",
                               "dns.qry.name",          "dns.qry.type",            "dns.flags.response",
                               "dns.flags.rcode",       "http.request.method",     "http.request.uri",
                               "http.host",             "tls.handshake.type",      "tls.handshake.extensions_server_name",
                               "dns.count.queries"};

TsharkView tshark_view(const std::string& capture) {
  std::string cmd =
      "-n -o ip.defragment:FALSE -o ipv6.defragment:FALSE -o tcp.desegment_tcp_streams:FALSE"
      " -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE"
      " -d tcp.port==8000,http -T fields -E occurrence=f -E separator=/t";
  for (const char* f : kTsharkFields) cmd += std::string(" -e ") + f;
  const Output o = tshark(capture, cmd);
  TsharkView v;
  EXPECT_EQ(o.status, 0) << "tshark failed (install it: scripts/bootstrap.sh): " << o.text;
  for (const std::string& line : split(o.text, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> f = split(line, '\t');
    f.resize(std::size(kTsharkFields));
    const std::vector<std::string> tokens = split(f[0], ':');
    std::string l4;
    bool app_dns = false;
    for (const std::string& t : tokens) {
      if (l4.empty()) {
        static const std::map<std::string, std::string> names{{"eth", "eth"},   {"vlan", "vlan"}, {"ieee8021ad", "qinq"},
                                                               {"arp", "arp"},   {"ip", "ipv4"},   {"ipv6", "ipv6"},
                                                               {"icmp", "icmp"}, {"icmpv6", "icmpv6"}, {"udp", "udp"},
                                                               {"tcp", "tcp"}};
        auto it = names.find(t);
        if (it != names.end() && (t != "vlan" || v.protocols.count("__vlan_seen") == 0)) {
          v.protocols[it->second] += 1;
          if (t == "icmp" || t == "icmpv6" || t == "udp" || t == "tcp") l4 = t;
        }
      } else if (t == "dns" && (l4 == "udp" || l4 == "tcp")) {
        app_dns = true;
      }
    }
    // A QinQ frame has "vlan" once after "ieee8021ad": it counts once as vlan.
    if (f[0].find("ieee8021ad") != std::string::npos && f[0].find(":vlan") == std::string::npos)
      v.protocols["vlan"] += 1;
    if (app_dns) v.protocols["dns"] += 1;
    auto state = [&](const std::string& layer, const std::string& s) {
      if (s == "1") v.csum[layer]["good"] += 1;
      if (s == "0") v.csum[layer]["bad"] += 1;
    };
    state("ipv4", f[1]);
    if (l4 == "udp") state("udp", f[2]);
    if (l4 == "tcp") state("tcp", f[3]);
    if (l4 == "icmp") state("icmp", f[4]);
    if (l4 == "icmpv6") state("icmpv6", f[5]);
    if (app_dns && !f[6].empty()) v.dns.push_back(f[6] + " " + f[7] + " " + f[8] + " " + f[9]);
    if (!f[10].empty() && l4 == "tcp") {
      v.protocols["http_request"] += 1;
      v.http.push_back(f[10] + " " + f[11] + " " + f[12]);
    }
    if (f[13] == "1" && l4 == "tcp") {
      v.protocols["tls_client_hello"] += 1;
      if (!f[14].empty()) v.sni.push_back(f[14]);
    }
  }
  v.protocols.erase("__vlan_seen");
  return v;
}

struct GnioView {
  std::map<std::string, uint64_t> protocols;
  std::map<std::string, std::map<std::string, uint64_t>> csum;
  std::vector<std::string> dns, http, sni;
};

GnioView gnio_view(const json& r) {
  GnioView v;
  for (const char* p : {"eth", "vlan", "qinq", "arp", "ipv4", "ipv6", "icmp", "icmpv6", "udp", "tcp", "dns",
                        "http_request", "tls_client_hello"})
    if (r["protocols"][p].get<uint64_t>() != 0) v.protocols[p] = r["protocols"][p].get<uint64_t>();
  for (auto& [layer, s] : r["checksums"].items()) {
    const uint64_t good = s["good"].get<uint64_t>(), bad = s["bad"].get<uint64_t>() + s["partial"].get<uint64_t>();
    if (good) v.csum[layer]["good"] = good;
    if (bad) v.csum[layer]["bad"] = bad;
  }
  for (const json& d : r["dns"])
    if (!d["qname"].get<std::string>().empty())
      v.dns.push_back(d["qname"].get<std::string>() + " " + std::to_string(d["qtype"].get<int>()) + " " +
                      (d["response"].get<bool>() ? "1 " + std::to_string(d["rcode"].get<int>()) : "0 "));
  for (const json& h : r["http"])
    v.http.push_back(h["method"].get<std::string>() + " " + h["path"].get<std::string>() + " " +
                     h["host"].get<std::string>());
  for (const json& t : r["tls"]) v.sni.push_back(t["sni"].get<std::string>());
  return v;
}

std::vector<std::string> real_captures() {
  std::vector<std::string> out{kData + "/sample.pcap"};
  for (const auto& e : fs::directory_iterator(kData + "/captures"))
    if (e.path().extension() == ".pcap" && e.path().stem() != "adversarial") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class TsharkOracle : public ::testing::TestWithParam<std::string> {};

TEST_P(TsharkOracle, CountsChecksumsAndRecordsEqualTshark) {
  const std::string capture = kData + "/" + GetParam();
  AppRun app = run_app(capture);
  if (app.skipped) GTEST_SKIP() << "no CUDA device: " << app.output;
  ASSERT_FALSE(app.report.is_null()) << app.output;
  const TsharkView t = tshark_view(capture);
  const GnioView g = gnio_view(app.report);
  ASSERT_GT(t.protocols.at("eth"), 0u);
  EXPECT_EQ(g.protocols, t.protocols) << app.output;
  EXPECT_EQ(g.csum, t.csum) << app.output;
  EXPECT_EQ(g.dns, t.dns);
  EXPECT_EQ(g.http, t.http);
  EXPECT_EQ(g.sni, t.sni);
}

std::vector<std::string> capture_names() {
  std::vector<std::string> out;
  for (const std::string& c : real_captures()) out.push_back(fs::relative(c, kData).string());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Captures, TsharkOracle, ::testing::ValuesIn(capture_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The captures hold what the brief's programs made: DNS answers for the
// names asked, the HTTP requests curl sent, the SNI names openssl sent.
TEST(PacketProcessing, RealCapturesHoldTheApplicationTraffic) {
  AppRun dns = run_app(kData + "/captures/dns.pcap");
  if (dns.skipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_GE(dns.report["protocols"]["dns"].get<uint64_t>(), 14u);
  bool tcp_dns = false;
  for (const json& d : dns.report["dns"]) tcp_dns |= d["transport"] == "tcp";
  EXPECT_TRUE(tcp_dns) << "dig +tcp's query is in dns.pcap";
  AppRun http = run_app(kData + "/captures/http.pcap");
  ASSERT_EQ(http.report["http"].size(), 6u);
  EXPECT_EQ(http.report["http"][1]["host"], "www.gnio.test");
  EXPECT_EQ(http.report["http"][1]["path"], "/docs/page.txt?lang=en");
  EXPECT_EQ(http.report["http"][5]["method"], "OPTIONS");
  EXPECT_GT(http.report["checksums"]["tcp"]["partial"].get<uint64_t>(), 0u) << "http.pcap keeps checksum offload on";
  AppRun tls = run_app(kData + "/captures/tls.pcap");
  ASSERT_EQ(tls.report["tls"].size(), 3u);
  EXPECT_EQ(tls.report["tls"][0]["sni"], "tls.gnio.test");
  EXPECT_EQ(tls.report["tls"][2]["sni"], "v6.gnio.test");
}

// Every adversarial frame is counted under the reason its maker gave it.
TEST(PacketProcessing, AdversarialFramesAreCountedByReason) {
  AppRun app = run_app(kData + "/captures/adversarial.pcap");
  if (app.skipped) GTEST_SKIP() << "no CUDA device";
  ASSERT_FALSE(app.report.is_null()) << app.output;
  const std::vector<std::string> expected{
      "frame_short",      "ipv4_header_cut", "ipv4_bad_ihl",        "ipv4_bad_version",
      "ipv4_bad_total_length", "ipv6_header_cut", "ipv6_ext_cut", "ipv6_ext_overflow",
      "tcp_bad_offset",   "tcp_option_length", "tcp_header_cut",  "udp_length_over_payload",
      "udp_length_under_header", "icmp_short", "dns_header_cut",   "dns_name_overflow",
      "datagram_cut",     "arp_cut"};
  std::map<std::string, uint64_t> want;
  for (const std::string& r : expected) want[r] += 1;
  std::map<std::string, uint64_t> got;
  for (auto& [reason, n] : app.report["malformed"].items())
    if (n.get<uint64_t>() != 0) got[reason] = n.get<uint64_t>();
  EXPECT_EQ(got, want) << app.output;
  EXPECT_EQ(app.report["run"]["packets"].get<uint64_t>(), expected.size() + 1);  // + the whole extension chain
  EXPECT_EQ(app.report["dns"].size(), 0u) << "malformed DNS is not handed to the host";
}

// ---- replies -------------------------------------------------------------

struct Frame {
  std::vector<uint8_t> bytes;
};

std::vector<Frame> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Frame> out;
  if (d.size() < 24) return out;
  size_t off = 24;
  while (off + 16 <= d.size()) {
    uint32_t caplen;
    std::memcpy(&caplen, &d[off + 8], 4);
    out.push_back({std::vector<uint8_t>(d.begin() + off + 16, d.begin() + off + 16 + caplen)});
    off += 16 + caplen;
  }
  return out;
}

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

uint16_t checksum(const uint8_t* p, size_t n, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) sum += be16(p + i);
  if (n & 1) sum += p[n - 1] << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

const uint8_t kOurMac[6] = {0x02, 0, 0, 0, 0, 0x01};

// The answer a correct responder gives to `req` (ARP request, ICMP/ICMPv6
// echo request, neighbour solicitation for fd77::1 or 10.77.0.1), built
// from scratch; empty when it should not be answered.
std::vector<uint8_t> expected_reply(const std::vector<uint8_t>& req) {
  std::vector<uint8_t> r = req;
  const uint16_t type = be16(&req[12]);
  const uint8_t ip4[4] = {10, 77, 0, 1};
  const uint8_t ip6[16] = {0xfd, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  if (type == 0x0806) {
    if (be16(&req[20]) != 1 || std::memcmp(&req[38], ip4, 4) != 0) return {};
    std::memcpy(&r[0], &req[6], 6);
    std::memcpy(&r[6], kOurMac, 6);
    put16(&r[20], 2);
    std::memcpy(&r[22], kOurMac, 6);
    std::memcpy(&r[28], ip4, 4);
    std::memcpy(&r[32], &req[22], 6);
    std::memcpy(&r[38], &req[28], 4);
    return r;
  }
  std::memcpy(&r[0], &req[6], 6);
  std::memcpy(&r[6], kOurMac, 6);
  if (type == 0x0800 && req[23] == 1 && req[34] == 8 && std::memcmp(&req[30], ip4, 4) == 0) {
    std::memcpy(&r[26], &req[30], 4);
    std::memcpy(&r[30], &req[26], 4);
    const size_t ihl = (req[14] & 15) * 4, total = be16(&req[16]);
    r[14 + ihl] = 0;
    put16(&r[14 + ihl + 2], 0);
    put16(&r[14 + ihl + 2], checksum(&r[14 + ihl], total - ihl));
    return r;
  }
  if (type != 0x86DD || req[20] != 58) return {};
  const size_t plen = be16(&req[18]);
  auto icmp6_sum = [&](std::vector<uint8_t>& f, size_t len) {
    uint32_t s = 0;
    for (int i = 0; i < 32; i += 2) s += be16(&f[22 + i]);
    s += static_cast<uint32_t>(len) + 58;
    put16(&f[56], 0);
    put16(&f[56], checksum(&f[54], len, s));
  };
  if (req[54] == 128 && std::memcmp(&req[38], ip6, 16) == 0) {
    std::memcpy(&r[22], &req[38], 16);
    std::memcpy(&r[38], &req[22], 16);
    r[54] = 129;
    icmp6_sum(r, plen);
    return r;
  }
  if (req[54] == 135 && std::memcmp(&req[62], ip6, 16) == 0) {
    r.resize(14 + 40 + 32);
    std::memcpy(&r[38], &req[22], 16);
    std::memcpy(&r[22], ip6, 16);
    put16(&r[18], 32);
    r[54] = 136;
    r[55] = 0;
    r[58] = 0x60;
    r[59] = r[60] = r[61] = 0;
    r[78] = 2;
    r[79] = 1;
    std::memcpy(&r[80], kOurMac, 6);
    icmp6_sum(r, 32);
    return r;
  }
  return {};
}

TEST(PacketProcessing, RepliesEqualIndependentlyBuiltAnswersAndTsharkAcceptsThem) {
  std::vector<std::vector<uint8_t>> want;
  for (const char* name : {"arp.pcap", "ping.pcap"})
    for (const Frame& f : read_pcap(kData + "/captures/" + name))
      if (auto r = expected_reply(f.bytes); !r.empty()) want.push_back(r);
  ASSERT_GE(want.size(), 12u);
  std::vector<std::vector<uint8_t>> got;
  for (const char* name : {"arp.pcap", "ping.pcap"}) {
    const std::string out = tmp_path(std::string("replies-") + name);
    AppRun app = run_app(kData + "/captures/" + name,
                         " --tx pcap-out:" + out + " --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01");
    if (app.skipped) GTEST_SKIP() << "no CUDA device";
    for (const Frame& f : read_pcap(out)) got.push_back(f.bytes);
    // tshark: every reply is a valid ARP reply, ICMP/ICMPv6 echo reply or
    // neighbour advertisement with good checksums.
    const Output t = tshark(out,
                            "-n -T fields -E occurrence=f -e arp.opcode -e icmp.type -e icmp.checksum.status "
                            "-e icmpv6.type -e icmpv6.checksum.status -e ip.checksum.status -o ip.check_checksum:TRUE");
    if (t.status == kNoTsharkAnswer) std::printf("tshark check of %s not made: %s\n", name, t.text.c_str());
    ASSERT_TRUE(t.status == 0 || t.status == kNoTsharkAnswer) << t.text;
    for (const std::string& line : split(t.status == 0 ? t.text : "", '\n')) {
      if (line.empty()) continue;
      std::vector<std::string> f = split(line, '\t');
      f.resize(6);
      const bool arp_reply = f[0] == "2";
      const bool echo_reply = f[1] == "0" && f[2] == "1" && f[5] == "1";
      const bool echo6_reply = f[3] == "129" && f[4] == "1";
      const bool advert = f[3] == "136" && f[4] == "1";
      EXPECT_TRUE(arp_reply || echo_reply || echo6_reply || advert) << name << ": " << line;
    }
    fs::remove(out);
  }
  // The kernel may answer a burst's requests in any order: compare as sets.
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "replies differ from the independently built answers";
}

// Echo requests of 9000 bytes and 64 KiB (data/jumbo/echo.pcap, longer than
// a TX staging slot): each reply leaves whole (the answer built here, and
// tshark: echo replies with good checksums, addresses swapped), and what is
// counted as sent is what the TX queue sent (submitted = sent, nothing dropped).
TEST(PacketProcessing, JumboEchoRequestsAreAnsweredAndCounted) {
  const std::string capture = kData + "/jumbo/echo.pcap";
  std::vector<std::vector<uint8_t>> want;
  for (const Frame& f : read_pcap(capture))
    if (auto r = expected_reply(f.bytes); !r.empty()) want.push_back(r);
  ASSERT_EQ(want.size(), 3u);
  const std::string out = tmp_path("replies-jumbo.pcap");
  AppRun app = run_app(capture, " --tx pcap-out:" + out + " --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01");
  if (app.skipped) GTEST_SKIP() << "no CUDA device";
  std::vector<std::vector<uint8_t>> got;
  for (const Frame& f : read_pcap(out)) got.push_back(f.bytes);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), want.size()) << app.output;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].size(), want[i].size()) << "reply " << i;
    EXPECT_TRUE(got[i] == want[i]) << "reply " << i << " of " << want[i].size() << " bytes differs";
  }
  const json& r = app.report["replies"];
  EXPECT_EQ(r["icmp_echo"], 2u);
  EXPECT_EQ(r["icmpv6_echo"], 1u);
  EXPECT_EQ(r["not_sent"], 0u);
  EXPECT_EQ(r["tx_packets"], 3u);
  EXPECT_EQ(r["tx_submitted"], 3u);
  ASSERT_TRUE(r["tx_dropped"].is_object()) << r.dump();
  EXPECT_EQ(r["tx_dropped"].size(), 6u) << r.dump();
  for (auto& [reason, n] : r["tx_dropped"].items()) EXPECT_EQ(n, 0u) << reason;
  EXPECT_NE(app.output.find("tx: submitted 3 sent 3 dropped 0 (too_long 0 "), std::string::npos) << app.output;
  const Output t = tshark(out,
                          "-n -o ip.check_checksum:TRUE -T fields -E occurrence=f -e frame.len -e frame.cap_len "
                          "-e ip.src -e ip.dst -e ip.checksum.status -e icmp.type -e icmp.checksum.status "
                          "-e ipv6.src -e ipv6.dst -e icmpv6.type -e icmpv6.checksum.status");
  if (t.status == kNoTsharkAnswer) GTEST_SKIP() << "tshark is not installed and " << t.text;
  ASSERT_EQ(t.status, 0) << t.text;
  std::multiset<std::string> lines;
  for (const std::string& line : split(t.text, '\n'))
    if (!line.empty()) lines.insert(line);
  const std::multiset<std::string> replies{
      "9000\t9000\t10.77.0.1\t10.77.0.2\t1\t0\t1\t\t\t\t",
      "65536\t65536\t10.77.0.1\t10.77.0.2\t1\t0\t1\t\t\t\t",
      "9000\t9000\t\t\t\t\t\tfd77::1\tfd77::2\t129\t1",
  };
  EXPECT_EQ(lines, replies) << t.text;
  fs::remove(out);
}

// A reply longer than the TX queue sends (loop: 9216 bytes, the 64 KiB echo
// reply) is refused on the device: not counted as sent but as not sent, and
// by the queue as dropped(too_long); the 9000-byte replies go.
TEST(PacketProcessing, ReplyLongerThanTheTxQueueSendsIsNotSentAndDroppedTooLong) {
  const std::string wire = "loop:pp-jumbo-" + std::to_string(getpid());
  AppRun app = run_app(kData + "/jumbo/echo.pcap", " --tx " + wire + " --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01");
  if (app.skipped) GTEST_SKIP() << "no CUDA device";
  const json& r = app.report["replies"];
  EXPECT_EQ(r["icmp_echo"], 1u) << r.dump();
  EXPECT_EQ(r["icmpv6_echo"], 1u) << r.dump();
  EXPECT_EQ(r["not_sent"], 1u) << r.dump();
  EXPECT_EQ(r["tx_submitted"], 3u) << r.dump();
  EXPECT_EQ(r["tx_packets"], 2u) << r.dump();
  EXPECT_EQ(r["tx_errors"], 1u) << r.dump();
  ASSERT_TRUE(r["tx_dropped"].is_object()) << r.dump();
  EXPECT_EQ(r["tx_dropped"].size(), 6u) << r.dump();
  for (auto& [reason, n] : r["tx_dropped"].items()) EXPECT_EQ(n, reason == "too_long" ? 1u : 0u) << reason;
  EXPECT_NE(app.output.find("replies sent: icmp_echo 1 icmpv6_echo 1 "), std::string::npos) << app.output;
  EXPECT_NE(app.output.find("(not sent 1)"), std::string::npos) << app.output;
  EXPECT_NE(app.output.find("tx: submitted 3 sent 2 dropped 1 (too_long 1 empty 0 "), std::string::npos)
      << app.output;
}

TEST(PacketProcessing, UdpEchoAnswersWithACompleteChecksum) {
  const std::string out = tmp_path("udp-echo.pcap");
  AppRun app = run_app(kData + "/captures/vlan.pcap", " --tx pcap-out:" + out + " --udp-echo 53");
  if (app.skipped) GTEST_SKIP() << "no CUDA device";
  const uint64_t sent = app.report["replies"]["udp_echo"].get<uint64_t>();
  EXPECT_GT(sent, 0u);
  const Output t = tshark(out,
                          "-n -o udp.check_checksum:TRUE -T fields -E occurrence=f -e udp.srcport -e udp.checksum.status "
                          "-e vlan.id");
  if (t.status == kNoTsharkAnswer) GTEST_SKIP() << "tshark is not installed and " << t.text;
  uint64_t lines = 0;
  for (const std::string& line : split(t.text, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> f = split(line, '\t');
    f.resize(3);
    if (f[0].empty()) continue;  // an echo reply: without --ip every echo request is answered too
    ++lines;
    EXPECT_EQ(f[0], "53") << line;
    EXPECT_EQ(f[1], "1") << line;
    EXPECT_FALSE(f[2].empty()) << "the VLAN tag stays on the answer: " << line;
  }
  EXPECT_EQ(lines, sent);
  fs::remove(out);
}

TEST(PacketProcessing, FlowsOutCsvHasBothDirectionsOfEachFlow) {
  const std::string csv = tmp_path("flows.csv");
  AppRun app = run_app(kData + "/captures/tls.pcap", " --flows-out " + csv);
  if (app.skipped) GTEST_SKIP() << "no CUDA device";
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("snapshot,at_s,version,proto,a,port_a,b,port_b", 0), 0u);
  uint64_t tls_flows = 0, packets = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f = split(line, ',');
    ASSERT_EQ(f.size(), 19u) << line;  // ..., tcp_state, tunnel, tunnel_id
    EXPECT_EQ(f[17] + "/" + f[18], "none/") << line;
    packets += std::stoull(f[8]) + std::stoull(f[10]);
    if (f[3] == "tcp" && (f[5] == "443" || f[7] == "443")) {
      ++tls_flows;
      EXPECT_GT(std::stoull(f[8]), 0u) << line;
      EXPECT_GT(std::stoull(f[10]), 0u) << line;
      EXPECT_EQ(f[16], "closed") << line;
    }
  }
  EXPECT_EQ(tls_flows, 3u);
  EXPECT_EQ(packets, app.report["run"]["packets"].get<uint64_t>() - app.report["protocols"]["arp"].get<uint64_t>());
  fs::remove(csv);
}

}  // namespace
