// SPDX-License-Identifier: Apache-2.0
// nic_bench's options, parsed in nic_bench_main.cpp (host C++ only) and used in
// nic/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nic_bench {

// The veth end the receivers open, in the device-under-test namespace.
inline constexpr const char* kDutIf = "gnx0";

struct Options {
  std::string gpu = "auto";
  std::string mem = "gpu";
  std::string json;
  std::vector<uint32_t> sizes{64, 1500};
  double seconds = 2.0;
  uint32_t senders = 0;
  uint32_t ring = 4096;
  std::string dpdk_af_xdp = std::string("dpdk:\"net_af_xdp0,iface=") + kDutIf + "\"";
  std::string dpdk_af_packet = std::string("dpdk:\"net_af_packet0,iface=") + kDutIf + "\"";
  bool quick = false;
};

// Runs with the parsed options (run() may still adjust them); the exit status.
int run(Options o);

}  // namespace nic_bench
