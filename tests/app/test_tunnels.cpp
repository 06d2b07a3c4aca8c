// SPDX-License-Identifier: Apache-2.0
// Tunnels opened by `gnio run packet-processing` (MPLS, GRE, IP in IP,
// VXLAN, GENEVE, GTP-U), checked against tshark on the captures of
// data/captures/tunnels/ (data/make_tunnels.sh): per flow, the inner
// addresses, ports and protocol, the tunnel type and id (vxlan.vni,
// geneve.vni, gtp.teid, gre.key, mpls.label), packets and bytes each way
// equal those gnio's --flows-out exports; per record, the inner DNS
// questions (with their tunnel) and HTTP requests equal those of the
// report; the tunnels object
// counts the frames tshark finds in each type. With --decap none the same
// captures give tshark's outer view (no tunnel, flows of the outer
// headers, nothing inside); a --decap list opens its types only. The
// malformed capture gives each tunnel reason once.
//
// Where gnio and tshark differ, these rules apply:
// - One level of tunnel is opened: the flow of a frame is its first IP
//   layer after the tunnel header; one that tunnel holds no IP packet in
//   (an inner ARP) has none; a tunnel message that carries no packet
//   (a GTP-U echo request) is the outer packet's flow, with no tunnel.
// - A GRE header without a key has id 0; IP in IP has no id.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"
#include "tshark_answers.hpp"

