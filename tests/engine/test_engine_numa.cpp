// SPDX-License-Identifier: Apache-2.0
// The NUMA node of a GPU from sysfs, as the engine threads read it to run
// next to the GPU they fill: a sysfs tree made here for each case.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/numa.hpp"

namespace {

namespace fs = std::filesystem;
using gnio::detail::cpus_near_pci_device;
using gnio::detail::parse_cpulist;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gnio-sysfs-" + std::to_string(getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  std::string root() const { return root_.string(); }
  fs::path root_;
};

TEST_F(FakeSysfs, TheCpusOfTheGpusNode) {
  write("bus/pci/devices/0000:06:00.0/numa_node", "1");
  write("devices/system/node/node1/cpulist", "8-11,24,26-27");
  write("bus/pci/devices/0000:07:00.0/numa_node", "-1");
  write("bus/pci/devices/0000:08:00.0/numa_node", "3");  // a node without a cpulist
  EXPECT_EQ(cpus_near_pci_device(root(), "0000:06:00.0"), (std::vector<int>{8, 9, 10, 11, 24, 26, 27}));
  EXPECT_TRUE(cpus_near_pci_device(root(), "0000:07:00.0").empty()) << "node -1: sysfs does not tell";
  EXPECT_TRUE(cpus_near_pci_device(root(), "0000:08:00.0").empty());
  EXPECT_TRUE(cpus_near_pci_device(root(), "0000:09:00.0").empty()) << "no such device";
  EXPECT_TRUE(cpus_near_pci_device(root(), "cpu:1").empty()) << "an emulated device";
}

TEST(Cpulist, RangesAndSinglesAndNothingElse) {
  EXPECT_EQ(parse_cpulist("0"), (std::vector<int>{0}));
  EXPECT_EQ(parse_cpulist("0-3,8"), (std::vector<int>{0, 1, 2, 3, 8}));
  for (const char* bad : {"", "3-1", "a", "1,,2", "-2", "1-", "0-3,x"})
    EXPECT_TRUE(parse_cpulist(bad).empty()) << "\"" << bad << "\"";
}

}  // namespace
