// SPDX-License-Identifier: Apache-2.0
// CUDA and DOCA rows of the doctor against fake toolkit roots, /proc files
// and pkg-config directories.
#include "fake_host.hpp"

namespace {

using namespace gnio;
using doctor::Request;
using doctor::State;
using gnio::testing::contains;
using gnio::testing::FakeHost;

bool have_pkg_config() {
  return std::system("pkg-config --version > /dev/null 2>&1") == 0;
}

Request cpu_request() {
  Request r;
  r.gpu = "cpu";
  return r;
}

TEST(Toolkit, PassesWhenAllSourcesAgree) {
  FakeHost h;
  h.write("cuda/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "nvcc": {"version": "12.4.131"}})");
  h.script("cuda/bin/nvcc", "echo 'Cuda compilation tools, release 12.4, V12.4.131'");
  h.cuda_h(12040);
  auto r = h.run("cuda.toolkit");
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "CUDA 12.4.1 at " + h.path("cuda"))) << r.found;
  EXPECT_TRUE(contains(r.found, "nvcc 12.4.131")) << r.found;
  EXPECT_TRUE(contains(r.found, "cuda.h 12.4")) << r.found;
  EXPECT_EQ(r.requirement.empty(), false);
}

TEST(Toolkit, WarnsOnAMixedInstall) {
  FakeHost h;
  h.write("cuda/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.6.0"}})");
  h.script("cuda/bin/nvcc", "echo 'Cuda compilation tools, release 12.4, V12.4.131'");
  auto r = h.run("cuda.toolkit");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "partial or mixed install")) << r.found;
  EXPECT_TRUE(contains(r.found, "version.json 12.6.0, nvcc 12.4.131")) << r.found;
  EXPECT_TRUE(contains(r.fix, "one release"));
}

TEST(Toolkit, ReadsVersionTxt) {
  FakeHost h;
  h.write("cuda/version.txt", "CUDA Version 11.8.89\n");
  h.script("cuda/bin/nvcc", "echo 'Cuda compilation tools, release 11.8, V11.8.89'");
  auto r = h.run("cuda.toolkit");
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "version.txt 11.8.89"));
}

TEST(Toolkit, FailsWhenMissing) {
  FakeHost h;
  h.env.cuda_root.clear();
  auto r = h.run("cuda.toolkit");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "no CUDA toolkit found")) << r.found;
  EXPECT_TRUE(contains(r.fix, "--cuda-root"));
  EXPECT_EQ(h.run("cuda.toolkit", cpu_request()).state, State::Skip);

  h.env.cuda_root = h.path("nowhere");
  r = h.run("cuda.toolkit");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, h.path("nowhere") + " does not exist")) << r.found;

  h.env.cuda_root = h.path("cuda");
  r = h.run("cuda.toolkit");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "has no version.json, version.txt")) << r.found;
}

TEST(Toolkit, BrokenNvccIsReported) {
  FakeHost h;
  h.cuda_h(13000);
  h.script("cuda/bin/nvcc", "echo 'error while loading shared libraries' >&2; exit 127");
  auto r = h.run("cuda.toolkit");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "--version printed no release (exit 127)")) << r.found;
}

TEST(Driver, PassesWithModuleAndLibrary) {
  FakeHost h;
  h.nvidia_driver("580.65.06");
  auto r = h.run("cuda.driver");
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_EQ(r.found, "kernel module 580.65.06, CUDA driver API 13.0");
}

TEST(Driver, FailsWithoutDriver) {
  FakeHost h;
  h.env.cuda.runtime.driver_version = 0;
  h.env.cuda.runtime.error = "cudaGetDeviceCount failed: cudaErrorInsufficientDriver";
  auto r = h.run("cuda.driver");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "no NVIDIA driver: " + h.path("proc") + "/driver/nvidia/version is absent")) << r.found;
  EXPECT_TRUE(contains(r.found, "cudaErrorInsufficientDriver"));
  EXPECT_TRUE(contains(r.fix, "--gpu cpu"));
  EXPECT_EQ(h.run("cuda.driver", cpu_request()).state, State::Skip);
}

