// SPDX-License-Identifier: Apache-2.0
// The command line of soak. CLI11 is parsed in this host-only file so that
// nvcc never compiles it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <utility>

#include "soak_options.hpp"

int main(int argc, char** argv) {
  // Line by line even into a file: a run stopped by a time limit keeps the rows it finished.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  soak::Options o;
  CLI::App cli{"soak: a long run at high load with gnio's counters, memory, descriptors and heartbeat checked every second"};
  cli.add_option("--duration", o.duration_s, "seconds to run")->capture_default_str();
  cli.add_option("--warmup", o.warmup_s, "seconds before memory and descriptors are fixed (default: duration/5, <= 30)");
  cli.add_option("--report", o.report_s, "seconds between progress lines")->capture_default_str();
  cli.add_option("--rss-limit", o.rss_limit_mib, "MiB the resident memory may grow after the warm-up")->capture_default_str();
  cli.add_option("--gpu", o.gpu, "PCIe bus id, auto (falls back to cpu) or cpu")->capture_default_str();
  cli.add_option("--source", o.source, "mem (prebuilt frames) or synthetic (the generator)")
      ->capture_default_str()->check(CLI::IsMember({"mem", "synthetic"}));
  cli.add_option("--size", o.size, "frame size or MIN-MAX")->capture_default_str();
  cli.add_option("--mem", o.mem, "RX ring memory: gpu or host")->capture_default_str()->check(CLI::IsMember({"gpu", "host"}));
  cli.add_option("--queues", o.queues, "RX queues, one kernel block each")->capture_default_str();
  cli.add_option("--block", o.block, "threads per block (1 on the emulated device)")->capture_default_str();
  cli.add_option("--burst", o.burst, "packets per receive")->capture_default_str();
  cli.add_option("--strides", o.strides, "RX ring strides (2048 bytes each)")->capture_default_str();
  cli.add_option("--pps", o.pps,
                 "frames per second offered over all queues (those that find the ring full are lost as ring_full); 0: as "
                 "fast as buffers come back")
      ->capture_default_str();
  cli.add_option("--echo", o.echo, "send every burst back out through a TX queue (pcap-out:/dev/null)")
      ->capture_default_str();
  CLI11_PARSE(cli, argc, argv);
  return soak::run(std::move(o));
}
