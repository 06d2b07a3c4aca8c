// SPDX-License-Identifier: Apache-2.0
// Host rows of the doctor against fake /sys and /proc trees.
#include "fake_host.hpp"

namespace {

using namespace gnio;
using doctor::Request;
using doctor::State;
using gnio::testing::contains;
using gnio::testing::FakeHost;
using gnio::testing::pcie_tree;
using gnio::testing::second_gpu;

Request with_nic(const std::string& spec) {
  Request r;
  r.nic_spec = spec;
  return r;
}

void status_with_capeff(FakeHost& h, const std::string& hex) {
  h.write("proc/self/status", "Name:\tgnio\nCapInh:\t0000000000000000\nCapPrm:\t" + hex + "\nCapEff:\t" + hex + "\n");
}

void limits(FakeHost& h, const std::string& soft, const std::string& hard) {
  h.write("proc/self/limits",
          "Limit                     Soft Limit           Hard Limit           Units     \n"
          "Max open files            1024                 1048576              files     \n"
          "Max locked memory         " + soft + "              " + hard + "              bytes     \n");
}

TEST(Peermem, LoadedFromSysOrProc) {
  FakeHost h;
  auto r = h.run("gpudirect.peermem");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "nvidia_peermem is not loaded")) << r.found;
  EXPECT_TRUE(contains(r.found, "gnio's CPU-proxy engine does not need it")) << r.found;
  EXPECT_TRUE(contains(r.fix, "modprobe nvidia_peermem"));

  h.write("proc/modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia_peermem 16384 0 - Live 0x0\n");
  EXPECT_EQ(h.run("gpudirect.peermem").state, State::Pass);

  FakeHost h2;
  h2.mkdir("sys/module/nvidia_peermem");
  r = h2.run("gpudirect.peermem");
  EXPECT_EQ(r.state, State::Pass);
  EXPECT_EQ(r.found, "nvidia_peermem is loaded");
}

TEST(Peermem, ModuleNamePrefixIsNotEnough) {
  FakeHost h;
  h.write("proc/modules", "nvidia_peermem_x 1 0 - Live 0x0\n");
  EXPECT_EQ(h.run("gpudirect.peermem").state, State::Warn);
}

TEST(Dmabuf, NeedsNewKernelAndOpenModules) {
  FakeHost h;
  h.write("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  h.nvidia_driver("580.65.06", true);
  auto r = h.run("gpudirect.dmabuf");
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "NVIDIA driver 580.65.06 (open kernel modules)"));

  h.nvidia_driver("580.65.06", false);
  r = h.run("gpudirect.dmabuf");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "needs NVIDIA open kernel modules >= 515")) << r.found;

  h.nvidia_driver("580.65.06", true);
  h.write("proc/sys/kernel/osrelease", "5.4.0-150-generic\n");
  r = h.run("gpudirect.dmabuf");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "kernel 5.4.0-150-generic")) << r.found;
  EXPECT_TRUE(contains(r.found, "needs Linux >= 5.12")) << r.found;
}

TEST(NicOpen, ReportsCapsOrTheError) {
  FakeHost h;
  EXPECT_EQ(h.run("nic.open").state, State::Skip);
  h.env.open_nic = [](std::string_view spec) -> Result<EthCaps> {
    if (spec == "bogus:")
      return Status(Errc::InvalidValue, Layer::Backend, "queue spec 'bogus:': unknown driver 'bogus'");
    EthCaps c;
    c.driver = "synthetic";
    c.max_rx_queues = 4;
    return c;
  };
  auto r = h.run("nic.open", with_nic("synthetic:count=1"));
  EXPECT_EQ(r.state, State::Pass);
  EXPECT_TRUE(contains(r.found, "driver synthetic, 4 RX / 1 TX queues, burst 256")) << r.found;
  r = h.run("nic.open", with_nic("bogus:"));
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "'bogus:' does not open: queue spec 'bogus:': unknown driver 'bogus'")) << r.found;
  EXPECT_TRUE(contains(r.fix, "gnio diagnose INVALID_VALUE"));
}

