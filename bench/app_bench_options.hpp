// SPDX-License-Identifier: Apache-2.0
// app_bench's options, parsed in app_bench_main.cpp (host C++ only) and used in
// app/.
#pragma once

#include <cstdint>
#include <string>

namespace app_bench {

struct Options {
  std::string gpu = "auto";
  bool quick = false;
  uint32_t queues = 4;
  std::string mem = "gpu";
  uint32_t block = 256;
  uint32_t burst = 256;  // gnio run's default --burst
  uint32_t blocks = 0;   // kernel blocks; 0: one per queue (gnio run's default)
  uint32_t strides = 8192;
  uint32_t ring = 8192;  // prebuilt buffers per queue
  uint64_t packets = 0;  // per traffic; 0: by size
  uint32_t repeat = 0;   // runs of each kernel row; 0: 3 on a GPU, 1 on the emulated device
  double row_limit_s = 120;
  std::string captures = GNIO_CAPTURES_DIR;
  // The compute-heavy rows: passes of compute_stage() over every byte of
  // each 64 B packet (0: 20 on a GPU, 4 on the emulated device), one
  // queue, the kernel's blocks swept up to scaling_blocks (0: skip).
  uint32_t compute_rounds = 0;
  uint32_t scaling_blocks = 64;
};

// Runs with the parsed options (run() may still adjust them); the exit status.
int run(Options o);

}  // namespace app_bench
