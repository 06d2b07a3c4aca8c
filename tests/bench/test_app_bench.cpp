// SPDX-License-Identifier: Apache-2.0
// app_bench --gpu cpu --quick: every traffic has its four rows, each moved
// exactly the packets the source offered, and the host core's
// classification equals the packet-processing kernel's (and the parse-only
// kernel's) counter by counter, with the values the traffic implies; the
// compute-heavy rows (1, 2 and 4 blocks on one queue) move what they were
// offered and their digests equal the host's.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line.substr(1));
  for (std::string c; std::getline(in, c, '|');) cells.push_back(trim(c));
  return cells;
}

struct Output {
  int status = -1;
  std::string text;
  std::map<std::string, std::vector<std::string>> rows;      // "traffic|variant" -> cells
  std::map<std::string, std::vector<std::string>> counters;  // "traffic|counter" -> cells
  std::map<std::string, std::vector<std::string>> scaling;   // blocks -> cells
};

Output run() {
  Output out;
  FILE* p = popen(GNIO_APP_BENCH_PATH " --gpu cpu --quick 2>&1", "r");
  if (!p) return out;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) out.text += buf;
  out.status = pclose(p);
  std::stringstream in(out.text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| traffic |", 0) == 0) continue;
    const auto c = cells_of(line);
    if (c.size() == 8) out.rows[c[0] + "|" + c[1]] = c;
    if (c.size() == 6) out.counters[c[0] + "|" + c[1]] = c;
    if (c.size() == 7 && !c[0].empty() && c[0].find_first_not_of("0123456789") == std::string::npos)
      out.scaling[c[0]] = c;
  }
  return out;
}

unsigned long long u64(const std::string& s) {
  try {
    return std::stoull(s);
  } catch (...) {
    return ~0ull;
  }
}

double number(const std::string& s) {
  try {
    return std::stod(s);
  } catch (...) {
    return -1;
  }
}

const Output& output() {
  static const Output out = run();
  return out;
}

struct Traffic {
  const char* name;
  unsigned long long packets;  // --quick
};
constexpr Traffic kTraffic[] = {{"64 B", 200000}, {"1500 B", 50000}, {"capture mix", 100000}};

TEST(AppBench, EveryRowMovedWhatWasOffered) {
  const Output& out = output();
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("machine: GPU emulated device"), std::string::npos) << out.text;
  EXPECT_EQ(out.rows.size(), 12u) << out.text;
  for (const Traffic& t : kTraffic)
    for (const char* v : {"receive-only (baseline)", "parse only (kernel)", "packet-processing (kernel)",
                          "packet-processing (one host core)"}) {
      const std::string key = std::string(t.name) + "|" + v;
      auto it = out.rows.find(key);
      if (it == out.rows.end()) {
        ADD_FAILURE() << "row missing: " << key << "\n" << out.text;
        continue;
      }
      const auto& c = it->second;  // traffic, variant, packets, offered, Mpps, Gbit/s, ratio, target
      EXPECT_EQ(u64(c[2]), t.packets) << key;
      EXPECT_EQ(u64(c[3]), t.packets) << key;
      EXPECT_GT(number(c[4]), 0) << key << ": Mpps";
      EXPECT_GT(number(c[5]), 0) << key << ": Gbit/s";
      EXPECT_GT(number(c[6]), 0) << key << ": ratio to receive-only";
      if (std::string(v) == "receive-only (baseline)") {
        EXPECT_EQ(c[6], "1.000") << key;
      }
      if (std::string(v) == "packet-processing (kernel)") {
        const bool yes = c[7] == "yes", no = c[7].rfind("NO: ", 0) == 0 && c[7].size() > 10;
        EXPECT_TRUE(yes || no) << key << ": verdict " << c[7];
        EXPECT_EQ(yes, number(c[6]) >= 0.70) << key << ": verdict " << c[7] << " for ratio " << c[6];
      } else {
        EXPECT_EQ(c[7], "–") << key;
      }
    }
}

