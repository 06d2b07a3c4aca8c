// SPDX-License-Identifier: Apache-2.0
// The command line of app_bench. CLI11 is parsed in this host-only file so that
// nvcc never compiles it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <utility>

#include "app_bench_options.hpp"

int main(int argc, char** argv) {
  // Line by line even into a file: a run stopped by a time limit keeps the rows it finished.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  app_bench::Options o;
  CLI::App cli{"app_bench: the packet-processing application against receive-only and one host core, same traffic"};
  cli.add_option("--gpu", o.gpu, "PCIe bus id, auto (falls back to cpu) or cpu")->capture_default_str();
  cli.add_flag("--quick", o.quick, "few packets, small rings, 2 queues (CI-class machines, the emulated device)");
  auto* queues = cli.add_option("--queues", o.queues, "RX queues (one kernel block each unless --blocks)")->capture_default_str();
  cli.add_option("--mem", o.mem, "RX ring memory: gpu or host")->capture_default_str()->check(CLI::IsMember({"gpu", "host"}));
  cli.add_option("--block", o.block, "threads per block (1 on the emulated device)")->capture_default_str();
  cli.add_option("--burst", o.burst, "packets per receive, every kernel (the engine's bursts: at most the backend's)")
      ->capture_default_str();
  cli.add_option("--blocks", o.blocks, "kernel blocks, at least --queues (block b serves queue b % queues); 0: one per queue")
      ->capture_default_str();
  cli.add_option("--packets", o.packets, "packets per traffic (0: 10 M each, --quick fewer)")->capture_default_str();
  cli.add_option("--repeat", o.repeat, "runs of each kernel row, the median shown (0: 3 on a GPU, 1 on the emulated device)")
      ->capture_default_str();
  cli.add_option("--row-limit", o.row_limit_s, "seconds a row may take before it fails")->capture_default_str();
  cli.add_option("--captures", o.captures, "folder of .pcap captures replayed as the mix")->capture_default_str();
  cli.add_option("--compute-rounds", o.compute_rounds,
                 "passes of the compute-heavy stage over each packet's bytes (0: 20 on a GPU, 4 on the emulated device)")
      ->capture_default_str();
  cli.add_option("--scaling-blocks", o.scaling_blocks,
                 "the compute-heavy rows double the blocks on one queue from 1 up to this (0: no such rows; --quick: 4)")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  CLI11_PARSE(cli, argc, argv);
  if (o.quick && queues->count() == 0) o.queues = 2;  // --quick's default, unless --queues was given
  return app_bench::run(std::move(o));
}