TEST(Privileges, AfxdpNeedsNetRawNetAdminBpf) {
  FakeHost h;
  status_with_capeff(h, "0000000000000000");
  auto r = h.run("host.privileges", with_nic("afxdp:eth1"));
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "missing CAP_NET_RAW, CAP_NET_ADMIN, CAP_BPF")) << r.found;
  EXPECT_TRUE(contains(r.fix, "setcap"));

  // CAP_NET_ADMIN (12) + CAP_NET_RAW (13) + CAP_BPF (39).
  status_with_capeff(h, "0000008000003000");
  r = h.run("host.privileges", with_nic("afxdp:eth1"));
  EXPECT_EQ(r.state, State::Pass) << r.found;

  // CAP_SYS_ADMIN (21) stands in for CAP_BPF on older kernels.
  status_with_capeff(h, "0000000000203000");
  EXPECT_EQ(h.run("host.privileges", with_nic("afxdp:eth1")).state, State::Pass);

  status_with_capeff(h, "0000000000001000");  // CAP_NET_ADMIN only
  r = h.run("host.privileges", with_nic("afxdp:eth1"));
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "missing CAP_NET_RAW, CAP_BPF")) << r.found;
}

TEST(Privileges, SoftwareBackendsNeedNone) {
  FakeHost h;
  status_with_capeff(h, "0000000000000000");
  auto r = h.run("host.privileges", with_nic("pcap:/tmp/x.pcap"));
  EXPECT_EQ(r.state, State::Pass);
  EXPECT_EQ(r.found, "backend 'pcap' needs no privileges");
  EXPECT_EQ(h.run("host.privileges").state, State::Skip);
}

TEST(Memlock, TooSmallFailsWithTheNumbers) {
  FakeHost h;
  status_with_capeff(h, "0000000000000000");
  limits(h, "8388608", "8388608");
  Request req;
  req.ring_bytes = 64ull << 20;
  auto r = h.run("host.memlock", req);
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "RLIMIT_MEMLOCK soft 8 MiB, hard 8 MiB; rings need 64 MiB")) << r.found;
  EXPECT_TRUE(contains(r.fix, "limits.conf")) << r.fix;

  limits(h, "8388608", "unlimited");
  r = h.run("host.memlock", req);
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.fix, "ulimit -l 65536")) << r.fix;

  limits(h, "134217728", "134217728");
  EXPECT_EQ(h.run("host.memlock", req).state, State::Pass);

  limits(h, "unlimited", "unlimited");
  EXPECT_EQ(h.run("host.memlock", req).state, State::Pass);
}

TEST(Memlock, IpcLockLiftsTheLimitAndNoSizeSkips) {
  FakeHost h;
  limits(h, "65536", "65536");
  status_with_capeff(h, "0000000000004000");  // CAP_IPC_LOCK
  Request req;
  req.ring_bytes = 1ull << 30;
  auto r = h.run("host.memlock", req);
  EXPECT_EQ(r.state, State::Pass);
  EXPECT_TRUE(contains(r.found, "CAP_IPC_LOCK lifts the limit")) << r.found;

  status_with_capeff(h, "0000000000000000");
  r = h.run("host.memlock");
  EXPECT_EQ(r.state, State::Skip);
  EXPECT_TRUE(contains(r.found, "--ring-bytes")) << r.found;
}

TEST(Hugepages, OnlyDpdkNeedsThem) {
  FakeHost h;
  h.write("proc/meminfo", "MemTotal: 1000 kB\nHugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n");
  auto r = h.run("host.hugepages", with_nic("dpdk:0000:03:00.0"));
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "HugePages_Total 0, free 0, size 2048 kB")) << r.found;
  EXPECT_TRUE(contains(r.fix, "nr_hugepages"));
  EXPECT_EQ(h.run("host.hugepages", with_nic("afxdp:eth0")).state, State::Skip);

  h.write("proc/meminfo", "HugePages_Total:    1024\nHugePages_Free:     1024\nHugepagesize:       2048 kB\n");
  EXPECT_EQ(h.run("host.hugepages", with_nic("dpdk:0000:03:00.0")).state, State::Pass);
  h.write("proc/meminfo", "HugePages_Total:    1024\nHugePages_Free:     0\nHugepagesize:       2048 kB\n");
  r = h.run("host.hugepages", with_nic("dpdk:0000:03:00.0"));
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "every hugepage is in use")) << r.found;
}

