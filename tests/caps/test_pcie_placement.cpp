// SPDX-License-Identifier: Apache-2.0
// Where a GPU sits relative to the NIC, read from the doctor's fake sysfs
// tree: two GPUs on two sockets, two below one switch, every relation of
// nvidia-smi topo's words, and what is said where sysfs does not place one.
#include <gtest/gtest.h>

#include "../doctor/fake_host.hpp"
#include "gnio/capabilities.hpp"

namespace {

using namespace gnio;
using gnio::testing::contains;
using gnio::testing::FakeHost;

PciePlacement placed(const FakeHost& h, const std::string& nic, const std::string& gpu) {
  auto p = place_gpu_against_nic(h.env.sys_root, nic, gpu);
  if (!p) {
    ADD_FAILURE() << nic << " / " << gpu << ": " << p.status().to_string();
    return {};
  }
  return *p;
}

TEST(PciePlacement, TwoGpusOnTwoSockets) {
  FakeHost h;
  gnio::testing::pcie_tree(h);
  const PciePlacement near = placed(h, "afxdp:eth9", "0000:03:00.0");
  EXPECT_EQ(near.relation, PcieRelation::Pxb);
  EXPECT_TRUE(near.same_switch());
  EXPECT_TRUE(near.same_root_complex());
  EXPECT_FALSE(near.other_numa_node());
  EXPECT_EQ(near.nic_bus_id, "0000:04:00.0");
  EXPECT_EQ(near.gpu_bus_id, "0000:03:00.0");
  EXPECT_EQ(near.shared_bridge, "0000:01:00.0");
  EXPECT_EQ(near.nic_numa_node, 0);
  EXPECT_EQ(near.gpu_numa_node, 0);
  EXPECT_EQ(near.describe(), "behind shared PCIe bridges below 0000:01:00.0 (PXB)");

  const PciePlacement far = placed(h, "afxdp:eth9", "0000:81:00.0");
  EXPECT_EQ(far.relation, PcieRelation::Sys);
  EXPECT_FALSE(far.same_switch());
  EXPECT_FALSE(far.same_root_complex());
  EXPECT_TRUE(far.other_numa_node());
  EXPECT_EQ(far.nic_numa_node, 0);
  EXPECT_EQ(far.gpu_numa_node, 1);
  EXPECT_EQ(far.nic_host_bridge, "pci0000:00");
  EXPECT_EQ(far.gpu_host_bridge, "pci0000:80");
  EXPECT_EQ(pcie_relation_name(far.relation), "SYS");
  EXPECT_TRUE(contains(far.describe(), "crosses the socket interconnect")) << far.describe();
}

TEST(PciePlacement, TwoGpusBelowOneSwitch) {
  FakeHost h;
  gnio::testing::pcie_tree(h);
  // 0000:02:02.0 and 0000:02:03.0 hang right below the switch's upstream port.
  const PciePlacement pix = placed(h, "dpdk:0000:02:03.0", "0000:02:02.0");
  EXPECT_EQ(pix.relation, PcieRelation::Pix);
  EXPECT_EQ(pix.shared_bridge, "0000:01:00.0");
  EXPECT_TRUE(pix.same_switch());
  // A GPU one level deeper below the same switch shares more than one bridge.
  EXPECT_EQ(placed(h, "dpdk:0000:02:03.0", "0000:03:00.0").relation, PcieRelation::Pxb);
}

TEST(PciePlacement, RootComplexAndNode) {
  FakeHost h;
  gnio::testing::pcie_tree(h);
  const PciePlacement phb = placed(h, "dpdk:0000:05:00.0", "0000:03:00.0");
  EXPECT_EQ(phb.relation, PcieRelation::Phb);
  EXPECT_FALSE(phb.same_switch());
  EXPECT_TRUE(phb.same_root_complex());
  EXPECT_EQ(phb.describe(), "same host bridge pci0000:00 (PHB)");

  // A second host bridge on NUMA node 0.
  h.write("sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0/numa_node", "0\n");
  h.link("sys/bus/pci/devices/0000:41:00.0", "sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0");
  const PciePlacement node = placed(h, "afxdp:eth9", "0000:41:00.0");
  EXPECT_EQ(node.relation, PcieRelation::Node);
  EXPECT_FALSE(node.same_root_complex());
  EXPECT_FALSE(node.other_numa_node());
  EXPECT_EQ(node.describe(), "different PCIe host bridges pci0000:00 / pci0000:40 (NODE)");

  // Without NUMA information only the tree decides.
  h.write("sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0/numa_node", "-1\n");
  const PciePlacement unknown = placed(h, "afxdp:eth9", "0000:41:00.0");
  EXPECT_EQ(unknown.gpu_numa_node, -1);
  EXPECT_EQ(unknown.relation, PcieRelation::Node);
}

TEST(PciePlacement, SaysWhySysfsPlacesNothing) {
  FakeHost h;
  gnio::testing::pcie_tree(h);
  struct Case {
    const char* nic;
    const char* gpu;
    const char* says;
  };
  for (const Case& c : {Case{"synthetic:count=1", "0000:03:00.0", "backend 'synthetic' drives no NIC"},
                        Case{"afxdp:veth0", "0000:03:00.0", "interface veth0 is virtual"},
                        Case{"afxdp:eth5", "0000:03:00.0", "interface eth5 does not exist"},
                        Case{"dpdk:net_ring0", "0000:03:00.0", "names no PCIe address"},
                        Case{"dpdk:0000:09:00.0", "0000:03:00.0", "PCIe device 0000:09:00.0 is not in"},
                        Case{"afxdp:eth9", "0000:09:00.0", "sysfs does not show where the GPU 0000:09:00.0 sits"}}) {
    auto p = place_gpu_against_nic(h.env.sys_root, c.nic, c.gpu);
    ASSERT_FALSE(p) << c.nic;
    EXPECT_EQ(p.status().code(), Errc::NotFound);
    EXPECT_TRUE(contains(p.status().message(), c.says)) << c.nic << ": " << p.status().message();
  }
  // A position is the device's chain of bus ids from its root port.
  auto pos = read_pcie_position(h.env.sys_root, h.env.sys_root + "/class/net/eth7/device");
  ASSERT_TRUE(pos) << pos.status().to_string();
  EXPECT_EQ(pos->host_bridge, "pci0000:80");
  EXPECT_EQ(pos->chain, (std::vector<std::string>{"0000:80:01.0", "0000:81:00.0"}));
  EXPECT_EQ(pos->numa_node, 1);
}

}  // namespace
