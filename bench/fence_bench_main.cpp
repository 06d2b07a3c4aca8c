// SPDX-License-Identifier: Apache-2.0
// The command line of fence_bench. CLI11 is parsed in this host-only file
// so that nvcc never compiles it.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "fence/options.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  fence_bench::Options o;
  CLI::App app{
      "fence_bench: what the ordered accesses of an RX queue's receive and release cost one block of a kernel, by "
      "the number of blocks making them at once (system-scope release stores and fences, acquire loads, at "
      "system and device scope, to pinned host and device memory)"};
  app.add_option("--gpu", o.gpu, "PCIe bus id or auto (a CUDA device is needed)")->capture_default_str();
  app.add_option("--blocks", o.blocks, "block counts, one row each per variant (0: the GPU's SM count)")
      ->delimiter(',')
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  app.add_option("--ops", o.ops, "operations per block per row")->check(CLI::Range(100u, 10000000u))->capture_default_str();
  app.add_option("--only", o.only, "variants to run, by name (see the table's first column)")->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  return fence_bench::run(o);
}
