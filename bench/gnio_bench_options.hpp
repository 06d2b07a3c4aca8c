// SPDX-License-Identifier: Apache-2.0
// gnio_bench's options, parsed in gnio_bench_main.cpp (host C++ only) and used
// in gnio_bench.cu.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gnio_bench {

struct Options {
  std::string gpu = "auto";  // PCIe bus id, auto or cpu:N, or a list of them (all: every CUDA device)
  bool quick = false;
  double window_s = 0.4;   // measured time per throughput row
  uint32_t samples = 3000; // echo round trips per variant
  uint32_t block = 256;
  // The receive kernel: one block per queue asking for up to 2048 packets
  // at a time. A burst costs a block about 8 us however large it is (claim,
  // in-order release, their fences), and every block added to the GPU
  // slowed all of them once about eight ran (docs/DESIGN-NOTES.md, "Known
  // limits"): on the H200, 64 B over 4 queues (the better ring memory)
  // went from 78 Mpps with bursts of 256 to 151 with 2048; more blocks per
  // queue, or bursts of 4096 on an 8192-entry ring, were slower.
  uint32_t burst = 2048;
  uint32_t blocks_per_queue = 1;
  // A partial run: sections (ceiling, anatomy, gnio, anti, tx, echo, gpus), frame
  // sizes and queue counts; empty means all. The targets need a full run.
  std::vector<std::string> only;
  std::vector<uint32_t> sizes{64, 256, 1500, 8000};
  std::vector<uint32_t> queue_counts{1, 2, 4, 8};
  bool partial() const {
    return !only.empty() || sizes != std::vector<uint32_t>{64, 256, 1500, 8000} ||
           queue_counts != std::vector<uint32_t>{1, 2, 4, 8};
  }
  bool runs(const std::string& section) const {
    return only.empty() || std::find(only.begin(), only.end(), section) != only.end();
  }
  uint32_t frames = 1024;  // distinct prebuilt frames
  uint32_t ring = 8192;    // prebuilt buffers per queue, ceiling ring entries
  uint32_t strides = 16384;
};

// Runs with the parsed options (run() may still adjust them); the exit status.
int run(Options o);

}  // namespace gnio_bench