namespace {

using namespace gnio::apptest;
using nlohmann::json;

const std::string kTunnels = kData + "/captures/tunnels/";
const std::vector<std::string> kCaptures = {"vxlan", "geneve", "gre", "ipip", "mpls", "gtpu"};
const std::vector<std::string> kTunnelReasons = {
    "mpls_stack_cut",  "mpls_stack_too_deep", "gre_header_cut",   "gre_bad_version",   "gre_bad_flags",
    "vxlan_header_cut", "vxlan_bad_flags",   "geneve_header_cut", "geneve_bad_version", "gtpu_header_cut",
    "gtpu_bad_version", "gtpu_bad_length",   "gtpu_ext_length"};

using gnio::apptest::split;

// The n-th value of a field tshark wrote with -E occurrence=a ("" if none).
std::string nth(const std::string& field, size_t n) {
  const std::vector<std::string> v = split(field, ',');
  return n < v.size() ? v[n] : "";
}

enum Field { kProtocols, kLen, kVni, kGeneveVni, kTeid, kGreKey, kMplsLabel, kIpSrc, kIpDst, kIp6Src, kIp6Dst,
             kUdpSrc, kUdpDst, kTcpSrc, kTcpDst, kQname, kMethod, kUri, kHost, kFieldCount };
const char* kFields[kFieldCount] = {"frame.protocols", "frame.len", "vxlan.vni", "geneve.vni", "gtp.teid", "gre.key",
                                    "mpls.label", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "udp.srcport",
                                    "udp.dstport", "tcp.srcport", "tcp.dstport", "dns.qry.name",
                                    "http.request.method", "http.request.uri", "http.host"};

struct Flow {
  uint64_t packets[2] = {0, 0}, bytes[2] = {0, 0};
  bool operator==(const Flow& o) const {
    return packets[0] == o.packets[0] && packets[1] == o.packets[1] && bytes[0] == o.bytes[0] && bytes[1] == o.bytes[1];
  }
};

std::ostream& operator<<(std::ostream& o, const Flow& f) {
  return o << f.packets[0] << "/" << f.packets[1] << " pkts " << f.bytes[0] << "/" << f.bytes[1] << " B";
}

// What gnio should find, from tshark's fields.
struct Expected {
  std::map<std::string, Flow> flows;  // "tunnel id version proto a port_a b port_b"
  std::map<std::string, uint64_t> tunnels;
  std::vector<std::string> dns;   // "src sport dst dport qname in tunnel id"
  std::vector<std::string> http;  // "method path host"
  bool answered = false;
  std::string why;  // without an answer
};

bool ip_token(const std::string& t) { return t == "ip" || t == "ipv6"; }

std::string tunnel_of_token(const std::string& t) {
  if (t == "vxlan" || t == "geneve" || t == "gre" || t == "mpls") return t;
  if (t == "gtp") return "gtpu";
  return "";
}

// Lower endpoint first, as the flow key orders them: address bytes, then port.
bool lower(const std::string& x, uint16_t px, const std::string& y, uint16_t py, int version) {
  unsigned char ax[16] = {}, ay[16] = {};
  const int af = version == 4 ? AF_INET : AF_INET6;
  inet_pton(af, x.c_str(), ax);
  inet_pton(af, y.c_str(), ay);
  const int c = std::memcmp(ax, ay, version == 4 ? 4 : 16);
  return c != 0 ? c < 0 : px < py;
}

Expected expected(const std::string& file, bool decap) {
  std::string args = "-n -o ip.defragment:FALSE -o ipv6.defragment:FALSE -o tcp.desegment_tcp_streams:FALSE "
                     "-T fields -E occurrence=a -E separator=/t";
  for (const char* f : kFields) args += std::string(" -e ") + f;
  const ToolOutput t = tshark_answer(file, args);
  Expected e;
  if (t.status != 0) {
    e.why = t.text;
    return e;
  }
  e.answered = true;
  for (const std::string& line : split(t.text, '\n')) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() < kFieldCount) continue;
    const std::vector<std::string> tok = split(f[kProtocols], ':');
    // The tunnel: its token, or for IP in IP the second of two IP layers in a row.
    size_t at = tok.size();
    std::string tunnel;
    for (size_t i = 0; i < tok.size() && tunnel.empty(); ++i) {
      if (!(tunnel = tunnel_of_token(tok[i])).empty()) at = i;
      else if (i > 0 && ip_token(tok[i]) && ip_token(tok[i - 1])) tunnel = "ipip", at = i - 1;
    }
    // The layer the flow is keyed by.
    size_t layer = tok.size();
    bool in_tunnel = false;
    if (decap && !tunnel.empty()) {
      e.tunnels[tunnel] += 1;
      bool inner_eth = false;
      for (size_t i = at + 1; i < tok.size() && layer == tok.size(); ++i) {
        if (tok[i] == "eth") inner_eth = true;
        if (ip_token(tok[i])) layer = i;
      }
      in_tunnel = layer != tok.size() || inner_eth;
    }
    if (!in_tunnel) {
      for (size_t i = 0; i < tok.size() && i <= at && layer == tok.size(); ++i)
        if (ip_token(tok[i]) && (i < at || !decap || tunnel.empty() || tunnel == "ipip")) layer = i;
      if (tunnel == "ipip" && decap) layer = tok.size();  // opened: never the outer
    }
    if (layer == tok.size()) continue;
    const int version = tok[layer] == "ip" ? 4 : 6;
    size_t n_ip = 0, n_udp = 0, n_tcp = 0;
    for (size_t i = 0; i < layer; ++i) n_ip += tok[i] == tok[layer];
    size_t l4 = layer + 1;
    while (l4 < tok.size() && tok[l4].rfind("ipv6.", 0) == 0) ++l4;
    const std::string l4name = l4 < tok.size() ? tok[l4] : "";
    for (size_t i = 0; i < l4; ++i) n_udp += tok[i] == "udp", n_tcp += tok[i] == "tcp";
    const std::string proto =
        l4name == "udp" || l4name == "tcp" || l4name == "icmp" || l4name == "icmpv6" ? l4name : "ip";
    const std::string src = nth(f[version == 4 ? kIpSrc : kIp6Src], n_ip);
    const std::string dst = nth(f[version == 4 ? kIpDst : kIp6Dst], n_ip);
    uint16_t sp = 0, dp = 0;
    if (proto == "udp") sp = std::stoi(nth(f[kUdpSrc], n_udp)), dp = std::stoi(nth(f[kUdpDst], n_udp));
    if (proto == "tcp") sp = std::stoi(nth(f[kTcpSrc], n_tcp)), dp = std::stoi(nth(f[kTcpDst], n_tcp));
    std::string id;
    if (in_tunnel) {
      auto num = [](const std::string& s) { return std::to_string(std::stoull(s.empty() ? "0" : s, nullptr, 0)); };
      if (tunnel == "vxlan") id = num(f[kVni]);
      if (tunnel == "geneve") id = num(f[kGeneveVni]);
      if (tunnel == "gtpu") id = num(f[kTeid]);
      if (tunnel == "gre") id = num(f[kGreKey]);
      if (tunnel == "mpls") {
        const std::vector<std::string> labels = split(f[kMplsLabel], ',');
        for (size_t i = 0; i < labels.size() && i < 3; ++i) id += (i ? "/" : "") + labels[i];
      }
    }
    const bool forward = lower(src, sp, dst, dp, version);
    const std::string key = (in_tunnel ? tunnel : "none") + " " + id + " " + std::to_string(version) + " " + proto +
                            " " + (forward ? src : dst) + " " + std::to_string(forward ? sp : dp) + " " +
                            (forward ? dst : src) + " " + std::to_string(forward ? dp : sp);
    Flow& flow = e.flows[key];
    flow.packets[forward ? 0 : 1] += 1;
    flow.bytes[forward ? 0 : 1] += std::stoull(f[kLen]);
    // The application layer is read above the flow's layer only: inside a
    // tunnel that is not opened it is not seen.
    if (!in_tunnel && !tunnel.empty()) continue;
    if (!f[kQname].empty() && tok.back() == "dns")
      e.dns.push_back(src + " " + std::to_string(sp) + " " + dst + " " + std::to_string(dp) + " " + f[kQname] + " in " +
                      (in_tunnel ? tunnel : "none") + " " + id);
    if (!f[kMethod].empty()) e.http.push_back(f[kMethod] + " " + f[kUri] + " " + f[kHost]);
  }
  return e;
}