TEST(Driver, FailsWhenOnlyTheKernelModuleIsThere) {
  FakeHost h;
  h.nvidia_driver("550.54.14", false);
  h.env.cuda.runtime.driver_version = 0;
  auto r = h.run("cuda.driver");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "kernel module 550.54.14 is loaded but the CUDA driver library is not usable")) << r.found;
  EXPECT_TRUE(contains(r.fix, "libcuda.so.1"));
}

TEST(Runtime, NewerMajorThanDriverFails) {
  FakeHost h;
  h.env.cuda.runtime.runtime_version = 13000;
  h.env.cuda.runtime.driver_version = 12080;
  auto r = h.run("cuda.runtime");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "runtime 13.0, driver supports CUDA 12.8")) << r.found;

  h.env.cuda.runtime.runtime_version = 12060;
  h.env.cuda.runtime.driver_version = 12040;
  r = h.run("cuda.runtime");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "minor-version compatibility")) << r.found;

  h.env.cuda.runtime.driver_version = 13000;
  EXPECT_EQ(h.run("cuda.runtime").state, State::Pass);

  h.env.cuda.built_with_cuda = false;
  r = h.run("cuda.runtime");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "built without CUDA"));
}

TEST(DriverCompat, ToolkitNewerThanDriverFailsWithTheMinimum) {
  FakeHost h;
  h.cuda_h(13000);
  h.nvidia_driver("570.124.06");
  h.env.cuda.runtime.driver_version = 12080;
  auto r = h.run("cuda.driver_compat");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "CUDA toolkit 13.0 is newer than the driver supports: it needs driver >= 580 "
                                "(>= 580.65.06 for full support)"))
      << r.found;
  EXPECT_TRUE(contains(r.found, "found driver 570.124.06 (fully supports CUDA <= 12.8)")) << r.found;
  EXPECT_TRUE(contains(r.fix, "upgrade the NVIDIA driver to >= 580.65.06")) << r.fix;
  EXPECT_TRUE(contains(r.fix, "CUDA toolkit <= 12.8")) << r.fix;
}

TEST(DriverCompat, MinorVersionCompatibilityWarns) {
  FakeHost h;
  h.cuda_h(12060);
  h.nvidia_driver("535.104.05");
  auto r = h.run("cuda.driver_compat");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "ships with driver 560.28.03")) << r.found;
  EXPECT_TRUE(contains(r.found, "minor-version compatibility (>= 525.60.13)")) << r.found;
}

TEST(DriverCompat, MatchingDriverPasses) {
  FakeHost h;
  h.cuda_h(12040);
  h.nvidia_driver("550.54.14");
  auto r = h.run("cuda.driver_compat");
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "needs driver >= 550.54.14")) << r.found;
}

TEST(DriverCompat, FallsBackToTheDriverApiVersion) {
  FakeHost h;
  h.cuda_h(13000);
  h.env.cuda.runtime.driver_version = 12040;
  auto r = h.run("cuda.driver_compat");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "driver supports CUDA 12.4")) << r.found;
  h.env.cuda.runtime.driver_version = 0;
  EXPECT_EQ(h.run("cuda.driver_compat").state, State::Skip);
}

TEST(DriverCompat, UnlistedToolkitWarns) {
  FakeHost h;
  h.cuda_h(14000);
  h.nvidia_driver("600.10");
  auto r = h.run("cuda.driver_compat");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "CUDA toolkit 14.0 is not in the compatibility table")) << r.found;
}

TEST(Doca, NotInstalledIsSkipped) {
  if (!have_pkg_config()) GTEST_SKIP() << "pkg-config is not installed";
  FakeHost h;
  auto r = h.run("doca.versions");
  EXPECT_EQ(r.state, State::Skip);
  EXPECT_TRUE(contains(r.found, "DOCA not installed")) << r.found;
  EXPECT_TRUE(contains(r.found, "gnio's own backends do not need DOCA")) << r.found;
  EXPECT_EQ(h.run("doca.cuda").state, State::Skip);
}

