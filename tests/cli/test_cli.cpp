// SPDX-License-Identifier: Apache-2.0
// The built gnio binary, run as a user would run it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../doctor/fake_host.hpp"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string out;
  double seconds = 0;
};

// stderr goes to out as well unless only stdout is wanted (JSON).
Outcome gnio(const std::string& args, bool with_stderr = true) {
  std::string cmd = std::string(GNIO_CLI) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  Outcome r;
  auto t0 = std::chrono::steady_clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::string temp_file(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / (name + "_" + std::to_string(::getpid()))).string();
}

TEST(Doctor, JsonExitStatusFollowsTheFailRowsAndIsFast) {
  Outcome r = gnio("doctor --json", false);
  EXPECT_LT(r.seconds, 1.0) << "gnio doctor took " << r.seconds << " s";
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["schema_version"], 1);
  int fails = 0;
  std::string driver_state;
  for (const auto& c : j["checks"]) {
    if (c["state"] == "FAIL") ++fails;
    if (c["id"] == "cuda.driver") driver_state = c["state"];
  }
  EXPECT_EQ(j["summary"]["fail"], fails);
  EXPECT_EQ(r.exit_code, fails > 0 ? 1 : 0);
  EXPECT_EQ(j["exit_code"], r.exit_code);
  // Without the NVIDIA kernel module there is no driver: a FAIL, not a hang.
  if (!std::filesystem::exists("/proc/driver/nvidia/version")) {
    EXPECT_EQ(driver_state, "FAIL");
    EXPECT_EQ(r.exit_code, 1);
  }
}

TEST(Doctor, EmulatedDeviceNeedsNoGpu) {
  Outcome r = gnio("doctor --gpu cpu --nic synthetic:count=1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "[SKIP] cuda.devices")) << r.out;
  EXPECT_TRUE(contains(r.out, "[PASS] nic.open")) << r.out;
  EXPECT_TRUE(contains(r.out, "0 FAIL")) << r.out;
}

TEST(Doctor, FakeRootsAreRead) {
  namespace fs = std::filesystem;
  fs::path root = temp_file("gnio_cli_roots");
  fs::create_directories(root / "proc/self");
  fs::create_directories(root / "sys/module/nvidia_peermem");
  std::ofstream(root / "proc/self/limits") << "Max locked memory         65536                65536                bytes\n";
  std::ofstream(root / "proc/self/status") << "CapEff:\t0000000000000000\n";
  Outcome r = gnio("doctor --json --sys-root " + (root / "sys").string() + " --proc-root " + (root / "proc").string() +
                   " --ring-bytes 1m",
               false);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  for (const auto& c : j["checks"]) {
    if (c["id"] == "gpudirect.peermem") {
      EXPECT_EQ(c["state"], "PASS") << c.dump();
    }
    if (c["id"] == "host.memlock") {
      EXPECT_EQ(c["state"], "FAIL") << c.dump();
      EXPECT_TRUE(contains(c["found"], "soft 64 KiB, hard 64 KiB; rings need 1 MiB")) << c.dump();
    }
  }
  EXPECT_EQ(r.exit_code, 1);
  fs::remove_all(root);
}

TEST(Diagnose, AgainExplainsDrainThenRetry) {
  Outcome r = gnio("diagnose AGAIN");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "AGAIN (code 4)")) << r.out;
  EXPECT_TRUE(contains(r.out, "drain")) << r.out;
}

TEST(Diagnose, UnknownNameExits2WithTheValidNames) {
  Outcome r = gnio("diagnose BOGUS");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "unknown error name 'BOGUS'")) << r.out;
  EXPECT_TRUE(contains(r.out, "NOT_SUPPORTED, INVALID_VALUE, BAD_STATE, AGAIN, DRIVER")) << r.out;
}

TEST(Diagnose, NamesAreCaseInsensitiveAndNotSupportedShowsBothAxes) {
  Outcome r = gnio("diagnose not_supported --gpu cpu --nic synthetic:count=1");
  EXPECT_TRUE(contains(r.out, "NOT_SUPPORTED (code 1)")) << r.out;
  EXPECT_TRUE(contains(r.out, "Both capability axes")) << r.out;
  EXPECT_TRUE(contains(r.out, "gpudirect_rdma [cuda axis, no]")) << r.out;
  EXPECT_TRUE(contains(gnio("diagnose 3").out, "BAD_STATE (code 3)"));
}

