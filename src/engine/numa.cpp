// SPDX-License-Identifier: Apache-2.0
#include "engine/numa.hpp"

#include <fstream>
#include <sstream>

namespace gnio::detail {

namespace {

bool read_line(const std::string& path, std::string& out) {
  std::ifstream in(path);
  return static_cast<bool>(std::getline(in, out));
}

bool parse_int(const std::string& s, int& v) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  v = std::stoi(s);
  return true;
}

}  // namespace

std::vector<int> parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    const size_t dash = part.find('-');
    int lo = 0, hi = 0;
    if (!parse_int(part.substr(0, dash), lo) || !parse_int(dash == std::string::npos ? part : part.substr(dash + 1), hi) ||
        hi < lo)
      return {};
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  return cpus;
}

std::vector<int> cpus_near_pci_device(const std::string& sysfs, const std::string& bus_id) {
  std::string node_text, list;
  int node = -1;
  if (!read_line(sysfs + "/bus/pci/devices/" + bus_id + "/numa_node", node_text) || !parse_int(node_text, node))
    return {};  // no such device, or -1
  if (!read_line(sysfs + "/devices/system/node/node" + std::to_string(node) + "/cpulist", list)) return {};
  return parse_cpulist(list);
}

}  // namespace gnio::detail
