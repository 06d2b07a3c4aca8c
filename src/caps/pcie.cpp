// SPDX-License-Identifier: Apache-2.0
// PCIe facts from sysfs, so that no NVML is needed: a device's link
// generation and width, and where a GPU sits relative to the NIC.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gnio/capabilities.hpp"

namespace gnio {

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// sysfs prints the per-lane rate ("16.0 GT/s PCIe"); each generation has
// one rate.
int gen_from_speed(const std::string& speed) {
  double gts = std::strtod(speed.c_str(), nullptr);
  struct Rate {
    double gts;
    int gen;
  };
  static constexpr Rate kRates[] = {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}, {128.0, 7}};
  for (const Rate& r : kRates)
    if (gts > r.gts - 0.01 && gts < r.gts + 0.01) return r.gen;
  return 0;
}

}  // namespace

PcieLink read_pcie_link(const std::string& sys_root, const std::string& bus_id) {
  PcieLink link;
  if (bus_id.empty()) return link;
  const std::string dir = sys_root + "/bus/pci/devices/" + bus_id + "/";
  link.gen = gen_from_speed(read_first_line(dir + "current_link_speed"));
  link.width = std::atoi(read_first_line(dir + "current_link_width").c_str());
  if (link.width < 0) link.width = 0;
  return link;
}

namespace {

namespace fs = std::filesystem;

Status not_found(std::string why) { return Status(Errc::NotFound, Layer::Caps, std::move(why)); }

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos <= s.size();) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    out.emplace_back(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

bool is_software_driver(std::string_view driver) {
  return driver == "pcap" || driver == "pcap-out" || driver == "pcapng-out" || driver == "synthetic" ||
         driver == "loop" || driver == "mem" || driver == "null";
}

}  // namespace

Result<PciePosition> read_pcie_position(const std::string& sys_root, const std::string& device_link) {
  std::error_code ec;
  const fs::path dev = fs::canonical(device_link, ec);
  if (ec) return not_found(device_link + " does not resolve (" + ec.message() + ")");
  const fs::path devices = fs::canonical(fs::path(sys_root) / "devices", ec);
  if (ec) return not_found(sys_root + "/devices does not resolve (" + ec.message() + ")");
  const fs::path rel = dev.lexically_relative(devices);
  if (rel.empty() || rel.begin()->string() == "..")
    return not_found(device_link + " leads to " + dev.string() + ", outside " + devices.string());
  PciePosition p;
  for (const auto& part : rel) {
    const std::string s = part.string();
    if (p.host_bridge.empty()) p.host_bridge = s;
    else if (!normalize_bus_id(s).empty()) p.chain.push_back(s);
  }
  if (p.chain.empty()) return not_found(device_link + " leads to " + dev.string() + ", which is no PCIe device");
  std::ifstream numa(dev / "numa_node");
  if (int node = -1; numa >> node && node >= 0) p.numa_node = node;
  return p;
}

Result<std::string> nic_pcie_device(const std::string& sys_root, std::string_view nic_spec) {
  const size_t colon = nic_spec.find(':');
  const std::string driver(nic_spec.substr(0, colon));
  const std::string args(colon == std::string_view::npos ? std::string_view() : nic_spec.substr(colon + 1));
  std::error_code ec;
  if (driver == "afxdp") {
    const std::string iface = split_commas(args).front();
    const std::string link = sys_root + "/class/net/" + iface + "/device";
    if (iface.empty()) return not_found("the afxdp spec names no interface");
    if (!fs::exists(sys_root + "/class/net/" + iface, ec)) return not_found("interface " + iface + " does not exist");
    if (!fs::exists(link, ec)) return not_found("interface " + iface + " is virtual (no PCIe device behind it)");
    return link;
  }
  if (driver == "dpdk") {
    for (std::string tok : split_commas(args)) {
      if (size_t eq = tok.find('='); eq != std::string::npos) tok = tok.substr(eq + 1);
      const std::string bus = normalize_bus_id(tok);
      if (bus.empty()) continue;
      const std::string link = sys_root + "/bus/pci/devices/" + bus;
      if (fs::exists(link, ec)) return link;
      return not_found("PCIe device " + bus + " is not in " + sys_root + "/bus/pci/devices");
    }
    return not_found("the dpdk spec names no PCIe address (a virtual PMD)");
  }
  return not_found(is_software_driver(driver) ? "backend '" + driver + "' drives no NIC"
                                              : "backend '" + driver + "' is not known");
}

std::string_view pcie_relation_name(PcieRelation r) noexcept {
  switch (r) {
    case PcieRelation::Pix: return "PIX";
    case PcieRelation::Pxb: return "PXB";
    case PcieRelation::Phb: return "PHB";
    case PcieRelation::Node: return "NODE";
    case PcieRelation::Sys: return "SYS";
  }
  return "unknown";
}

std::string PciePlacement::describe() const {
  switch (relation) {
    case PcieRelation::Pix: return "behind one PCIe bridge " + shared_bridge + " (PIX)";
    case PcieRelation::Pxb: return "behind shared PCIe bridges below " + shared_bridge + " (PXB)";
    case PcieRelation::Phb: return "same host bridge " + nic_host_bridge + " (PHB)";
    case PcieRelation::Node:
      return "different PCIe host bridges " + nic_host_bridge + " / " + gpu_host_bridge + " (NODE)";
    case PcieRelation::Sys:
      if (same_root_complex()) return "one host bridge " + nic_host_bridge + " but different NUMA nodes (SYS)";
      return "different NUMA nodes (SYS): traffic crosses the socket interconnect";
  }
  return "unknown";
}

PciePlacement place_pcie(const PciePosition& nic, const PciePosition& gpu) {
  PciePlacement p;
  p.nic_bus_id = nic.chain.empty() ? std::string() : nic.chain.back();
  p.gpu_bus_id = gpu.chain.empty() ? std::string() : gpu.chain.back();
  p.nic_numa_node = nic.numa_node;
  p.gpu_numa_node = gpu.numa_node;
  p.nic_host_bridge = nic.host_bridge;
  p.gpu_host_bridge = gpu.host_bridge;
  if (p.other_numa_node()) {
    p.relation = PcieRelation::Sys;
    return p;
  }
  if (nic.host_bridge != gpu.host_bridge) {
    p.relation = PcieRelation::Node;
    return p;
  }
  size_t common = 0;
  while (common < nic.chain.size() && common < gpu.chain.size() && nic.chain[common] == gpu.chain[common]) ++common;
  if (common == 0) {
    p.relation = PcieRelation::Phb;
    return p;
  }
  p.shared_bridge = nic.chain[common - 1];
  const bool one_level = nic.chain.size() == common + 1 && gpu.chain.size() == common + 1;
  p.relation = one_level ? PcieRelation::Pix : PcieRelation::Pxb;
  return p;
}

Result<PciePlacement> place_gpu_against_nic(const std::string& sys_root, std::string_view nic_spec,
                                            const std::string& gpu_bus_id) {
  auto link = nic_pcie_device(sys_root, nic_spec);
  if (!link) return link.status();
  auto nic = read_pcie_position(sys_root, *link);
  if (!nic) return not_found("sysfs does not show where the NIC sits: " + nic.status().message());
  auto gpu = read_pcie_position(sys_root, sys_root + "/bus/pci/devices/" + gpu_bus_id);
  if (!gpu) return not_found("sysfs does not show where the GPU " + gpu_bus_id + " sits: " + gpu.status().message());
  return place_pcie(*nic, *gpu);
}

}  // namespace gnio
