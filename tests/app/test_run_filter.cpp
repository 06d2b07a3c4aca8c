// SPDX-License-Identifier: Apache-2.0
// `gnio run packet-processing --filter EXPR`: the packets a tcpdump
// expression matches are analysed, the others counted as filtered and
// released; tcpdump itself, reading the same capture, is the oracle.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "run_cli.hpp"

namespace {

using nlohmann::json;
using namespace gnio::apptest;

// Packets of `capture` that tcpdump's filter matches (tcpdump -r FILE EXPR).
long tcpdump_count(const std::string& capture, const std::string& expr) {
  FILE* f = popen(("tcpdump -nn -r '" + capture + "' '" + expr + "' 2>/dev/null | wc -l").c_str(), "r");
  if (f == nullptr) return -1;
  long n = -1;
  if (std::fscanf(f, "%ld", &n) != 1) n = -1;
  pclose(f);
  return n;
}

json report_of(const std::string& capture, const std::string& expr, Outcome& o) {
  const std::string report = tmp_path("filter.json");
  o = run_cli("--rx pcap:" + capture + (expr.empty() ? "" : " --filter '" + expr + "'") + " --json " + report);
  const std::string text = read_file(report);
  std::filesystem::remove(report);
  return json::parse(text, nullptr, false);
}

TEST(RunFilter, MatchedAndFilteredAreTcpdumpsCounts) {
  if (system("command -v tcpdump >/dev/null 2>&1") != 0) GTEST_SKIP() << "tcpdump is not installed";
  const struct {
    const char* capture;
    const char* expr;
  } cases[] = {
      {"sample.pcap", "udp"},           {"sample.pcap", "tcp"},           {"sample.pcap", "icmp or arp"},
      {"sample.pcap", "not udp"},       {"captures/dns.pcap", "udp port 53"},
      {"captures/dns.pcap", "tcp"},     {"captures/vlan.pcap", "vlan"},   {"captures/http.pcap", "tcp port 80"},
      {"captures/tls.pcap", "tcp[tcpflags] & tcp-syn != 0"},            {"captures/ping.pcap", "ip6 and icmp6"},
  };
  for (const auto& c : cases) {
    const std::string capture = kData + "/" + c.capture;
    const long all = tcpdump_count(capture, "");
    const long matched = tcpdump_count(capture, c.expr);
    ASSERT_GE(all, 0) << capture;
    ASSERT_GE(matched, 0) << capture << " " << c.expr;
    Outcome o;
    const json r = report_of(capture, c.expr, o);
    if (o.status == 77) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(o.status, 0) << c.capture << " " << c.expr << ": " << o.err;
    ASSERT_FALSE(r.is_discarded()) << c.capture << " " << c.expr;
    EXPECT_EQ(r["run"]["filter"]["expression"], c.expr);
    EXPECT_EQ(r["run"]["filter"]["matched"].get<long>(), matched) << c.capture << " " << c.expr;
    EXPECT_EQ(r["run"]["filter"]["filtered"].get<long>(), all - matched) << c.capture << " " << c.expr;
    EXPECT_EQ(r["run"]["packets"].get<long>(), matched) << "only the matched packets are analysed";
    EXPECT_NE(o.out.find("filter " + std::string(c.expr) + ": matched " + std::to_string(matched)), std::string::npos)
        << o.out;
  }
}

// The capture holds DNS over UDP and over TCP, all on port 53: the records of
// the two filtered runs add up to those of the unfiltered one, and a filter
// that keeps no DNS packet leaves no record.
TEST(RunFilter, RecordsComeOnlyFromMatchedPackets) {
  const std::string capture = kData + "/captures/dns.pcap";
  Outcome all_run, udp_run, tcp_run, none_run;
  const json all = report_of(capture, "", all_run);
  const json udp = report_of(capture, "udp port 53", udp_run);
  const json tcp = report_of(capture, "tcp port 53", tcp_run);
  const json none = report_of(capture, "not port 53", none_run);
  if (all_run.status == 77) GTEST_SKIP() << "no CUDA device";
  for (const Outcome* o : {&all_run, &udp_run, &tcp_run, &none_run}) ASSERT_EQ(o->status, 0) << o->err;
  EXPECT_GT(udp["dns"].size(), 0u);
  EXPECT_GT(tcp["dns"].size(), 0u);
  EXPECT_EQ(udp["dns"].size() + tcp["dns"].size(), all["dns"].size());
  EXPECT_EQ(none["dns"].size(), 0u);
  EXPECT_EQ(none["protocols"]["dns"].get<long>(), 0);
}

TEST(RunFilter, AnExpressionLibpcapRefusesIsAnErrorWithItsMessage) {
  const Outcome o = run_cli("--rx pcap:" + kData + "/sample.pcap --filter 'udp prt 53'");
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--filter 'udp prt 53'"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("syntax error"), std::string::npos) << "libpcap's own message: " << o.err;
  EXPECT_NE(o.err.find("INVALID_VALUE"), std::string::npos) << o.err;
}

}  // namespace
