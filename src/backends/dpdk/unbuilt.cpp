// SPDX-License-Identifier: Apache-2.0
// dpdk:PORT[,...] in a gnio built without DPDK's headers (libdpdk from pkg-config).
#include <string>

#include "backends/dpdk/caps.hpp"
#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

Result<std::unique_ptr<Backend>> open_dpdk(std::string_view spec) {
  return Status(Errc::NotSupported, Layer::Backend,
                "queue spec '" + std::string(spec) +
                    "': the dpdk driver is not built into this gnio (no libdpdk from pkg-config at build time); "
                    "install dpdk-dev and rebuild",
                Axis::Nic);
}

}  // namespace gnio::backend

namespace gnio::caps {

std::optional<DriverReport> dpdk_port_report(std::string_view spec) {
  if (backend::spec_driver(spec) != "dpdk") return std::nullopt;
  const std::string why = "the dpdk driver is not built into this gnio (install dpdk-dev and rebuild)";
  return DriverReport{"DPDK port", "dpdk_port", "  " + why + "\n", "{\"error\": \"" + why + "\"}"};
}

}  // namespace gnio::caps
