// SPDX-License-Identifier: Apache-2.0
// Where a PCI device sits in the host's NUMA topology, from sysfs: the
// CPUs of its node, so that the engine thread of a queue runs next to the
// GPU whose ring it fills.
#pragma once

#include <string>
#include <vector>

namespace gnio::detail {

// The CPUs of the NUMA node of PCI device `bus_id` ("0000:06:00.0"), read
// from `sysfs` (normally "/sys"): bus/pci/devices/BUS/numa_node, then
// devices/system/node/nodeN/cpulist ("0-7,16-23"). Empty where sysfs does
// not tell: no such device (an emulated one), node -1 (one node, or the
// firmware says nothing), or an unreadable list.
std::vector<int> cpus_near_pci_device(const std::string& sysfs, const std::string& bus_id);

// The CPUs of a cpulist ("0-3,8,10-11"); empty for text that is not one.
std::vector<int> parse_cpulist(const std::string& text);

}  // namespace gnio::detail
