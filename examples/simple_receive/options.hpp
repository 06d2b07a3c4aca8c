// SPDX-License-Identifier: Apache-2.0
// simple_receive's options, parsed in main.cpp (host C++ only) and used by
// the kernel's host side in simple_receive.cu.
#pragma once

#include <cstdint>
#include <string>

namespace simple_receive {

struct Options {
  std::string nic = "pcap:" GNIO_DATA_DIR "/sample.pcap";
  std::string gpu = "auto";
  std::string mem = "gpu";
  std::string scope = "block";
  uint32_t queues = 0, grid = 1, block = 128, burst = 64, strides = 4096, stride = 2048;
  uint32_t timeout_s = 120;
  std::string filter;  // a tcpdump expression; empty: every packet counts
  bool verify = false, require_gpu = false;
};

// Receives every packet of o.nic in a persistent kernel; the exit status.
int run(const Options& o);

}  // namespace simple_receive
