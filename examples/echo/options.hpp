// SPDX-License-Identifier: Apache-2.0
// echo's options, parsed in main.cpp (host C++ only) and used by the
// kernel's host side in echo.cu.
#pragma once

#include <cstdint>
#include <string>

namespace echo {

struct Options {
  std::string mode = "loop";
  std::string source = "synthetic:count=100000,size=96-1500,proto=mix,ipv6=mix";
  std::string in = "pcap:" GNIO_DATA_DIR "/sample.pcap";
  std::string out = "pcap-out:echo.pcap";
  std::string gpu = "auto";
  std::string mem = "gpu";
  std::string scope = "block";
  uint32_t block = 128, burst = 64, strides = 8192, stride = 256, txq_depth = 1024, window = 2048;
  uint32_t timeout_s = 300;
  bool verify = false, require_gpu = false;
};

// Runs the echo loop or the pcap round trip; the exit status.
int run(const Options& o);

}  // namespace echo
