// SPDX-License-Identifier: Apache-2.0
// The command line of nic_bench. CLI11 is parsed in this host-only file so that
// nvcc never compiles it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <utility>

#include "nic_bench_options.hpp"

int main(int argc, char** argv) {
  // Line by line even into a file: a run stopped by a time limit keeps the rows it finished.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  nic_bench::Options o;
  CLI::App app{"nic_bench: a veth pair in two namespaces, one sender, AF_XDP/DPDK receivers into a persistent kernel "
               "against baselines: an AF_PACKET socket and, where installed, xdp-bench, xdp-filter and dpdk-testpmd"};
  app.add_option("--gpu", o.gpu, "PCIe bus id, auto (falls back to cpu) or cpu")->capture_default_str();
  app.add_option("--mem", o.mem, "RX ring memory of the gnio rows: gpu or host")->check(CLI::IsMember({"gpu", "host"}))
      ->capture_default_str();
  app.add_option("--sizes", o.sizes, "frame sizes in bytes (no FCS)")->capture_default_str();
  app.add_option("--seconds", o.seconds, "sending window per row")->capture_default_str();
  app.add_option("--senders", o.senders, "sender threads (0: a quarter of the cores, 1 to 4)")->capture_default_str();
  app.add_option("--ring", o.ring, "RX ring strides of the gnio rows and afxdp ring= (power of two)")
      ->capture_default_str();
  app.add_option("--dpdk-af-xdp", o.dpdk_af_xdp, "queue spec of the DPDK net_af_xdp row")->capture_default_str();
  app.add_option("--dpdk-af-packet", o.dpdk_af_packet, "queue spec of the DPDK net_af_packet row")
      ->capture_default_str();
  app.add_option("--json", o.json, "also write every row's counts to this file");
  app.add_flag("--quick", o.quick, "a short window and small rings (CI-class machines, tests)");
  CLI11_PARSE(app, argc, argv);
  return nic_bench::run(std::move(o));
}
