// dpdk:PORT[,...] in a gnio built without DPDK's headers (libdpdk from pkg-config).
#include <string>

#include "backends/drivers.hpp"

namespace gnio::backend {

Result<std::unique_ptr<Backend>> open_dpdk(std::string_view spec) {
  return Status(Errc::NotSupported, Layer::Backend,
                "queue spec '" + std::string(spec) +
                    "': the dpdk driver is not built into this gnio (no libdpdk from pkg-config at build time); "
                    "install dpdk-dev and rebuild",
                Axis::Nic);
}

}  // namespace gnio::backend
