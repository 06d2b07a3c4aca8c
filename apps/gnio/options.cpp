// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <fstream>
#include <iostream>

#include "gnio/gpu.hpp"

namespace gnio::cli {

void add_target_options(CLI::App* cmd, TargetOptions& t, bool with_ring_bytes) {
  cmd->add_option("--nic", t.nic,
                  "Queue spec of the NIC to drive: pcap:FILE, pcap-out:FILE, pcapng-out:FILE, synthetic:..., loop:, "
                  "afxdp:IFACE, dpdk:...")
      ->type_name("SPEC");
  cmd->add_option("--gpu", t.gpu,
                  "GPUs to drive, comma-separated: PCIe bus ids (0000:06:00.0, as nvidia-smi -L prints them), 'auto' "
                  "(the first CUDA device), 'cpu:N' (emulated device N; 'cpu' is cpu:0), or 'all' alone (every CUDA "
                  "device)")
      ->type_name("BUSID,...|auto|all|cpu:N")
      ->capture_default_str();
  if (with_ring_bytes)
    cmd->add_option("--ring-bytes", t.ring_bytes,
                    "Bytes of rings the run will pin, checked against RLIMIT_MEMLOCK (suffixes k, m, g: 64m)")
        ->type_name("N")
        ->transform(CLI::AsSizeValue(false));
}

void add_root_options(CLI::App* cmd, RootOptions& r) {
  cmd->add_option("--cuda-root", r.cuda_root,
                  "CUDA toolkit root to check instead of $CUDA_HOME / $CUDA_PATH / /usr/local/cuda / nvcc on PATH")
      ->type_name("DIR");
  cmd->add_option("--sys-root", r.sys_root, "Read sysfs from DIR instead of /sys")->type_name("DIR");
  cmd->add_option("--proc-root", r.proc_root, "Read procfs from DIR instead of /proc")->type_name("DIR");
  cmd->add_option("--pkg-config-path", r.pkg_config_path,
                  "PKG_CONFIG_PATH for the DOCA lookups instead of the inherited one")
      ->type_name("PATH");
  cmd->add_option("--compat-dir", r.compat_dir,
                  "Read cuda_driver.json and doca_cuda.json from DIR instead of the tables built into gnio")
      ->type_name("DIR");
}

doctor::Request make_request(const TargetOptions& t) {
  doctor::Request req;
  req.nic_spec = t.nic;
  req.gpu = t.gpu;
  req.ring_bytes = t.ring_bytes;
  return req;
}

doctor::Environment make_environment(const RootOptions& r) {
  doctor::Environment env = doctor::Environment::real();
  if (!r.cuda_root.empty()) env.cuda_root = r.cuda_root;
  if (!r.sys_root.empty()) env.sys_root = r.sys_root;
  if (!r.proc_root.empty()) env.proc_root = r.proc_root;
  if (!r.pkg_config_path.empty()) env.pkg_config_path = r.pkg_config_path;
  if (!r.compat_dir.empty()) env.compat_dir = r.compat_dir;
  return env;
}

std::vector<std::string> gpu_entries(const std::string& command, const TargetOptions& t,
                                     const std::vector<CudaDeviceInfo>& devices) {
  auto parsed = Gpu::parse_list(t.gpu);
  if (!parsed) {
    std::cerr << "gnio " << command << ": --gpu " << t.gpu << ": " << parsed.status().to_string() << "\n";
    exit_with(2);
  }
  if (parsed->front() != "all") return std::move(*parsed);
  std::vector<std::string> all;
  for (const CudaDeviceInfo& d : devices) all.push_back(d.bus_id);
  return all;
}

namespace {

const CudaDeviceInfo* find_device(const std::string& entry, const std::vector<CudaDeviceInfo>& devices) {
  if (entry == "auto") return devices.empty() ? nullptr : &devices.front();
  const std::string bus = normalize_bus_id(entry);
  for (const CudaDeviceInfo& d : devices)
    if (d.bus_id == bus) return &d;
  return nullptr;
}

// sysfs writes -1 where the platform has no NUMA information.
nlohmann::json numa_node(const std::string& sys_root, const std::string& bus_id) {
  std::ifstream in(sys_root + "/bus/pci/devices/" + bus_id + "/numa_node");
  int node = -1;
  if (!(in >> node) || node < 0) return nullptr;
  return node;
}

}  // namespace

nlohmann::json gpus_json(const std::vector<std::string>& entries, const std::vector<CudaDeviceInfo>& devices,
                         const std::string& sys_root) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const std::string& e : entries) {
    nlohmann::json g{{"gpu", e}, {"bus_id", nullptr}, {"numa_node", nullptr}};
    if (Gpu::names_emulated(e)) g["kind"] = "emulated";
    else if (const CudaDeviceInfo* d = find_device(e, devices)) {
      g["kind"] = "cuda";
      g["bus_id"] = d->bus_id;
      g["ordinal"] = d->ordinal;
      g["numa_node"] = numa_node(sys_root, d->bus_id);
    } else
      g["kind"] = "unavailable";
    gpus.push_back(std::move(g));
  }
  return gpus;
}

void exit_with(int code) { throw CLI::RuntimeError(code); }

}  // namespace gnio::cli