TEST(Doca, MismatchedVersionsFail) {
  if (!have_pkg_config()) GTEST_SKIP() << "pkg-config is not installed";
  FakeHost h;
  h.pc_file("doca-gpunetio", "2.9.0");
  h.pc_file("doca-common", "2.8.0");
  auto r = h.run("doca.versions");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "doca-gpunetio 2.9.0 != doca-common 2.8.0")) << r.found;
  EXPECT_TRUE(contains(r.fix, "one DOCA release"));
}

TEST(Doca, PartialInstallFails) {
  if (!have_pkg_config()) GTEST_SKIP() << "pkg-config is not installed";
  FakeHost h;
  h.pc_file("doca-common", "2.9.0");
  auto r = h.run("doca.versions");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "partial DOCA install: doca-common 2.9.0 found but doca-gpunetio not")) << r.found;
}

TEST(Doca, MatchingVersionsPass) {
  if (!have_pkg_config()) GTEST_SKIP() << "pkg-config is not installed";
  FakeHost h;
  h.pc_file("doca-gpunetio", "2.9.0");
  h.pc_file("doca-common", "2.9.0");
  auto r = h.run("doca.versions");
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_EQ(r.found, "doca-gpunetio 2.9.0 == doca-common 2.9.0");
}

TEST(Doca, CudaOutsideTheDocaRangeFails) {
  if (!have_pkg_config()) GTEST_SKIP() << "pkg-config is not installed";
  FakeHost h;
  h.pc_file("doca-gpunetio", "2.9.0");
  h.pc_file("doca-common", "2.9.0");
  h.cuda_h(13000);
  auto r = h.run("doca.cuda");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "DOCA 2.9.0 supports CUDA >= 12.0 and < 13.0 but the CUDA toolkit is 13.0")) << r.found;

  h.cuda_h(12040);
  r = h.run("doca.cuda");
  EXPECT_EQ(r.state, State::Pass) << r.found;
}

TEST(Doca, UnlistedDocaWarnsAndMissingToolkitFails) {
  if (!have_pkg_config()) GTEST_SKIP() << "pkg-config is not installed";
  FakeHost h;
  h.pc_file("doca-gpunetio", "3.1.0");
  h.pc_file("doca-common", "3.1.0");
  h.cuda_h(13000);
  auto r = h.run("doca.cuda");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "DOCA 3.1.0 has no row")) << r.found;
  EXPECT_TRUE(contains(r.fix, "doca-compatibility-policy"));

  h.env.cuda_root.clear();
  r = h.run("doca.cuda");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "no CUDA toolkit was found: a partial install")) << r.found;
}

TEST(Doca, MissingPkgConfigIsSkipped) {
  FakeHost h;
  h.env.pkg_config = h.path("no-such-pkg-config");
  auto r = h.run("doca.versions");
  EXPECT_EQ(r.state, State::Skip);
  EXPECT_TRUE(contains(r.found, "cannot be run")) << r.found;
}

TEST(Devices, ListsThemOrSaysWhyNot) {
  FakeHost h;
  auto r = h.run("cuda.devices");
  EXPECT_EQ(r.state, State::Pass);
  EXPECT_EQ(r.found, "1 device(s): #0 0000:06:00.0 Fake GPU (cc 9.0)");

  h.env.cuda.devices.clear();
  h.env.cuda.runtime.error = "cudaGetDeviceCount failed: cudaErrorNoDevice";
  r = h.run("cuda.devices");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_EQ(r.found, "no CUDA device: cudaGetDeviceCount failed: cudaErrorNoDevice");
  EXPECT_EQ(h.run("cuda.bus_id").state, State::Skip);
  EXPECT_EQ(h.run("cuda.set_device").state, State::Skip);
  EXPECT_EQ(h.run("cuda.devices", cpu_request()).state, State::Skip);
}

