// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief What a live driver says of its NIC beyond EthCaps: the AF_XDP
/// interface as the kernel reports it, the DPDK port as DPDK reports it.
///
/// `gnio caps` prints it under the capability report; host only, and it
/// may open the spec once (attach, bind, close) to learn what it runs as.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gnio {

/// @brief One driver's report on the NIC a spec names.
struct DriverReport {
  std::string title;     ///< The heading of the text, e.g. "AF_XDP interface" or "DPDK port".
  std::string json_key;  ///< The key under "nic" that the JSON object goes to, e.g. "interface".
  std::string text;      ///< Indented lines, one fact a line, each ending in a newline.
  std::string json;      ///< One JSON object; {"error": ...} when the NIC cannot be queried.
};

/// @brief Asks the driver of a queue spec to describe its NIC.
/// @param spec A queue spec, such as "afxdp:eth0" or "dpdk:0000:3b:00.0".
/// @return The driver's report, which says why where the NIC cannot be
///         queried; std::nullopt when the spec's driver has no report
///         (pcap, synthetic, loop, ...) or names no known driver.
std::optional<DriverReport> describe_nic(std::string_view spec);

}  // namespace gnio
