// SPDX-License-Identifier: Apache-2.0
// The NIC axis of a dpdk:PORT spec as DPDK reports it (rte_eth_dev_info_get):
// the PMD and bus, queue and descriptor limits, packet length and MTU
// bounds, RX/TX offloads, the RSS functions and key/RETA sizes, MAC and link.
// The port is probed if it is not yet, not configured. The dpdk row of the
// driver table (backends/drivers.hpp) names it.
#pragma once

#include <optional>
#include <string_view>

#include "gnio/driver_report.hpp"

namespace gnio::caps {

// nullopt for specs of other drivers; for a dpdk spec whose port cannot be
// queried (or a gnio built without DPDK), the report says why.
std::optional<DriverReport> dpdk_port_report(std::string_view spec);

}  // namespace gnio::caps