struct Got {
  bool skipped = false;
  json report;
  std::map<std::string, Flow> flows;
  std::vector<std::string> dns, http;
};

Got run_gnio(const std::string& file, const std::string& decap) {
  const std::string report = tmp_path("tunnels.json"), flows = tmp_path("tunnels.jsonl");
  const Outcome o = run_cli("--rx pcap:" + file + " --decap " + decap + " --json " + report + " --flows-out " + flows);
  Got g;
  if (o.status == 77) {
    g.skipped = true;
    return g;
  }
  EXPECT_EQ(o.status, 0) << o.out << o.err;
  g.report = json::parse(read_file(report), nullptr, false);
  for (const std::string& line : split(read_file(flows), '\n')) {
    if (line.empty()) continue;
    const json j = json::parse(line);
    const std::string key = j["tunnel"].get<std::string>() + " " + j["tunnel_id"].get<std::string>() + " " +
                            std::to_string(j["version"].get<int>()) + " " + j["proto"].get<std::string>() + " " +
                            j["a"].get<std::string>() + " " + std::to_string(j["port_a"].get<int>()) + " " +
                            j["b"].get<std::string>() + " " + std::to_string(j["port_b"].get<int>());
    Flow& f = g.flows[key];
    f.packets[0] += j["packets_ab"].get<uint64_t>();
    f.packets[1] += j["packets_ba"].get<uint64_t>();
    f.bytes[0] += j["bytes_ab"].get<uint64_t>();
    f.bytes[1] += j["bytes_ba"].get<uint64_t>();
  }
  if (g.report.is_object()) {
    for (const json& r : g.report["dns"])
      g.dns.push_back(r["src"].get<std::string>() + " " + std::to_string(r["sport"].get<int>()) + " " +
                      r["dst"].get<std::string>() + " " + std::to_string(r["dport"].get<int>()) + " " +
                      r["qname"].get<std::string>() + " in " + r["tunnel"].get<std::string>() + " " +
                      r["tunnel_id"].get<std::string>());
    for (const json& r : g.report["http"])
      g.http.push_back(r["method"].get<std::string>() + " " + r["path"].get<std::string>() + " " +
                       r["host"].get<std::string>());
  }
  fs::remove(report);
  fs::remove(flows);
  return g;
}

