// SPDX-License-Identifier: Apache-2.0
// A temporary directory standing in for /sys, /proc, the CUDA toolkit root
// and a pkg-config directory, plus injected CUDA facts, so that every doctor
// input is under the test's control.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gnio/doctor.hpp"

namespace gnio::testing {

class FakeHost {
 public:
  FakeHost() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = std::filesystem::path(::testing::TempDir()) /
            ("gnio_fake_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    for (const char* d : {"sys/class/iommu", "sys/module", "sys/bus/pci/devices", "sys/devices", "proc/self",
                          "cuda", "pc"})
      std::filesystem::create_directories(root_ / d);
    env.sys_root = (root_ / "sys").string();
    env.proc_root = (root_ / "proc").string();
    env.cuda_root = (root_ / "cuda").string();
    env.pkg_config_path = (root_ / "pc").string();
    env.pkg_config_system_dirs = false;

    env.cuda.built_with_cuda = true;
    env.cuda.runtime.available = true;
    env.cuda.runtime.runtime_version = 13000;
    env.cuda.runtime.driver_version = 13000;
    CudaDeviceInfo d;
    d.ordinal = 0;
    d.bus_id = "0000:06:00.0";
    d.name = "Fake GPU";
    d.cc_major = 9;
    env.cuda.devices = {d};
    env.cuda.set_device = [](int) { return Status::ok(); };
  }
  ~FakeHost() { std::filesystem::remove_all(root_); }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  std::string path(const std::string& rel) const { return (root_ / rel).string(); }

  void write(const std::string& rel, const std::string& content) {
    std::filesystem::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << content;
  }
  void mkdir(const std::string& rel) { std::filesystem::create_directories(root_ / rel); }
  // A relative symlink, as sysfs has them.
  void link(const std::string& rel_link, const std::string& rel_target) {
    std::filesystem::path l = root_ / rel_link;
    std::filesystem::create_directories(l.parent_path());
    std::filesystem::create_symlink(std::filesystem::relative(root_ / rel_target, l.parent_path()), l);
  }
  void script(const std::string& rel, const std::string& body) {
    write(rel, "#!/bin/sh\n" + body + "\n");
    std::filesystem::permissions(root_ / rel, std::filesystem::perms::owner_all);
  }
  void pc_file(const std::string& name, const std::string& version) {
    write("pc/" + name + ".pc", "prefix=/opt/mellanox/doca\nName: " + name + "\nDescription: fake\nVersion: " +
                                    version + "\n");
  }
  void nvidia_driver(const std::string& version, bool open_modules = true) {
    write("proc/driver/nvidia/version",
          std::string("NVRM version: NVIDIA UNIX ") + (open_modules ? "Open Kernel Module for x86_64" : "x86_64 Kernel Module") +
              "  " + version + "  Release Build  (dvs-builder@U16)  Thu Jan  1 00:00:00 UTC 2025\n"
              "GCC version:  gcc version 12.2.0\n");
  }
  void cuda_h(int version) { write("cuda/include/cuda.h", "#pragma once\n#define CUDA_VERSION " + std::to_string(version) + "\n"); }

  doctor::CheckResult run(std::string_view id, const doctor::Request& req = {}) const {
    auto r = doctor::run_check(id, env, req);
    if (!r) ADD_FAILURE() << r.status().to_string();
    return r ? *r : doctor::CheckResult{};
  }

  doctor::Environment env;

 private:
  std::filesystem::path root_;
};

// A PCIe tree under the fake /sys (two sockets, one switch), the GPU on it:
// pci0000:00 - 0000:00:01.0 (root port) - 0000:01:00.0 (switch upstream)
//   - 0000:02:00.0 - 0000:03:00.0 GPU
//   - 0000:02:01.0 - 0000:04:00.0 NIC (eth9)
//   - 0000:02:02.0, 0000:02:03.0 endpoints right below the switch
// pci0000:00 - 0000:00:02.0 - 0000:05:00.0 NIC on another root port
// pci0000:80 - 0000:80:01.0 - 0000:81:00.0 NIC (eth7, other socket, NUMA 1)
inline void pcie_tree(FakeHost& h) {
  const std::string sw = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
  for (const std::string& dev : {sw + "/0000:02:00.0/0000:03:00.0", sw + "/0000:02:01.0/0000:04:00.0",
                                sw + "/0000:02:02.0", sw + "/0000:02:03.0",
                                std::string("sys/devices/pci0000:00/0000:00:02.0/0000:05:00.0")}) {
    h.write(dev + "/numa_node", "0\n");
    h.link("sys/bus/pci/devices/" + dev.substr(dev.rfind('/') + 1), dev);
  }
  h.write("sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/numa_node", "1\n");
  h.link("sys/bus/pci/devices/0000:81:00.0", "sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0");
  h.link("sys/class/net/eth9/device", sw + "/0000:02:01.0/0000:04:00.0");
  h.link("sys/class/net/eth7/device", "sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0");
  h.mkdir("sys/class/net/veth0");
  h.env.cuda.devices[0].bus_id = "0000:03:00.0";
}

// One more CUDA device of the tree: 0000:81:00.0 (the other socket's root
// port, the eth7 slot) or 0000:02:02.0 (right below the switch).
inline void second_gpu(FakeHost& h, const std::string& bus_id) {
  CudaDeviceInfo other = h.env.cuda.devices[0];
  other.ordinal = static_cast<int>(h.env.cuda.devices.size());
  other.bus_id = bus_id;
  h.env.cuda.devices.push_back(other);
}

inline bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace gnio::testing
