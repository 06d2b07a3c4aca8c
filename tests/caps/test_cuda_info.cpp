// SPDX-License-Identifier: Apache-2.0
// The CUDA axis queries: bus id normalisation, sysfs link, and clean
// failure on a machine without a driver.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gnio/capabilities.hpp"
#include "gnio/cuda_info.hpp"

namespace {

using namespace gnio;

TEST(BusId, Normalises) {
  EXPECT_EQ(normalize_bus_id("0000:06:00.0"), "0000:06:00.0");
  EXPECT_EQ(normalize_bus_id("00000000:06:00.0"), "0000:06:00.0");
  EXPECT_EQ(normalize_bus_id("06:00.0"), "0000:06:00.0");
  EXPECT_EQ(normalize_bus_id("0000:AF:1F.7"), "0000:af:1f.7");
  EXPECT_EQ(normalize_bus_id("  0000:3b:00.1\n"), "0000:3b:00.1");
  EXPECT_EQ(normalize_bus_id("6:0.0"), "0000:06:00.0");
  EXPECT_EQ(normalize_bus_id("10000:01:00.0"), "10000:01:00.0");  // VMD domain
}

TEST(BusId, RejectsNonBusIds) {
  for (const char* bad : {"", "auto", "cpu", "0000:06:00", "0000:06:20.0", "0000:06:00.8", "0000:g6:00.0",
                          "000000000:06:00.0", "0000:106:00.0", "06.00.0"})
    EXPECT_EQ(normalize_bus_id(bad), "") << bad;
}

TEST(PcieLink, ReadsSysfs) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(::testing::TempDir()) / "gnio_pcie_sys";
  fs::remove_all(root);
  fs::path dev = root / "bus/pci/devices/0000:06:00.0";
  fs::create_directories(dev);
  std::ofstream(dev / "current_link_speed") << "16.0 GT/s PCIe\n";
  std::ofstream(dev / "current_link_width") << "16\n";
  PcieLink l = read_pcie_link(root.string(), "0000:06:00.0");
  EXPECT_EQ(l.gen, 4);
  EXPECT_EQ(l.width, 16);

  std::ofstream(dev / "current_link_speed") << "8.0 GT/s\n";
  std::ofstream(dev / "current_link_width") << "8\n";
  l = read_pcie_link(root.string(), "0000:06:00.0");
  EXPECT_EQ(l.gen, 3);
  EXPECT_EQ(l.width, 8);

  std::ofstream(dev / "current_link_speed") << "Unknown\n";
  EXPECT_EQ(read_pcie_link(root.string(), "0000:06:00.0").gen, 0);
  l = read_pcie_link(root.string(), "0000:07:00.0");
  EXPECT_EQ(l.gen, 0);
  EXPECT_EQ(l.width, 0);
  fs::remove_all(root);
}

// Whatever the machine, the queries answer (no crash, no hang), and the
// two answers agree with each other.
TEST(CudaRuntime, AnswersConsistently) {
  CudaRuntimeInfo rt = query_cuda_runtime();
  auto devices = list_cuda_devices();
#if GNIO_HAVE_CUDA
  EXPECT_GT(rt.runtime_version, 0);
#else
  EXPECT_FALSE(rt.available);
#endif
  if (!devices) {
    EXPECT_EQ(devices.status().code(), Errc::Driver);
    return;
  }
  if (devices->empty()) {
    EXPECT_FALSE(rt.error.empty()) << "no device but no reason";
  } else {
    EXPECT_TRUE(rt.available);
    for (const auto& d : *devices) {
      EXPECT_FALSE(normalize_bus_id(d.bus_id).empty()) << d.bus_id;
      EXPECT_GT(d.cc_major, 0);
      EXPECT_GT(d.total_mem_bytes, 0u);
    }
  }
}

}  // namespace