TEST(Cli, VersionAndHelp) {
  Outcome v = gnio("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_TRUE(contains(v.out, "gnio 0.1.0")) << v.out;
  Outcome h = gnio("--help");
  for (const char* sub : {"caps", "doctor", "diagnose"}) EXPECT_TRUE(contains(h.out, sub)) << h.out;
  for (const char* sub : {"caps", "doctor", "diagnose"}) {
    Outcome s = gnio(std::string(sub) + " --help");
    EXPECT_EQ(s.exit_code, 0) << sub;
    EXPECT_TRUE(contains(s.out, "Examples:")) << s.out;
  }
  EXPECT_TRUE(contains(gnio("caps --help").out, "--diff"));
  EXPECT_TRUE(contains(gnio("doctor --help").out, "--ring-bytes"));
  EXPECT_NE(gnio("").exit_code, 0);
}

TEST(Caps, JsonHasSchemaVersion) {
  Outcome r = gnio("caps --nic synthetic:count=1 --gpu cpu --json", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["nic"]["caps"]["driver"], "synthetic");
  EXPECT_EQ(j["cuda"]["state"], "emulated");
  EXPECT_EQ(j["features"]["gpu_rx"]["supported"], "yes");
}

TEST(Caps, SaveThenDiffFindsAChangedField) {
  std::string snap = temp_file("gnio_caps_snapshot.json");
  Outcome save = gnio("caps --nic synthetic:count=1 --gpu cpu --save " + snap);
  ASSERT_EQ(save.exit_code, 0) << save.out;
  Outcome same = gnio("caps --diff " + snap);
  EXPECT_EQ(same.exit_code, 0) << same.out;
  EXPECT_TRUE(contains(same.out, "no difference")) << same.out;

  nlohmann::json j;
  std::ifstream(snap) >> j;
  int burst = j["nic"]["caps"]["max_burst"];
  j["nic"]["caps"]["max_burst"] = burst + 1;
  std::ofstream(snap) << j.dump(2);
  Outcome changed = gnio("caps --diff " + snap);
  EXPECT_EQ(changed.exit_code, 1) << changed.out;
  EXPECT_TRUE(contains(changed.out, "nic.caps.max_burst: " + std::to_string(burst + 1) + " -> " +
                                        std::to_string(burst)))
      << changed.out;
  std::filesystem::remove(snap);

  Outcome missing = gnio("caps --diff " + snap);
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_TRUE(contains(missing.out, "cannot read the baseline")) << missing.out;
}

TEST(Caps, NamedButMissingGpuFails) {
  Outcome r = gnio("caps --gpu 0000:99:1f.7");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "0000:99:1f.7 not found")) << r.out;
}

TEST(Caps, EveryListedGpuIsReported) {
  Outcome r = gnio("caps --nic synthetic:count=1 --gpu cpu:0,cpu:1 --json", false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["cuda"]["state"], "emulated");
  ASSERT_EQ(j["gpus"].size(), 2u) << r.out;
  EXPECT_EQ(j["gpus"][0]["gpu"], "cpu:0");
  EXPECT_EQ(j["gpus"][1]["gpu"], "cpu:1");
  for (const auto& g : j["gpus"]) {
    EXPECT_EQ(g["kind"], "emulated");
    EXPECT_TRUE(g["bus_id"].is_null());
    EXPECT_TRUE(g["numa_node"].is_null());
  }

  Outcome one = gnio("caps --nic synthetic:count=1 --gpu cpu --json", false);
  auto j1 = nlohmann::json::parse(one.out, nullptr, false);
  ASSERT_FALSE(j1.is_discarded()) << one.out;
  ASSERT_EQ(j1["gpus"].size(), 1u) << one.out;
  EXPECT_EQ(j1["gpus"][0]["gpu"], "cpu");

  Outcome text = gnio("caps --nic synthetic:count=1 --gpu cpu:2,cpu:5");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_TRUE(contains(text.out, "GPUs (features above are those of cpu:2)\n  cpu:2: emulated\n  cpu:5: emulated\n"))
      << text.out;
  EXPECT_FALSE(contains(one.out, "GPUs (features above")) << one.out;
}

