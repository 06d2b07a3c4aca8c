// afxdp:IFACE[,...] — AF_XDP sockets (libxdp). Placeholder until built.
#include <string>

#include "backends/drivers.hpp"

namespace gnio::backend {

Result<std::unique_ptr<Backend>> open_afxdp(std::string_view spec) {
  return Status(Errc::NotSupported, Layer::Backend,
                "queue spec '" + std::string(spec) + "': the afxdp driver is not built into this gnio");
}

}  // namespace gnio::backend
