#include "backends/backend.hpp"

#include <string>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

Result<std::unique_ptr<Backend>> open_backend(std::string_view spec) {
  std::string_view driver = spec_driver(spec);
  if (driver == "pcap") return open_pcap(spec);
  if (driver == "pcap-out") return open_pcap_out(spec);
  if (driver == "synthetic") return open_synthetic(spec);
  if (driver == "loop") return open_loop(spec);
  return Status(Errc::InvalidValue, Layer::Backend,
                "queue spec '" + std::string(spec) + "': unknown driver '" + std::string(driver) +
                    "'; known drivers: pcap, pcap-out, synthetic, loop (e.g. 'pcap:FILE', 'loop:')");
}

}  // namespace gnio::backend
