// SPDX-License-Identifier: Apache-2.0
// A program outside the gnio tree, built against an installed gnio through
// find_package (CMake) and through pkg-config; it prints what it opened.
#include <gnio/eth.hpp>
#include <gnio/gpu.hpp>

#include <cstdio>

int main() {
  auto gpu = gnio::Gpu::open("cpu");
  auto dev = gnio::EthDevice::open("synthetic:count=5");
  if (!gpu || !dev) return 1;
  std::printf("opened %s and %s (max burst %u)\n", gpu->bus_id().c_str(), dev->caps().driver.c_str(),
              dev->caps().max_burst);
  return 0;
}
