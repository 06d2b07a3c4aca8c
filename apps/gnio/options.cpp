// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <fstream>
#include <iostream>

#include "gnio/capabilities.hpp"
#include "gnio/gpu.hpp"
#include "gnio/text_escape.hpp"

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

// The words of the issue a placement answers: one switch, one root complex,
// one NUMA node.
const char* placement_where(const PciePlacement& p) {
  switch (p.relation) {
    case PcieRelation::Pix:
    case PcieRelation::Pxb: return "same_switch";
    case PcieRelation::Phb: return "same_root_complex";
    case PcieRelation::Node: return "other_root_complex";
    case PcieRelation::Sys: return "across_sockets";
  }
  return "unknown";
}

nlohmann::json node_or_null(int node) { return node < 0 ? nlohmann::json(nullptr) : nlohmann::json(node); }

nlohmann::json unplaced(std::string why) { return {{"relation", nullptr}, {"reason", escape_text(why)}}; }

nlohmann::json placement_json(const std::string& sys_root, const std::string& nic_spec, const std::string& bus_id) {
  if (nic_spec.empty()) return unplaced("no --nic SPEC given");
  auto placed = place_gpu_against_nic(sys_root, nic_spec, bus_id);
  if (!placed) return unplaced(placed.status().message());
  const PciePlacement& p = *placed;
  return {{"relation", pcie_relation_name(p.relation)},
          {"where", placement_where(p)},
          {"same_switch", p.same_switch()},
          {"same_root_complex", p.same_root_complex()},
          {"same_numa_node", !p.other_numa_node()},
          {"nic_bus_id", p.nic_bus_id},
          {"nic_numa_node", node_or_null(p.nic_numa_node)},
          {"gpu_numa_node", node_or_null(p.gpu_numa_node)},
          {"nic_host_bridge", p.nic_host_bridge},
          {"gpu_host_bridge", p.gpu_host_bridge},
          {"shared_bridge", p.shared_bridge.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.shared_bridge)},
          {"text", p.describe()}};
}

}  // namespace

nlohmann::json gpus_json(const std::vector<std::string>& entries, const std::vector<CudaDeviceInfo>& devices,
                         const std::string& sys_root, const std::string& nic_spec) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const std::string& e : entries) {
    nlohmann::json g{{"gpu", e}, {"bus_id", nullptr}, {"numa_node", nullptr}};
    if (Gpu::names_emulated(e)) {
      g["kind"] = "emulated";
      g["placement"] = unplaced("emulated device, not on PCIe");
    } else if (const CudaDeviceInfo* d = find_device(e, devices)) {
      g["kind"] = "cuda";
      g["bus_id"] = d->bus_id;
      g["ordinal"] = d->ordinal;
      g["numa_node"] = numa_node(sys_root, d->bus_id);
      g["placement"] = placement_json(sys_root, nic_spec, d->bus_id);
    } else {
      // sysfs places a bus id whether or not CUDA enumerates the device.
      g["kind"] = "unavailable";
      const std::string bus = normalize_bus_id(e);
      g["placement"] = bus.empty() ? unplaced("no CUDA device for " + e) : placement_json(sys_root, nic_spec, bus);
    }
    gpus.push_back(std::move(g));
  }
  return gpus;
}

std::string gpu_line(const nlohmann::json& g) {
  std::string line = g["gpu"].get<std::string>() + ": " + g["kind"].get<std::string>();
  if (!g["bus_id"].is_null()) line += ", bus " + g["bus_id"].get<std::string>();
  if (!g["numa_node"].is_null()) line += ", NUMA " + std::to_string(g["numa_node"].get<int>());
  const nlohmann::json& p = g["placement"];
  if (p["relation"].is_null()) return line;
  const std::string where = p["where"].get<std::string>();
  line += "; against NIC " + p["nic_bus_id"].get<std::string>() + " (NUMA " +
          (p["nic_numa_node"].is_null() ? std::string("?") : std::to_string(p["nic_numa_node"].get<int>())) +
          "): " + (where == "same_switch"         ? "same PCIe switch"
                   : where == "same_root_complex" ? "same root complex"
                   : where == "other_root_complex" ? "another root complex, same NUMA node"
                                                   : "across sockets") +
          ", " + p["text"].get<std::string>();
  return line;
}

void exit_with(int code) { throw CLI::RuntimeError(code); }

}  // namespace gnio::cli