TEST(AppBench, HostCoreClassifiesAsTheKernels) {
  const Output& out = output();
  ASSERT_EQ(out.status, 0) << out.text;
  auto counter = [&](const std::string& traffic, const std::string& name) -> const std::vector<std::string>* {
    auto it = out.counters.find(traffic + "|" + name);
    return it == out.counters.end() ? nullptr : &it->second;
  };
  size_t compared = 0;
  for (const auto& [key, c] : out.counters) {  // traffic, counter, kernel, parse-only, host core, equal
    EXPECT_EQ(c[5], "yes") << key;
    if (c[4] != "–") {
      EXPECT_EQ(u64(c[2]), u64(c[4])) << key << ": kernel vs host core";
      ++compared;
    }
    if (c[3] != "–") {
      EXPECT_EQ(u64(c[3]), u64(c[2])) << key << ": parse-only vs packet-processing kernel";
    }
  }
  EXPECT_GT(compared, 60u) << out.text;
  for (const Traffic& t : kTraffic) {
    const auto* packets = counter(t.name, "packets");
    ASSERT_NE(packets, nullptr) << t.name;
    EXPECT_EQ(u64((*packets)[2]), t.packets) << t.name;
  }
  // Generator traffic: every frame is IPv4 UDP, TCP or ICMP of the given
  // size, good checksums, 1024 flows each seen first once.
  for (auto [traffic, size] : {std::pair{"64 B", 64ull}, std::pair{"1500 B", 1500ull}}) {
    const unsigned long long n = traffic == std::string("64 B") ? 200000 : 50000;
    ASSERT_NE(counter(traffic, "bytes"), nullptr);
    EXPECT_EQ(u64((*counter(traffic, "bytes"))[4]), n * size) << traffic;
    EXPECT_EQ(u64((*counter(traffic, "proto.ipv4"))[4]), n) << traffic;
    EXPECT_EQ(u64((*counter(traffic, "reason.none"))[4]), n) << traffic;
    EXPECT_EQ(u64((*counter(traffic, "csum.ipv4.good"))[4]), n) << traffic;
    EXPECT_EQ(u64((*counter(traffic, "proto.udp"))[4]) + u64((*counter(traffic, "proto.tcp"))[4]) +
                  u64((*counter(traffic, "proto.icmp"))[4]),
              n)
        << traffic;
    EXPECT_EQ(u64((*counter(traffic, "flow.new"))[4]), 1024u) << traffic;
  }
  // The captures: application records, VLAN tags, IPv6 and malformed frames.
  for (const char* name : {"records", "proto.dns", "proto.http_request", "proto.tls_client_hello", "proto.vlan",
                           "proto.ipv6", "reason.datagram_cut"}) {
    const auto* c = counter("capture mix", name);
    ASSERT_NE(c, nullptr) << name << "\n" << out.text;
    EXPECT_GT(u64((*c)[2]), 0u) << name;
    EXPECT_LT(u64((*c)[2]), 100000u) << name;
  }
}

TEST(AppBench, ComputeHeavyRowsMoveWhatWasOfferedWithTheHostsDigest) {
  const Output& out = output();
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("compute-heavy: receive-only plus 4 passes"), std::string::npos) << out.text;
  ASSERT_EQ(out.scaling.size(), 3u) << out.text;
  for (unsigned blocks : {1u, 2u, 4u}) {
    auto it = out.scaling.find(std::to_string(blocks));
    ASSERT_NE(it, out.scaling.end()) << blocks << " blocks\n" << out.text;
    const auto& c = it->second;  // blocks, packets, Mpps, vs linear, vs receive-only, digest, target
    EXPECT_EQ(u64(c[1]), 20000ull * blocks) << blocks << " blocks";
    EXPECT_GT(number(c[2]), 0) << blocks << " blocks: Mpps";
    EXPECT_EQ(c[5], "equal to the host's") << blocks << " blocks";
    if (blocks == 1) {
      EXPECT_EQ(c[3], "1.000");
    }
    const bool yes = c[6].rfind("yes", 0) == 0;
    EXPECT_TRUE(yes || c[6] == "NO") << c[6];
    EXPECT_EQ(yes, number(c[3]) >= 0.80 || number(c[4]) >= 0.80) << blocks << " blocks: verdict " << c[6];
  }
}

}  // namespace