TEST(Iommu, ModesFromSysfsAndCmdline) {
  FakeHost h;
  h.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n");
  auto r = h.run("host.iommu");
  EXPECT_EQ(r.state, State::Pass);
  EXPECT_TRUE(contains(r.found, "IOMMU off")) << r.found;
  r = h.run("host.iommu", with_nic("dpdk:0000:03:00.0"));
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "vfio-pci (DPDK) needs an IOMMU")) << r.found;

  h.mkdir("sys/class/iommu/dmar0");
  h.mkdir("sys/class/iommu/dmar1");
  r = h.run("host.iommu");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "IOMMU on, 2 unit(s), translating DMA")) << r.found;
  EXPECT_TRUE(contains(r.fix, "iommu=pt"));

  h.write("proc/cmdline", "root=/dev/sda1 intel_iommu=on iommu=pt\n");
  r = h.run("host.iommu");
  EXPECT_EQ(r.state, State::Pass);
  EXPECT_TRUE(contains(r.found, "passthrough (iommu=pt)")) << r.found;
}

TEST(PciePlacement, SharedSwitchPasses) {
  FakeHost h;
  pcie_tree(h);
  auto r = h.run("host.pcie_placement", with_nic("afxdp:eth9"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "NIC 0000:04:00.0 (NUMA 0), GPU 0000:03:00.0 (NUMA 0)")) << r.found;
  EXPECT_TRUE(contains(r.found, "behind shared PCIe bridges below 0000:01:00.0 (PXB)")) << r.found;
}

TEST(PciePlacement, OneBridgeIsPixAnotherRootPortIsPhb) {
  FakeHost h;
  pcie_tree(h);
  h.env.cuda.devices[0].bus_id = "0000:02:02.0";
  auto r = h.run("host.pcie_placement", with_nic("dpdk:0000:02:03.0"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "behind one PCIe bridge 0000:01:00.0 (PIX)")) << r.found;

  h.env.cuda.devices[0].bus_id = "0000:03:00.0";
  r = h.run("host.pcie_placement", with_nic("dpdk:0000:05:00.0"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "same host bridge pci0000:00 (PHB)")) << r.found;

  r = h.run("host.pcie_placement", with_nic("dpdk:0000:09:00.0"));
  EXPECT_EQ(r.state, State::Skip);
  EXPECT_TRUE(contains(r.found, "PCIe device 0000:09:00.0 is not in")) << r.found;
}

TEST(PciePlacement, OtherSocketWarns) {
  FakeHost h;
  pcie_tree(h);
  auto r = h.run("host.pcie_placement", with_nic("afxdp:eth7"));
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "different NUMA nodes (SYS)")) << r.found;
  EXPECT_TRUE(contains(r.fix, "nvidia-smi topo -m"));
}

TEST(PciePlacement, SkipsWithoutAPcieNic) {
  FakeHost h;
  pcie_tree(h);
  auto r = h.run("host.pcie_placement", with_nic("afxdp:veth0"));
  EXPECT_EQ(r.state, State::Skip);
  EXPECT_TRUE(contains(r.found, "interface veth0 is virtual")) << r.found;
  r = h.run("host.pcie_placement", with_nic("synthetic:count=1"));
  EXPECT_EQ(r.state, State::Skip);
  EXPECT_TRUE(contains(r.found, "drives no NIC")) << r.found;
}