// The fake tree's GPU slots, 0000:03:00.0 below the NIC's switch and
// 0000:81:00.0 on the other socket, placed by sysfs alone (this host's CUDA
// need not know them): the NIC does not open here, so the exit status is 1
// and the report is still printed.
TEST(Caps, EachGpuIsPlacedAgainstTheNic) {
  gnio::testing::FakeHost h;
  gnio::testing::pcie_tree(h);
  const std::string args =
      "caps --sys-root " + h.env.sys_root + " --nic afxdp:eth9 --gpu 0000:03:00.0,0000:81:00.0,cpu:1";
  Outcome r = gnio(args + " --json", false);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["gpus"].size(), 3u) << r.out;
  const auto& near = j["gpus"][0]["placement"];
  EXPECT_EQ(near["relation"], "PXB") << near.dump();
  EXPECT_EQ(near["where"], "same_switch");
  EXPECT_EQ(near["same_switch"], true);
  EXPECT_EQ(near["same_root_complex"], true);
  EXPECT_EQ(near["same_numa_node"], true);
  EXPECT_EQ(near["nic_bus_id"], "0000:04:00.0");
  EXPECT_EQ(near["nic_numa_node"], 0);
  EXPECT_EQ(near["gpu_numa_node"], 0);
  EXPECT_EQ(near["shared_bridge"], "0000:01:00.0");
  const auto& far = j["gpus"][1]["placement"];
  EXPECT_EQ(far["relation"], "SYS") << far.dump();
  EXPECT_EQ(far["where"], "across_sockets");
  EXPECT_EQ(far["same_root_complex"], false);
  EXPECT_EQ(far["same_numa_node"], false);
  EXPECT_EQ(far["gpu_numa_node"], 1);
  EXPECT_EQ(far["gpu_host_bridge"], "pci0000:80");
  const auto& emulated = j["gpus"][2]["placement"];
  EXPECT_TRUE(emulated["relation"].is_null()) << emulated.dump();
  EXPECT_EQ(emulated["reason"], "emulated device, not on PCIe");

  Outcome text = gnio(args);
  EXPECT_TRUE(contains(text.out, "  0000:03:00.0: unavailable; against NIC 0000:04:00.0 (NUMA 0): same PCIe switch, "
                                 "behind shared PCIe bridges below 0000:01:00.0 (PXB)\n"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "  0000:81:00.0: unavailable; against NIC 0000:04:00.0 (NUMA 0): across sockets, "
                                 "different NUMA nodes (SYS)"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "  cpu:1: emulated\n")) << text.out;

  Outcome software =
      gnio("caps --sys-root " + h.env.sys_root + " --nic synthetic:count=1 --gpu cpu:0,0000:03:00.0 --json", false);
  auto js = nlohmann::json::parse(software.out, nullptr, false);
  ASSERT_FALSE(js.is_discarded()) << software.out;
  EXPECT_TRUE(js["gpus"][1]["placement"]["relation"].is_null());
  EXPECT_EQ(js["gpus"][1]["placement"]["reason"], "backend 'synthetic' drives no NIC");
}

TEST(Caps, ABadGpuListNamesTheEntry) {
  struct Case {
    const char* list;
    const char* says;
  };
  for (const Case& c : {Case{"cpu:0,bogus", "entry \"bogus\" is not a PCIe bus id"},
                        Case{"cpu:0,,cpu:1", "has an empty entry"},
                        Case{"cpu:0,cpu:64", "entry \"cpu:64\" names no emulated device"},
                        Case{"all,cpu:1", "give it alone"}}) {
    Outcome r = gnio(std::string("caps --gpu ") + c.list);
    EXPECT_EQ(r.exit_code, 2) << c.list << ": " << r.out;
    EXPECT_TRUE(contains(r.out, std::string("gnio caps: --gpu ") + c.list + ": INVALID_VALUE")) << r.out;
    EXPECT_TRUE(contains(r.out, c.says)) << c.list << ": " << r.out;
  }
}

TEST(Doctor, EveryListedGpuIsReported) {
  Outcome r = gnio("doctor --gpu cpu:0,cpu:3 --nic synthetic:count=1 --json", false);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["gpus"].size(), 2u) << r.out;
  EXPECT_EQ(j["gpus"][0]["gpu"], "cpu:0");
  EXPECT_EQ(j["gpus"][1]["gpu"], "cpu:3");
  EXPECT_EQ(j["gpus"][1]["kind"], "emulated");
  std::string placement;
  for (const auto& c : j["checks"])
    if (c["id"] == "host.pcie_placement") {
      EXPECT_EQ(c["state"], "SKIP");
      placement = c["found"];
    }
  EXPECT_TRUE(contains(placement, "--gpu cpu:0,cpu:3")) << placement;

  Outcome bad = gnio("doctor --gpu cpu:0,bogus");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_TRUE(contains(bad.out, "gnio doctor: --gpu cpu:0,bogus: INVALID_VALUE")) << bad.out;
  EXPECT_TRUE(contains(bad.out, "entry \"bogus\"")) << bad.out;
}

}  // namespace
