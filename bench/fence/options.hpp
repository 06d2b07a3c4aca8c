// SPDX-License-Identifier: Apache-2.0
// fence_bench's options, parsed in fence_bench_main.cpp (host C++ only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fence_bench {

struct Options {
  std::string gpu = "auto";
  // Blocks running the operation at once, one row each; 0 stands for the
  // GPU's SM count.
  std::vector<uint32_t> blocks{1, 2, 4, 8, 16, 32, 64, 0};
  // Operations each block's first thread makes per row.
  uint32_t ops = 20000;
  std::vector<std::string> only;  // variants by name; empty: all
};

int run(const Options& o);

}  // namespace fence_bench