TEST(PciePlacement, EveryListedGpuIsPlacedAndTheOtherSocketWarns) {
  FakeHost h;
  pcie_tree(h);
  second_gpu(h, "0000:81:00.0");
  Request req = with_nic("afxdp:eth9");
  req.gpu = "0000:03:00.0,0000:81:00.0";
  auto r = h.run("host.pcie_placement", req);
  EXPECT_EQ(r.state, State::Warn) << r.found;
  EXPECT_TRUE(contains(r.found, "[0000:03:00.0] NIC 0000:04:00.0 (NUMA 0), GPU 0000:03:00.0 (NUMA 0): behind shared "
                                "PCIe bridges below 0000:01:00.0 (PXB)"))
      << r.found;
  EXPECT_TRUE(contains(r.found, "[0000:81:00.0] NIC 0000:04:00.0 (NUMA 0), GPU 0000:81:00.0 (NUMA 1): different NUMA "
                                "nodes (SYS)"))
      << r.found;
  EXPECT_TRUE(contains(r.fix, "nvidia-smi topo -m"));

  req.gpu = "all";
  auto all = h.run("host.pcie_placement", req);
  EXPECT_EQ(all.state, State::Warn);
  EXPECT_EQ(all.found, r.found);
}

TEST(PciePlacement, AGpuBesideEmulatedDevicesIsPlacedAlone) {
  FakeHost h;
  pcie_tree(h);
  Request req = with_nic("afxdp:eth9");
  req.gpu = "cpu:1,0000:03:00.0";
  auto r = h.run("host.pcie_placement", req);
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "[cpu:1] emulated, not on PCIe; [0000:03:00.0] NIC 0000:04:00.0")) << r.found;

  req.gpu = "cpu:0,cpu:1";
  r = h.run("host.pcie_placement", req);
  EXPECT_EQ(r.state, State::Skip);
  EXPECT_TRUE(contains(r.found, "--gpu cpu:0,cpu:1")) << r.found;
}

TEST(PciePlacement, ABadEntryFailsNamingIt) {
  FakeHost h;
  pcie_tree(h);
  Request req = with_nic("afxdp:eth9");
  req.gpu = "0000:03:00.0,bogus";
  auto r = h.run("host.pcie_placement", req);
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "entry \"bogus\" is not a PCIe bus id")) << r.found;
}

TEST(Doctor, RunsEveryCheckAndExitsOnFail) {
  FakeHost h;
  h.env.cuda.devices.clear();
  h.env.cuda.runtime.error = "cudaGetDeviceCount failed: cudaErrorInsufficientDriver";
  auto results = doctor::run_all(h.env, Request{});
  ASSERT_EQ(results.size(), doctor::checks().size());
  for (const auto& r : results) {
    EXPECT_FALSE(r.requirement.empty()) << r.id;
    EXPECT_FALSE(r.found.empty()) << r.id;
    if (r.state == State::Fail || r.state == State::Warn) {
      EXPECT_FALSE(r.fix.empty()) << r.id;
    }
  }
  EXPECT_EQ(doctor::exit_code(results), 1);
  std::string table = doctor::format_table(results);
  EXPECT_TRUE(contains(table, "[FAIL] cuda.devices")) << table;
  EXPECT_TRUE(contains(table, "fix the FAIL rows first (exit status 1)")) << table;

  auto unknown = doctor::run_check("cuda.nonsense", h.env, Request{});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.status().code(), Errc::NotFound);
}

TEST(Doctor, EmulatedDeviceHasNoFail) {
  FakeHost h;
  h.env.cuda_root.clear();
  h.env.cuda.devices.clear();
  h.env.cuda.runtime.driver_version = 0;
  Request req;
  req.gpu = "cpu";
  auto results = doctor::run_all(h.env, req);
  for (const auto& r : results) EXPECT_NE(r.state, State::Fail) << r.id << ": " << r.found;
  EXPECT_EQ(doctor::exit_code(results), 0);
  std::string json = doctor::to_json(results);
  EXPECT_TRUE(contains(json, "\"exit_code\": 0")) << json;
  EXPECT_TRUE(contains(json, "\"schema_version\": 1"));
}

}  // namespace
