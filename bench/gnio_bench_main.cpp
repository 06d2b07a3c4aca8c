// SPDX-License-Identifier: Apache-2.0
// The command line of gnio_bench. CLI11 is parsed in this host-only file so that
// nvcc never compiles it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <utility>

#include "gnio_bench_options.hpp"

int main(int argc, char** argv) {
  // Line by line even into a file: a run stopped by a time limit keeps the rows it finished.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  gnio_bench::Options o;
  CLI::App app{"gnio_bench: floors, the bare-ring ceiling, gnio RX/TX throughput, anti-patterns, echo latency"};
  app.add_option("--gpu", o.gpu,
                 "PCIe bus id, auto (falls back to cpu) or cpu:N; a comma-separated list (auto,cpu:1) or all: the "
                 "gnio rows spread their queues over the devices, the gpus rows compare the first device alone and "
                 "beside the second; the other sections run on the first")
      ->capture_default_str();
  app.add_flag("--quick", o.quick, "small counts and short windows (CI-class machines, the emulated device)");
  app.add_option("--window", o.window_s, "seconds measured per throughput row")->capture_default_str();
  app.add_option("--samples", o.samples, "echo round trips measured per variant")->capture_default_str();
  app.add_option("--block", o.block, "threads per block of the persistent kernels (a multiple of 32)")
      ->capture_default_str();
  app.add_option("--burst", o.burst, "packets the receive kernel's blocks ask for at a time (RX rows)")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  const CLI::Validator power_of_two(
      [](std::string& v) {
        return std::has_single_bit(std::stoul(v)) ? std::string() : "must be a power of two, not " + v;
      },
      "POWER OF TWO");
  app.add_option("--ring", o.ring, "prebuilt buffers per queue of the mem: rows and entries of the ceiling's ring")
      ->check(CLI::Range(256u, 65536u))
      ->check(power_of_two)
      ->capture_default_str();
  app.add_option("--strides", o.strides, "strides of each gnio RX queue's ring")
      ->check(CLI::Range(256u, 131072u))
      ->check(power_of_two)
      ->capture_default_str();
  app.add_option("--blocks-per-queue", o.blocks_per_queue,
                 "blocks of the receive kernel per RX queue, ceiling rows included (1 on the emulated device)")
      ->check(CLI::Range(1u, 16u))
      ->capture_default_str();
  app.add_option("--only", o.only, "run only these sections (the floors always run; the targets need all)")
      ->check(CLI::IsMember({"ceiling", "anatomy", "gnio", "anti", "tx", "echo", "gpus"}))
      ->delimiter(',');
  app.add_option("--sizes", o.sizes, "frame sizes of the ceiling and gnio rows")->delimiter(',')->capture_default_str();
  app.add_option("--queue-counts", o.queue_counts, "queue counts of the gnio rows (1..32)")
      ->check(CLI::Range(1u, 32u))
      ->delimiter(',')
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return gnio_bench::run(std::move(o));
}
