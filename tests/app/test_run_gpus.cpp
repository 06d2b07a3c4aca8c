// SPDX-License-Identifier: Apache-2.0
// `gnio run packet-processing` over several devices: two and four emulated
// devices (with GNIO_TEST_GPU=auto, the real GPU beside emulated ones), one
// kernel each, queues mapped to them evenly or by --gpu-map. Every packet is
// analysed once, the devices' counts add up to the run's, each flow lives on
// one device, and the mapping's errors say what is wrong.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "run_cli.hpp"

namespace {

using nlohmann::json;
using namespace gnio::apptest;

bool on_gpu() {
  const char* g = std::getenv("GNIO_TEST_GPU");
  return g != nullptr && std::string(g) == "auto";
}

// The --gpu list: `n` devices, the first the real GPU under GNIO_TEST_GPU=auto.
std::string devices(int n) {
  std::string list = on_gpu() ? "auto" : "cpu:0";
  for (int i = 1; i < n; ++i) list += ",cpu:" + std::to_string(i);
  return list;
}

json run_with(const std::string& gpus, const std::string& args, Outcome& o) {
  const std::string report = tmp_path("gpus.json");
  o = run_cli(args + " --json " + report, gpus);
  const json r = json::parse(read_file(report), nullptr, false);
  std::filesystem::remove(report);
  return r;
}

TEST(RunGpus, EveryPacketOnceAndTheDevicesAddUpToTheRun) {
  constexpr int kCount = 40000, kFlows = 256;
  for (const auto& [n, queues] : {std::tuple{2, 4}, std::tuple{4, 8}}) {
    Outcome o;
    const json r = run_with(devices(n),
                            "--rx synthetic:count=" + std::to_string(kCount) + ",flows=" + std::to_string(kFlows) +
                                ",size=128,queues=" + std::to_string(queues) + " --queues " +
                                std::to_string(queues) + " --top 100000",
                            o);
    if (o.status == 77) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(o.status, 0) << o.out << o.err;
    ASSERT_FALSE(r.is_discarded());
    EXPECT_EQ(r["run"]["packets"].get<int>(), kCount);
    ASSERT_EQ(r["gpus"].size(), static_cast<size_t>(n));
    int packets = 0, bytes = 0;
    std::set<int> queues_seen;
    for (const json& g : r["gpus"]) {
      EXPECT_GT(g["packets"].get<int>(), 0) << g.dump();
      EXPECT_EQ(g["queues"].size(), static_cast<size_t>(queues / n)) << "spread evenly: " << g.dump();
      EXPECT_EQ(g["kernel"]["packets"], g["packets"]) << g.dump();
      packets += g["packets"].get<int>();
      bytes += g["bytes"].get<int>();
      for (const json& q : g["queues"]) EXPECT_TRUE(queues_seen.insert(q.get<int>()).second) << "queue twice";
    }
    EXPECT_EQ(packets, kCount);
    EXPECT_EQ(bytes, r["run"]["bytes"].get<int>());
    EXPECT_EQ(queues_seen.size(), static_cast<size_t>(queues));
    // A flow lands on one queue, so on one device: the merged table holds
    // each flow once.
    std::set<std::string> keys;
    for (const json& f : r["flows"]["top"])
      keys.insert(f["a"].get<std::string>() + ":" + std::to_string(f["port_a"].get<int>()) + ">" +
                  f["b"].get<std::string>() + ":" + std::to_string(f["port_b"].get<int>()));
    EXPECT_EQ(r["flows"]["top"].size(), static_cast<size_t>(kFlows));
    EXPECT_EQ(keys.size(), static_cast<size_t>(kFlows)) << "a flow counted on two devices";
  }
}

TEST(RunGpus, AMapPutsEachQueueWhereItSays) {
  Outcome o;
  const std::string second = "cpu:1";
  const json r = run_with(devices(2), "--rx synthetic:count=4000,queues=4 --queues 4 --gpu-map 0:" + second +
                                          ",1-3:" + (on_gpu() ? std::string("auto") : std::string("cpu:0")),
                          o);
  if (o.status == 77) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  ASSERT_EQ(r["gpus"].size(), 2u);
  EXPECT_EQ(r["gpus"][0]["queues"], json::array({1, 2, 3}));
  EXPECT_EQ(r["gpus"][1]["queues"], json::array({0}));
  EXPECT_EQ(r["gpus"][0]["packets"].get<int>() + r["gpus"][1]["packets"].get<int>(), 4000);
}

TEST(RunGpus, TheMappingsErrorsNameWhatIsWrong) {
  const std::string base = "--rx synthetic:count=10,queues=4 --queues 4";
  const struct {
    std::string args;
    const char* says;
  } cases[] = {
      {" --gpu-map 0-2:cpu:1", "queue 3 is mapped to no GPU"},
      {" --gpu-map 0-3:cpu:1,3:cpu:1", "queue 3 is mapped twice"},
      {" --gpu-map 0-9:cpu:1", "beyond --queues 4"},
      {" --gpu-map 0-3:cpu:7", "\"cpu:7\" is not one of --gpu"},
      {" --gpu-map 3-1:cpu:1", "not a queue or a range"},
      {" --gpu-map 0-3:cpu:1", "gets no queue"},
  };
  for (const auto& c : cases) {
    const Outcome o = run_cli(base + c.args, devices(2));
    if (o.status == 77) GTEST_SKIP() << "no CUDA device";
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << c.args << ": " << o.err;
  }
  const Outcome few = run_cli("--rx synthetic:count=10,queues=4 --queues 1", devices(2));
  if (few.status == 77) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(few.status, 2);
  EXPECT_NE(few.err.find("at least as many RX queues"), std::string::npos) << few.err;
}

}  // namespace
