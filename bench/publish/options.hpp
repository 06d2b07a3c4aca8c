// SPDX-License-Identifier: Apache-2.0
// publish_bench's options, parsed in publish_bench_main.cpp (host C++ only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace publish_bench {

struct Options {
  std::string gpu = "auto";
  // Publishers (host threads, each one RX queue's engine) per row.
  std::vector<uint32_t> publishers{1, 2, 4, 8, 16};
  // One publication: the bytes of its packets and of their descriptors, as
  // an RX engine publishes a ring in device memory (rx_engine.cpp: at
  // least 256 KiB and 1024 descriptors of 32 bytes under load).
  uint32_t data_bytes = 256 * 1024;
  uint32_t desc_bytes = 32 * 1024;
  // Publications a publisher has in flight before it waits for the
  // kernel's acknowledgement (a ring holds a few publications).
  uint32_t depth = 2;
  double window_s = 0.5;
  std::vector<std::string> only;  // variants by name; empty: all
};

int run(const Options& o);

}  // namespace publish_bench
