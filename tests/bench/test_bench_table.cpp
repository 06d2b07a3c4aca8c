// SPDX-License-Identifier: Apache-2.0
// gnio_bench --gpu cpu --quick: the table has every row once, each row
// passed its own checks, throughput rows moved packets, and every row with
// a bound states a positive ratio to it; the targets table follows.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Line {
  std::vector<std::string> cells;  // row, size, queues, packets, Mpps, Gbit/s, result, bound, ratio, ok
};

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
  std::map<std::string, Line> rows;  // "name|size|queues"
  std::vector<std::string> duplicates;
  std::vector<Line> targets;
  std::string text;
};

Output run_bench(const std::string& args = "--gpu cpu --quick") {
  Output out;
  FILE* p = popen((GNIO_BENCH_PATH " " + args + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) out.text += buf;
  out.status = pclose(p);
  std::stringstream in(out.text);
  bool in_targets = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| target |", 0) == 0) in_targets = true;
    if (line.rfind("| ", 0) != 0 || line.rfind("| row |", 0) == 0 || line.rfind("| target |", 0) == 0) continue;
    Line l{cells_of(line)};
    if (in_targets) {
      out.targets.push_back(l);
    } else if (l.cells.size() == 10) {
      const std::string key = l.cells[0] + "|" + l.cells[1] + "|" + l.cells[2];
      if (!out.rows.emplace(key, l).second) out.duplicates.push_back(key);
    }
  }
  return out;
}

double number(const std::string& s) {
  try {
    return std::stod(s);
  } catch (...) {
    return -1;
  }
}

TEST(BenchTable, EveryRowMeasuredWithItsRatio) {
  const Output out = run_bench();
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_TRUE(out.duplicates.empty()) << out.duplicates.front();
  EXPECT_NE(out.text.find("machine: GPU "), std::string::npos) << out.text;

  struct Expected {
    std::string key;
    bool moves_packets;
  };
  std::vector<Expected> expected;
  for (const char* floor : {"floor: H2D copy (pinned -> device)", "floor: D2H copy (device -> pinned)",
                            "floor: kernel reads pinned host memory",
                            "floor: doorbell round trip (persistent kernel, pinned host)",
                            "floor: empty kernel launch + sync"})
    expected.push_back({std::string(floor) + "|–|–", false});
  for (const char* size : {"64", "256", "1500", "8000"})
    for (const char* mem : {"host", "gpu"}) {
      expected.push_back({std::string("ceiling: bare ring, one feeder thread, mem=") + mem + "|" + size + "|1", true});
      for (const char* source : {"mem", "synthetic"})
        for (const char* q : {"1", "2", "4", "8"})
          expected.push_back({std::string("gnio ") + source + ": mem=" + mem + "|" + size + "|" + q, true});
    }
  for (const char* mem : {"host", "gpu"})
    for (const char* a : {"1 block, reads descriptors only", "1 block, reads nothing", "2 blocks, reads every byte",
                          "2 blocks, reads descriptors only", "2 blocks, reads nothing", "8 blocks, reads every byte"})
      expected.push_back({std::string("kernel anatomy: bare ring, mem=") + mem + ", " + a + "|64|1", true});
  for (const char* mem : {"host", "gpu"})
    for (const char* q : {"1", "2", "4", "8"})
      expected.push_back({std::string("kernel anatomy: gnio mem:, mem=") + mem + ", reads nothing|64|" + q, true});
  for (const char* size : {"64", "1500"}) {
    for (const char* a : {"anti-pattern: copy + launch per packet", "anti-pattern: host copy + launch per burst of 32",
                          "anti-pattern: host copy + launch per burst of 256"})
      expected.push_back({std::string(a) + "|" + size + "|1", true});
    for (const char* t : {"device memory", "device memory, staged by the kernel (a thread a payload)",
                          "device memory, staged by the kernel (lanes a payload)", "pinned host memory"}) {
      expected.push_back({std::string("gnio TX to pcap-out:/dev/null, payload in ") + t + "|" + size + "|1", true});
      for (const char* q : {"1", "2", "4"})
        expected.push_back(
            {std::string("gnio TX to null:queues=") + q + ", payload in " + t + "|" + size + "|" + q, true});
    }
  }
  for (const char* mem : {"host", "gpu"})
    for (const char* poll : {"", ", RX engines busy-poll"})
      expected.push_back({std::string("echo round trip at low load, mem=") + mem + poll + "|128|1", true});

  EXPECT_EQ(out.rows.size(), expected.size()) << out.text;
  for (const Expected& e : expected) {
    auto it = out.rows.find(e.key);
    if (it == out.rows.end()) {
      ADD_FAILURE() << "row missing: " << e.key;
      continue;
    }
    const std::vector<std::string>& c = it->second.cells;
    EXPECT_EQ(c[9], "yes") << e.key;
    if (e.moves_packets) {
      EXPECT_GT(number(c[3]), 0) << e.key << ": packets";
      EXPECT_NE(c[7], "–") << e.key << ": no bound";
      EXPECT_GT(number(c[8]), 0) << e.key << ": ratio to its bound";
    } else {
      EXPECT_NE(c[6], "–") << e.key << ": no result";
    }
  }
  // Floors the ratios are computed from.
  for (const char* floor : {"floor: H2D copy (pinned -> device)|–|–", "floor: kernel reads pinned host memory|–|–"}) {
    auto it = out.rows.find(floor);
    ASSERT_NE(it, out.rows.end()) << floor;
    EXPECT_GT(number(it->second.cells[6]), 0) << floor << ": " << it->second.cells[6];
  }
  EXPECT_EQ(out.targets.size(), 9u) << out.text;
  for (const Line& t : out.targets) {
    ASSERT_EQ(t.cells.size(), 4u);
    EXPECT_TRUE(t.cells[3] == "yes" || t.cells[3] == "no") << t.cells[0];
  }
}

