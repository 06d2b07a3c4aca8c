// SPDX-License-Identifier: Apache-2.0
// simple_receive's command line. CLI11 is parsed in this host-only file so
// that nvcc never compiles it.
#include <CLI/CLI.hpp>

#include "options.hpp"

int main(int argc, char** argv) {
  simple_receive::Options o;
  CLI::App app{"simple_receive: count and checksum every packet of an RX source in a persistent GPU kernel"};
  app.add_option("--nic", o.nic, "RX spec (pcap:FILE, synthetic:..., loop:NAME)")->capture_default_str();
  app.add_option("--gpu", o.gpu,
                 "PCIe bus id, auto (falls back to cpu), cpu:N (emulated device N), or a comma-separated list of "
                 "these or all: one kernel per GPU, each serving a contiguous run of the queues")
      ->capture_default_str();
  app.add_option("--mem", o.mem, "RX ring memory: gpu (device, staged copies) or host (pinned, mapped)")
      ->capture_default_str();
  app.add_option("--scope", o.scope, "receive scope: thread, warp or block")->capture_default_str();
  app.add_option("--queues", o.queues,
                 "RX queues to receive from (0: every queue the port has, e.g. synthetic:...,queues=4); "
                 "block b of the kernel serves queue b % queues")
      ->capture_default_str();
  app.add_option("--grid", o.grid, "blocks of the persistent kernel (at least --queues)")->capture_default_str();
  app.add_option("--block", o.block, "threads per block (a multiple of 32 for warp scope)")->capture_default_str();
  app.add_option("--burst", o.burst, "packets per receive")->capture_default_str();
  app.add_option("--strides", o.strides, "RX ring strides (power of two)")->capture_default_str();
  app.add_option("--stride-size", o.stride, "bytes per stride (power of two, 64..2048)")->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "seconds to wait for the source to drain")->capture_default_str();
  app.add_option("--filter", o.filter,
                 "tcpdump filter expression (pcap-filter(7)), e.g. 'udp port 53': the kernel counts and checksums the "
                 "packets it matches; the others are counted as filtered and released without further work");
  app.add_flag("--verify", o.verify, "recompute on the host and fail on any difference");
  app.add_flag("--require-gpu", o.require_gpu, "with --gpu auto: exit 77 (skip) instead of falling back to cpu");
  CLI11_PARSE(app, argc, argv);
  return simple_receive::run(o);
}
