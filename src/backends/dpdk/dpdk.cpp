// dpdk:PORT[,...] — DPDK ethdev. Placeholder until built.
#include <string>

#include "backends/drivers.hpp"

namespace gnio::backend {

Result<std::unique_ptr<Backend>> open_dpdk(std::string_view spec) {
  return Status(Errc::NotSupported, Layer::Backend,
                "queue spec '" + std::string(spec) + "': the dpdk driver is not built into this gnio");
}

}  // namespace gnio::backend
