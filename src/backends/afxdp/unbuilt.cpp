// SPDX-License-Identifier: Apache-2.0
// afxdp:IFACE[,...] without libxdp/libbpf at build time.
#include <string>

#include "backends/drivers.hpp"

namespace gnio::backend {

Result<std::unique_ptr<Backend>> open_afxdp(std::string_view spec) {
  return Status(Errc::NotSupported, Layer::Backend,
                "queue spec '" + std::string(spec) +
                    "': the afxdp driver is not built into this gnio; install libxdp-dev and libbpf-dev "
                    "(scripts/bootstrap.sh) and configure gnio again");
}

}  // namespace gnio::backend