TEST(BusId, ResolvesAgainstDevicesAndSysfs) {
  FakeHost h;
  Request req;
  req.gpu = "00000000:06:00.0";
  auto r = h.run("cuda.bus_id", req);
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "0000:06:00.0 is missing")) << r.found;

  h.mkdir("sys/bus/pci/devices/0000:06:00.0");
  r = h.run("cuda.bus_id", req);
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "CUDA device #0 0000:06:00.0 (Fake GPU)"));

  req.gpu = "0000:07:00.0";
  r = h.run("cuda.bus_id", req);
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "bus id 0000:07:00.0 matches none of the CUDA devices (0000:06:00.0)")) << r.found;
}

TEST(SetDevice, ReportsTheRuntimeError) {
  FakeHost h;
  EXPECT_EQ(h.run("cuda.set_device").state, State::Pass);
  h.env.cuda.set_device = [](int ordinal) {
    return Status(Errc::Driver, Layer::Cuda,
                  "cudaSetDevice failed: cudaErrorDevicesUnavailable (ordinal " + std::to_string(ordinal) + ")");
  };
  auto r = h.run("cuda.set_device");
  EXPECT_EQ(r.state, State::Fail);
  EXPECT_TRUE(contains(r.found, "cudaSetDevice(0) for 0000:06:00.0: cudaSetDevice failed: cudaErrorDevicesUnavailable"))
      << r.found;
}

TEST(ModuleLoading, WarnsUnlessEager) {
  FakeHost h;
  auto r = h.run("cuda.module_loading");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "CUDA_MODULE_LOADING is unset")) << r.found;
  EXPECT_TRUE(contains(r.fix, "CUDA_MODULE_LOADING=EAGER")) << r.fix;
  h.env.cuda_module_loading = "LAZY";
  r = h.run("cuda.module_loading");
  EXPECT_EQ(r.state, State::Warn);
  EXPECT_TRUE(contains(r.found, "CUDA_MODULE_LOADING=LAZY")) << r.found;
  h.env.cuda_module_loading = "EAGER";
  EXPECT_EQ(h.run("cuda.module_loading").state, State::Pass);
  EXPECT_EQ(h.run("cuda.module_loading", cpu_request()).state, State::Skip);
  h.env.cuda.devices.clear();
  EXPECT_EQ(h.run("cuda.module_loading").state, State::Skip);
}

}  // namespace

