// SPDX-License-Identifier: Apache-2.0
// PCIe link generation and width from sysfs, so that no NVML is needed.
#include <cstdlib>
#include <fstream>
#include <string>

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

}  // namespace gnio
