// SPDX-License-Identifier: Apache-2.0
// packet_processing's options, parsed in main.cpp (host C++ only) and used
// by the kernel's host side in packet_processing.cu.
#pragma once

#include <cstdint>
#include <string>

namespace packet_processing {

struct Options {
  std::string nic = "pcap:" GNIO_DATA_DIR "/sample.pcap";
  std::string reply_out;
  std::string gpu = "auto";
  std::string mem = "gpu";
  std::string scope = "block";
  uint32_t block = 256, burst = 64, strides = 16384, stride = 2048;
  uint32_t timeout_s = 300;
  bool verify = false, require_gpu = false, quiet = false;
};

// Classifies every packet of o.nic and answers echo requests; the exit status.
int run(const Options& o);

}  // namespace packet_processing