// Two emulated devices: each gnio row's queues are spread over both (a row
// per device, adding up to the total), and the gpus rows compare the first
// device's queues alone and beside the second, and one device against two.
TEST(BenchTable, TwoDevicesSpreadTheQueuesAndCompareTheFirstAloneAndBeside) {
  const Output out = run_bench("--gpu cpu:0,cpu:1 --quick --only gnio,gpus --sizes 64 --queue-counts 2");
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_TRUE(out.duplicates.empty()) << out.duplicates.front();
  EXPECT_NE(out.text.find("; device 1: emulated (cpu:1)"), std::string::npos) << out.text;
  auto row = [&](const std::string& key) -> const std::vector<std::string>* {
    auto it = out.rows.find(key);
    if (it == out.rows.end()) {
      ADD_FAILURE() << "row missing: " << key << "\n" << out.text;
      return nullptr;
    }
    EXPECT_EQ(it->second.cells[9], "yes") << key;
    return &it->second.cells;
  };
  for (const char* source : {"mem", "synthetic"})
    for (const char* mem : {"host", "gpu"}) {
      const std::string name = std::string("gnio ") + source + ": mem=" + mem;
      const auto* total = row(name + "|64|2");
      const auto* first = row(name + ", device cpu|64|1");
      const auto* second = row(name + ", device cpu:1|64|1");
      if (!total || !first || !second) continue;
      EXPECT_GT(number((*first)[3]), 0) << name;
      EXPECT_GT(number((*second)[3]), 0) << name;
      // Both devices' counts come from one window: they add up exactly.
      EXPECT_EQ(number((*first)[3]) + number((*second)[3]), number((*total)[3])) << name;
      EXPECT_EQ((*first)[7].rfind("total ", 0), 0u) << name << ": " << (*first)[7];
    }
  for (const char* mem : {"host", "gpu"}) {
    const std::string m = std::string(", mem=") + mem;
    const auto* alone = row("gpus: first device's queues, alone" + m + "|64|2");
    const auto* beside = row("gpus: first device's queues, second device beside it" + m + "|64|2");
    const auto* one = row("gpus: all queues on the first device" + m + "|64|4");
    const auto* spread = row("gpus: the same queues spread over both devices" + m + "|64|4");
    if (!alone || !beside || !one || !spread) continue;
    for (const auto* r : {alone, beside, one, spread}) EXPECT_GT(number((*r)[3]), 0) << (*r)[0];
    EXPECT_EQ((*beside)[7].rfind("alone ", 0), 0u) << (*beside)[7];
    EXPECT_GT(number((*beside)[8]), 0) << (*beside)[0];
    EXPECT_NE((*beside)[6].find("Mpps on cpu:1"), std::string::npos) << (*beside)[6];
    EXPECT_EQ((*spread)[7].rfind("one device ", 0), 0u) << (*spread)[7];
    EXPECT_GT(number((*spread)[8]), 0) << (*spread)[0];
  }
  EXPECT_EQ(out.rows.size(), 5u + 3 * 4 + 4 * 2) << out.text;
}

}  // namespace