namespace gnio_gpu_lists {

using namespace gnio;
using doctor::Request;
using doctor::State;
using gnio::testing::contains;
using gnio::testing::FakeHost;

Request gpus(const std::string& list) {
  Request r;
  r.gpu = list;
  return r;
}

// Two CUDA devices in sysfs: 0000:03:00.0 (#0) and 0000:81:00.0 (#1).
void two_gpus(FakeHost& h) {
  gnio::testing::pcie_tree(h);
  gnio::testing::second_gpu(h, "0000:81:00.0");
}

TEST(GpuList, BusIdResolvesEveryGpu) {
  FakeHost h;
  two_gpus(h);
  auto r = h.run("cuda.bus_id", gpus("0000:03:00.0,0000:81:00.0"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_EQ(r.found,
            "[0000:03:00.0] --gpu 0000:03:00.0 -> CUDA device #0 0000:03:00.0 (Fake GPU); present in sysfs; "
            "[0000:81:00.0] --gpu 0000:81:00.0 -> CUDA device #1 0000:81:00.0 (Fake GPU); present in sysfs");
  EXPECT_EQ(h.run("cuda.bus_id", gpus("all")).found, r.found);

  r = h.run("cuda.bus_id", gpus("0000:03:00.0,0000:07:00.0"));
  EXPECT_EQ(r.state, State::Fail) << r.found;
  EXPECT_TRUE(contains(r.found, "[0000:07:00.0] --gpu 0000:07:00.0: bus id 0000:07:00.0 matches none of the CUDA "
                                "devices (0000:03:00.0, 0000:81:00.0)"))
      << r.found;
  EXPECT_TRUE(contains(r.fix, "nvidia-smi -L")) << r.fix;
}

TEST(GpuList, EmulatedEntriesSkipBesideARealGpu) {
  FakeHost h;
  two_gpus(h);
  auto r = h.run("cuda.bus_id", gpus("cpu:1,0000:81:00.0"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "[cpu:1] emulated device; [0000:81:00.0] --gpu 0000:81:00.0 -> CUDA device #1"))
      << r.found;
  r = h.run("cuda.set_device", gpus("cpu:1,0000:81:00.0"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_EQ(r.found, "[cpu:1] emulated device: no cudaSetDevice; [0000:81:00.0] cudaSetDevice(1) succeeded for "
                     "0000:81:00.0");
  for (const char* id : {"cuda.bus_id", "cuda.set_device", "gpudirect.peermem", "gpudirect.dmabuf"}) {
    r = h.run(id, gpus("cpu:0,cpu:1"));
    EXPECT_EQ(r.state, State::Skip) << id << ": " << r.found;
  }
  // Host-wide rows are not skipped for a list with a real GPU in it.
  EXPECT_NE(h.run("cuda.driver", gpus("cpu:1,0000:81:00.0")).state, State::Skip);
  EXPECT_EQ(h.run("cuda.driver", gpus("cpu:0,cpu:1")).state, State::Skip);
}

TEST(GpuList, SetDeviceNamesTheGpuThatFails) {
  FakeHost h;
  two_gpus(h);
  h.env.cuda.set_device = [](int ordinal) {
    if (ordinal == 0) return Status::ok();
    return Status(Errc::Driver, Layer::Cuda, "cudaErrorDevicesUnavailable (ordinal " + std::to_string(ordinal) + ")");
  };
  auto r = h.run("cuda.set_device", gpus("0000:03:00.0,0000:81:00.0"));
  EXPECT_EQ(r.state, State::Fail) << r.found;
  EXPECT_EQ(r.found, "[0000:03:00.0] cudaSetDevice(0) succeeded for 0000:03:00.0; [0000:81:00.0] cudaSetDevice(1) for "
                     "0000:81:00.0: cudaErrorDevicesUnavailable (ordinal 1)");
  EXPECT_TRUE(contains(r.fix, "nvidia-smi -q -i 0000:81:00.0")) << r.fix;
}

TEST(GpuList, GpudirectRowsNameEveryGpu) {
  FakeHost h;
  two_gpus(h);
  auto r = h.run("gpudirect.peermem", gpus("cpu:1,0000:03:00.0,0000:81:00.0"));
  EXPECT_EQ(r.state, State::Warn) << r.found;
  EXPECT_TRUE(contains(r.found, "[cpu:1] emulated: no GPU memory to share; [0000:03:00.0] nvidia_peermem is not loaded"))
      << r.found;
  EXPECT_TRUE(contains(r.found, "; [0000:81:00.0] nvidia_peermem is not loaded")) << r.found;
  EXPECT_TRUE(contains(r.fix, "modprobe nvidia_peermem")) << r.fix;
  h.mkdir("sys/module/nvidia_peermem");
  r = h.run("gpudirect.peermem", gpus("cpu:1,0000:03:00.0"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_EQ(r.found, "[cpu:1] emulated: no GPU memory to share; [0000:03:00.0] nvidia_peermem is loaded");

  h.write("proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  h.nvidia_driver("580.65.06", true);
  r = h.run("gpudirect.dmabuf", gpus("0000:81:00.0,cpu:2"));
  EXPECT_EQ(r.state, State::Pass) << r.found;
  EXPECT_TRUE(contains(r.found, "[0000:81:00.0] kernel 6.8.0-45-generic, NVIDIA driver 580.65.06")) << r.found;
  EXPECT_TRUE(contains(r.found, "; [cpu:2] emulated: no GPU memory to share")) << r.found;
}

TEST(GpuList, ABadEntryFailsEveryPerGpuRow) {
  FakeHost h;
  two_gpus(h);
  for (const char* id : {"cuda.bus_id", "cuda.set_device", "gpudirect.peermem", "gpudirect.dmabuf"}) {
    auto r = h.run(id, gpus("0000:03:00.0,bogus"));
    EXPECT_EQ(r.state, State::Fail) << id;
    EXPECT_TRUE(contains(r.found, "entry \"bogus\" is not a PCIe bus id")) << id << ": " << r.found;
  }
}

}  // namespace gnio_gpu_lists
