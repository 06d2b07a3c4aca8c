// SPDX-License-Identifier: Apache-2.0
// soak's options, parsed in soak_main.cpp (host C++ only) and used in soak.cu.
#pragma once

#include <cstdint>
#include <string>

namespace soak {

struct Options {
  double duration_s = 300;
  double warmup_s = -1;  // -1: a fifth of the duration, at most 30 s
  double report_s = 10;
  double rss_limit_mib = 4;
  std::string gpu = "auto";
  std::string source = "mem";
  std::string size = "64-1500";
  std::string mem = "gpu";
  uint32_t queues = 4;
  uint32_t block = 256;
  uint32_t burst = 256;
  uint32_t strides = 8192;
  double pps = 0;  // 0: as fast as the kernel releases buffers
  bool echo = true;
};

// Runs with the parsed options (run() may still adjust them); the exit status.
int run(Options o);

}  // namespace soak
