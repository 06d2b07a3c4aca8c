// SPDX-License-Identifier: Apache-2.0
// echo's command line. CLI11 is parsed in this host-only file so that nvcc
// never compiles it.
#include <CLI/CLI.hpp>

#include "options.hpp"

int main(int argc, char** argv) {
  echo::Options o;
  CLI::App app{"echo: swap addresses in place on the GPU and send every packet back"};
  app.add_option("--mode", o.mode, "loop (in-process wire, host verifies) or pcap (--in to --out)")
      ->check(CLI::IsMember({"loop", "pcap"}))
      ->capture_default_str();
  app.add_option("--source", o.source, "loop mode: RX spec the host sends from")->capture_default_str();
  app.add_option("--in", o.in, "pcap mode: RX spec")->capture_default_str();
  app.add_option("--out", o.out, "pcap mode: TX spec (pcap-out:FILE)")->capture_default_str();
  app.add_option("--gpu", o.gpu, "PCIe bus id, auto (falls back to cpu) or cpu")->capture_default_str();
  app.add_option("--mem", o.mem, "RX ring memory: gpu or host")->capture_default_str();
  app.add_option("--scope", o.scope, "thread, warp or block")->capture_default_str();
  app.add_option("--block", o.block, "threads per block")->capture_default_str();
  app.add_option("--burst", o.burst, "packets per receive")->capture_default_str();
  app.add_option("--strides", o.strides, "RX ring strides")->capture_default_str();
  app.add_option("--stride-size", o.stride, "bytes per stride")->capture_default_str();
  app.add_option("--txq-depth", o.txq_depth, "TX descriptors")->capture_default_str();
  app.add_option("--window", o.window, "loop mode: frames in flight")->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "seconds before giving up")->capture_default_str();
  app.add_flag("--verify", o.verify, "pcap mode: compare the output capture with the host transform");
  app.add_flag("--require-gpu", o.require_gpu, "with --gpu auto: exit 77 (skip) instead of falling back to cpu");
  CLI11_PARSE(app, argc, argv);
  return echo::run(o);
}
