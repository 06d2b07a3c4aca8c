// SPDX-License-Identifier: Apache-2.0
// `gnio run packet-processing --capture pcapng-out:FILE`: the pcapng file the
// kernel records holds, packet for packet (bytes, ns timestamps), what
// libpcap's pcap_offline_filter() selects from the input, read back by
// tshark and capinfos; an interface per RX queue, epb_flags inbound;
// rotation loses and duplicates nothing; offered == written + dropped.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <set>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "../backends/pcapng_tools.hpp"
#include "backends/synthetic.hpp"
#include "run_cli.hpp"
#include "test_dir.hpp"

namespace {

using nlohmann::json;
using namespace gnio::apptest;
using namespace gnio::backend::pcapng_test;

// The frames of `capture` that libpcap's own filter matches, as tshark
// should read them back from gnio's file (interface rxq0, inbound).
std::vector<Frame> libpcap_selects(const std::string& capture, const std::string& expr) {
  std::vector<Frame> out;
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(capture.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  EXPECT_NE(p, nullptr) << capture << ": " << err;
  if (p == nullptr) return out;
  bpf_program prog{};
  EXPECT_EQ(pcap_compile(p, &prog, expr.c_str(), 1, PCAP_NETMASK_UNKNOWN), 0) << expr << ": " << pcap_geterr(p);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(p, &h, &data) == 1) {
    if (pcap_offline_filter(&prog, h, data) == 0) continue;
    Frame f;
    f.hex = to_hex(data, h->caplen);
    f.time_ns = static_cast<uint64_t>(h->ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(h->ts.tv_usec);
    f.len = h->caplen;  // the ring carries the captured bytes: that is the frame gnio sees
    f.cap_len = h->caplen;
    f.interface_id = 0;
    f.interface_name = "rxq0";
    f.direction = "0x00000001";
    out.push_back(std::move(f));
  }
  pcap_freecode(&prog);
  pcap_close(p);
  return out;
}

// A fresh folder per test, removed after it.
class RunCapture : public gnio::test::TestDir {
 protected:
  RunCapture() : TestDir("gnio-capture-") {}
};

json report(const std::string& path) { return json::parse(read_file(path), nullptr, false); }

// offered == written + dropped, and the parts add up to the totals.
void expect_accounts(const json& c, uint64_t matched) {
  ASSERT_TRUE(c.is_object());
  uint64_t dropped = 0;
  for (const auto& [reason, n] : c["dropped"].items()) dropped += n.get<uint64_t>();
  EXPECT_EQ(c["offered"].get<uint64_t>(), matched) << c.dump();
  EXPECT_EQ(c["dropped_total"].get<uint64_t>(), dropped) << c.dump();
  EXPECT_EQ(c["offered"].get<uint64_t>(), c["written"].get<uint64_t>() + dropped) << c.dump();
}

TEST_F(RunCapture, FileIsWhatLibpcapsFilterSelects) {
  GNIO_NEED_TOOLS();
  const struct {
    const char* capture;
    const char* expr;
  } cases[] = {
      {"dns.pcap", "udp port 53"},   {"dns.pcap", ""},        {"http.pcap", "tcp port 80"},
      {"tls.pcap", "tcp[tcpflags] & tcp-syn != 0"},           {"ping.pcap", "ip6 and icmp6"},
      {"vlan.pcap", "vlan"},         {"arp.pcap", "not arp"}, {"adversarial.pcap", "ip[2:2] > 60"},
      {"ping.pcap", "icmp or arp"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.capture) + " '" + c.expr + "'");
    const std::string input = kData + "/captures/" + c.capture;
    const std::string out = path("cap.pcapng"), js = path("r.json");
    const std::string filter = *c.expr ? std::string(" --filter '") + c.expr + "'" : "";
    const Outcome o = run_cli("--rx pcap:" + input + filter + " --capture pcapng-out:" + out + " --json " + js);
    if (o.status == 77) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(o.status, 0) << o.err;
    const std::vector<Frame> want = libpcap_selects(input, *c.expr ? c.expr : "");
    const std::vector<Frame> got = tshark_frames(out);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "frame " << i;
    const std::string info = capinfos(out);
    EXPECT_NE(info.find("Number of packets:   " + std::to_string(want.size()) + "\n"), std::string::npos) << info;
    EXPECT_NE(info.find("Number of interfaces in file: 1"), std::string::npos) << info;
    const json r = report(js);
    ASSERT_FALSE(r.is_discarded());
    expect_accounts(r["capture"], r["run"]["filter"]["matched"].get<uint64_t>());
    EXPECT_EQ(r["capture"]["written"].get<size_t>(), want.size());
    EXPECT_EQ(r["run"]["filter"]["matched"].get<size_t>(), want.size());
    EXPECT_NE(o.out.find("capture pcapng-out:" + out + ": offered " + std::to_string(want.size()) + " written " +
                         std::to_string(want.size()) + " dropped 0"),
              std::string::npos)
        << o.out;
  }
}

// Four RX queues fed by mem: (frames spread by their RSS hash, as a NIC
// does): the file has an interface per queue (rxq0..rxq3), and every
// matched frame is there once, on the interface of the queue its hash
// selects, marked inbound.
TEST_F(RunCapture, AnInterfacePerRxQueue) {
  GNIO_NEED_TOOLS();
  const std::string input = kData + "/captures/tls.pcap";
  const std::string out = path("q.pcapng"), js = path("r.json");
  const Outcome o = run_cli("--rx mem:" + input + ",queues=4 --queues 4 --filter tcp --capture pcapng-out:" + out +
                            " --json " + js);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.err;
  const std::vector<Block> idbs = of_type(pcapng_blocks(out), "0x00000001");
  ASSERT_EQ(idbs.size(), 4u);
  const std::vector<Frame> got = tshark_frames(out);
  const std::vector<Frame> want = libpcap_selects(input, "tcp");
  ASSERT_EQ(got.size(), want.size());
  std::multiset<std::pair<std::string, uint32_t>> got_frames, want_frames;
  std::set<uint32_t> queues_used;
  for (const Frame& f : got) {
    ASSERT_LT(f.interface_id, 4u);
    EXPECT_EQ(f.interface_name, "rxq" + std::to_string(f.interface_id));
    EXPECT_EQ(f.direction, "0x00000001");
    got_frames.emplace(f.hex, f.interface_id);
    queues_used.insert(f.interface_id);
  }
  for (const Frame& f : want) {
    std::vector<uint8_t> bytes(f.hex.size() / 2);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(std::stoul(f.hex.substr(2 * i, 2), nullptr, 16));
    want_frames.emplace(f.hex, gnio::backend::rss_spread(bytes.data(), static_cast<uint32_t>(bytes.size()), 4).queue);
  }
  EXPECT_EQ(got_frames, want_frames);
  EXPECT_GT(queues_used.size(), 1u) << "RSS spreads the capture's flows over several queues";
  const json r = report(js);
  ASSERT_FALSE(r.is_discarded());
  expect_accounts(r["capture"], want.size());
}

// rotate=4K cuts the capture into many files: their frames, in file order,
// are the matched frames once each, and every file is a whole pcapng.
TEST_F(RunCapture, RotationLosesAndDuplicatesNothing) {
  GNIO_NEED_TOOLS();
  const std::string input = kData + "/captures/http.pcap";
  const std::string out = path("rot.pcapng"), js = path("r.json");
  const Outcome o =
      run_cli("--rx pcap:" + input + " --filter tcp --capture pcapng-out:" + out + ",rotate=4K --json " + js);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.err;
  std::vector<Frame> got;
  size_t files = 0;
  for (;; ++files) {
    const std::string name = files == 0 ? out : out + "." + std::to_string(files);
    if (!std::filesystem::exists(name)) break;
    capinfos(name);
    for (Frame& f : tshark_frames(name)) got.push_back(std::move(f));
  }
  EXPECT_GT(files, 3u) << "rotate=4K makes several files of this capture";
  const std::vector<Frame> want = libpcap_selects(input, "tcp");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "frame " << i;
  const json r = report(js);
  ASSERT_FALSE(r.is_discarded());
  expect_accounts(r["capture"], want.size());
}

// A capture ring of 2 descriptors on a looped input: the writer falls
// behind, and what it could not take is counted, never lost: offered ==
// written + ring_full + the writer's drops, and the file holds the written.
TEST_F(RunCapture, WhatCannotBeWrittenIsCountedExactly) {
  GNIO_NEED_TOOLS();
  const std::string input = kData + "/captures/dns.pcap";
  const std::string out = path("full.pcapng"), js = path("r.json");
  const Outcome o = run_cli("--rx pcap:" + input + ",loop=200 --capture pcapng-out:" + out +
                            " --capture-depth 2 --json " + js);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.err;
  const json r = report(js);
  ASSERT_FALSE(r.is_discarded());
  const uint64_t matched = r["run"]["filter"]["matched"].get<uint64_t>();
  EXPECT_EQ(matched, 38u * 200u);
  expect_accounts(r["capture"], matched);
  EXPECT_EQ(tshark_frames(out).size(), r["capture"]["written"].get<size_t>());
  std::printf("capture-depth 2: offered %llu written %llu ring_full %llu\n", (unsigned long long)matched,
              (unsigned long long)r["capture"]["written"].get<uint64_t>(),
              (unsigned long long)r["capture"]["dropped"]["ring_full"].get<uint64_t>());
}

TEST_F(RunCapture, RefusesASpecThatIsNotPcapngOut) {
  const Outcome o = run_cli("--rx pcap:" + kData + "/captures/dns.pcap --capture pcap-out:" + path("x.pcap"));
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("is not a pcapng-out: spec"), std::string::npos) << o.err;
}

}  // namespace
