// SPDX-License-Identifier: Apache-2.0
// describe_nic(): the driver table's report column (backends/drivers.hpp).
#include "gnio/driver_report.hpp"

#include "backends/afxdp/caps.hpp"
#include "backends/dpdk/caps.hpp"
#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio {

std::optional<DriverReport> describe_nic(std::string_view spec) {
  struct Row {
    std::string_view name;
    std::optional<DriverReport> (*describe)(std::string_view);
  };
#define GNIO_DESCRIBE_ROW(name, open, describe) Row{name, describe},
  static constexpr Row kRows[] = {GNIO_DRIVER_TABLE(GNIO_DESCRIBE_ROW)};
#undef GNIO_DESCRIBE_ROW
  const std::string_view driver = backend::spec_driver(spec);
  for (const Row& row : kRows)
    if (row.name == driver) return row.describe ? row.describe(spec) : std::nullopt;
  return std::nullopt;
}

}  // namespace gnio
