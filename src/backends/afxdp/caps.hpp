// SPDX-License-Identifier: Apache-2.0
// The NIC axis of an afxdp:IFACE spec as the kernel reports it: channels,
// the XDP modes the driver has, MTU against the frame size, the driver and
// any XDP program already attached; then the XDP mode the spec runs in
// (EthCaps::xdp_mode), learnt by opening it once (attach, bind, detach).
// The afxdp row of the driver table (backends/drivers.hpp) names it.
#pragma once

#include <optional>
#include <string_view>

#include "gnio/driver_report.hpp"

namespace gnio::caps {

// nullopt for specs of other drivers; for an afxdp spec whose interface
// cannot be queried, the report says why.
std::optional<DriverReport> afxdp_interface_report(std::string_view spec);

}  // namespace gnio::caps