void expect_equal(const Expected& want, const Got& got, const std::string& what) {
  for (const auto& [key, flow] : want.flows) {
    auto it = got.flows.find(key);
    if (it == got.flows.end()) {
      ADD_FAILURE() << what << ": tshark's flow " << key << " (" << flow << ") is not in gnio's --flows-out";
      continue;
    }
    EXPECT_EQ(it->second, flow) << what << ": flow " << key;
  }
  for (const auto& [key, flow] : got.flows)
    EXPECT_TRUE(want.flows.count(key)) << what << ": gnio's flow " << key << " (" << flow << ") is not tshark's";
  EXPECT_EQ(got.dns, want.dns) << what << ": DNS questions";
  EXPECT_EQ(got.http, want.http) << what << ": HTTP requests";
  for (const char* t : {"mpls", "gre", "ipip", "vxlan", "geneve", "gtpu"}) {
    const uint64_t n = want.tunnels.count(t) ? want.tunnels.at(t) : 0;
    EXPECT_EQ(got.report["tunnels"][t].get<uint64_t>(), n) << what << ": packets counted in " << t;
  }
}

class TunnelCapture : public ::testing::TestWithParam<std::string> {};

// Every frame's flow, tunnel and records against tshark, with every tunnel
// opened and with none.
TEST_P(TunnelCapture, InnerFlowsAndRecordsAsTsharkSeesThem) {
  const std::string file = kTunnels + GetParam() + ".pcap";
  for (const bool decap : {true, false}) {
    const Expected want = expected(file, decap);
    if (!want.answered) GTEST_SKIP() << "tshark is not installed and " << want.why;
    const Got got = run_gnio(file, decap ? "all" : "none");
    if (got.skipped) GTEST_SKIP() << "no CUDA device";
    ASSERT_TRUE(got.report.is_object());
    EXPECT_EQ(got.report["schema_version"].get<int>(), 4);
    EXPECT_EQ(got.report["run"]["decap"].get<std::string>(), decap ? "all" : "none");
    const std::string what = GetParam() + (decap ? " --decap all" : " --decap none");
    expect_equal(want, got, what);
    std::printf("%s: %zu flows, %zu DNS questions, %zu HTTP requests as tshark has them\n", what.c_str(),
                want.flows.size(), want.dns.size(), want.http.size());
    if (decap) {
      EXPECT_FALSE(want.tunnels.empty()) << what << ": tshark sees no tunnel";
      uint64_t malformed = 0;
      for (const auto& [name, n] : got.report["malformed"].items()) malformed += n.get<uint64_t>();
      EXPECT_EQ(malformed, 0u) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Captures, TunnelCapture, ::testing::ValuesIn(kCaptures),
                         [](const auto& info) { return info.param; });

// A --decap list opens its types only: GTP-U stays closed under
// vxlan,gre (as with none) and is opened by gtpu (as with all).
TEST(Tunnels, DecapListOpensItsTypesOnly) {
  const std::string file = kTunnels + "gtpu.pcap";
  const Got all = run_gnio(file, "all");
  if (all.skipped) GTEST_SKIP() << "no CUDA device";
  const Got none = run_gnio(file, "none");
  const Got other = run_gnio(file, "vxlan,gre");
  const Got gtpu = run_gnio(file, "gtpu");
  EXPECT_EQ(other.flows.size(), none.flows.size());
  for (const auto& [key, flow] : none.flows) EXPECT_EQ(other.flows.count(key), 1u) << key;
  EXPECT_EQ(gtpu.flows.size(), all.flows.size());
  for (const auto& [key, flow] : all.flows) EXPECT_EQ(gtpu.flows.count(key), 1u) << key;
  EXPECT_EQ(gtpu.dns, all.dns);
  EXPECT_NE(all.dns, none.dns);
  EXPECT_EQ(other.report["run"]["decap"].get<std::string>(), "gre,vxlan");
  EXPECT_EQ(other.report["tunnels"]["gtpu"].get<uint64_t>(), 0u);
  EXPECT_EQ(gtpu.report["tunnels"]["gtpu"], all.report["tunnels"]["gtpu"]);
  EXPECT_GT(all.report["tunnels"]["gtpu"].get<uint64_t>(), 0u);
}

TEST(Tunnels, UnknownDecapNameIsRefusedWithTheKnownOnes) {
  const Outcome o = run_cli("--rx pcap:" + kTunnels + "vxlan.pcap --decap vxlan,nvgre");
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.err.find("\"nvgre\" is not a tunnel type"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("mpls, gre, ipip, vxlan, geneve, gtpu"), std::string::npos) << o.err;
}

// One frame per tunnel reason (make_tunnels.py frames_malformed()): each
// reason once, in the tunnel type tshark sees; with --decap none, none.
TEST(Tunnels, MalformedTunnelHeadersHaveTheirReasons) {
  const std::string file = kTunnels + "malformed.pcap";
  const Got all = run_gnio(file, "all");
  if (all.skipped) GTEST_SKIP() << "no CUDA device";
  const Got none = run_gnio(file, "none");
  uint64_t total = 0;
  for (const auto& [name, n] : all.report["malformed"].items()) total += n.get<uint64_t>();
  EXPECT_EQ(total, kTunnelReasons.size());
  for (const std::string& r : kTunnelReasons) {
    EXPECT_EQ(all.report["malformed"][r].get<uint64_t>(), 1u) << r;
    EXPECT_EQ(none.report["malformed"][r].get<uint64_t>(), 0u) << r;
  }
  const ToolOutput t = tshark_answer(file, "-n -T fields -e frame.protocols");
  if (t.status != 0) GTEST_SKIP() << "tshark is not installed and " << t.text;
  std::map<std::string, uint64_t> types;
  for (const std::string& line : split(t.text, '\n'))
    for (const std::string& tok : split(line, ':'))
      if (!tunnel_of_token(tok).empty()) types[tunnel_of_token(tok)] += 1;
  for (const char* type : {"mpls", "gre", "vxlan", "geneve", "gtpu"}) {
    EXPECT_EQ(all.report["tunnels"][type].get<uint64_t>(), types[type]) << type;
    EXPECT_EQ(none.report["tunnels"][type].get<uint64_t>(), 0u) << type;
  }
}

// The CSV export ends in the tunnel's type and id.
TEST(Tunnels, CsvFlowsCarryTunnelTypeAndId) {
  const std::string csv = tmp_path("tunnels.csv");
  const Outcome o = run_cli("--rx pcap:" + kTunnels + "mpls.pcap --flows-out " + csv);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.err;
  const std::vector<std::string> lines = split(read_file(csv), '\n');
  fs::remove(csv);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[0].find(",tcp_state,tunnel,tunnel_id"), std::string::npos) << lines[0];
  bool stack = false;
  for (const std::string& l : lines) stack = stack || l.find(",mpls,17/1001") != std::string::npos;
  EXPECT_TRUE(stack) << "no flow in MPLS labels 17/1001";
  EXPECT_NE(o.out.find("in mpls 17/1001"), std::string::npos) << o.out;
}

// --print names the tunnel a record came out of.
TEST(Tunnels, PrintedRecordsNameTheirTunnel) {
  const Outcome o = run_cli("--rx pcap:" + kTunnels + "gtpu.pcap --print dns");
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("dns  10.45.0.2:40053 -> 198.51.100.10:53 in gtpu 305441741 query tunnel-teid1.example"),
            std::string::npos)
      << o.out;
}

}  // namespace
