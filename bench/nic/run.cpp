// SPDX-License-Identifier: Apache-2.0
// nic_bench: live traffic on a veth pair into a persistent kernel, one row
// per receiver, against a baseline receiver fed by the same sender; one
// kind of row per file of this folder (bench.hpp), the run's order here.
//
// The bench makes two network namespaces over rtnetlink ("dut" with gnx0,
// "peer" with gnx1): they are held only by descriptors of this process, so
// the kernel removes them, and the veth pair with them, however the process
// ends (SIGINT, SIGKILL included). The sender is an AF_PACKET socket per
// thread in the peer namespace sending straight to the driver; every row
// counts what the driver took (sent) and what it refused (a full veth
// queue; those frames are retried). Receivers run in the dut namespace:
//   baseline  an AF_PACKET socket that only counts (recvmmsg), and where
//             they are installed the tools: xdp-bench drop and xdp-filter
//             (an XDP program that drops every frame, xdp-tools; native
//             and skb mode) and
//             dpdk-testpmd in rxonly mode on net_af_packet and net_af_xdp,
//             run as child processes (bench/nic/tools.hpp)
//   gnio      afxdp:gnx0,mode=skb and mode=drv, and the DPDK PMDs
//             net_af_xdp and net_af_packet on the same veth, each into the
//             persistent kernel of gnio_bench (bench_kernels.hpp) on the
//             GPU (--gpu auto) or the emulated device (--gpu cpu)
// Each row checks its accounting: received == sent - drops, the drops
// counted by reason (gnio's RX queue, the kernel's AF_XDP socket
// statistics, the baseline socket's tp_drops, testpmd's RX-missed and its
// AF_PACKET sockets' tp_drops). The ratio column is against the fastest
// tool that ran, the AF_PACKET socket where none did.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "../common/machine.hpp"
#include "gpu_choice.hpp"

using namespace gnio;

namespace nic_bench {

int run(Options o) {
  if (o.quick) {
    o.seconds = std::min(o.seconds, 0.5);
    o.ring = std::min(o.ring, 2048u);
  }
  if (o.ring < 64 || (o.ring & (o.ring - 1)) != 0)
    return examples::fail({Errc::InvalidValue, Layer::App,
                           "--ring " + std::to_string(o.ring) + " is not a power of two of at least 64; use e.g. 4096"});
  catch_interrupts();

  auto gpu = examples::open_gpu(o.gpu, false);
  if (!gpu) return examples::fail(gpu.status());
  Bench b;
  b.o = o;
  b.gpu = std::move(*gpu);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  b.senders = o.senders ? o.senders : static_cast<uint32_t>(std::clamp(cores / 4, 1L, 4L));
  if (Status s = b.make_pair(); !s) {
    std::fprintf(stderr, "error: cannot make the veth pair: %s\n", s.to_string().c_str());
    return s.message().find("Operation not permitted") != std::string::npos ? 77 : 2;
  }
  // The main thread stays in the dut namespace: every receiver opens there.
  gnio::nettest::EnterNs in_dut(b.dut);
  if (!in_dut.status()) return examples::fail(in_dut.status());

  const std::string ring = std::to_string(o.ring);
  std::vector<Row> rows;
  auto add = [&](Row r) {
    std::fprintf(stderr, "%-40s %5u B: %s, sent %llu, received %llu\n", r.receiver.c_str(), r.size, r.status.c_str(),
                 (unsigned long long)r.send.sent, (unsigned long long)r.received);
    rows.push_back(std::move(r));
  };
  for (uint32_t size : o.sizes) {
    if (size < 60 || size > 1514) {
      std::fprintf(stderr,
                   "error: frame size %u is outside 60..1514 (the veth MTU is 1500); pass e.g. --sizes 64,1500\n",
                   size);
      return 2;
    }
    if (!interrupted()) add(b.baseline(size));
    // The tools before gnio's DPDK rows: a PMD of this process may keep its
    // socket on gnx0 open after its row, and an XDP program of gnio's would
    // be in the tools' way.
    for (const char* mode : {"native", "skb"})
      if (!interrupted()) add(b.xdp_bench(size, mode));
    for (const char* mode : {"native", "skb"})
      if (!interrupted()) add(b.xdp_filter(size, mode));
    for (const char* pmd : {"net_af_packet", "net_af_xdp"})
      if (!interrupted()) add(b.testpmd(size, pmd));
    for (const char* mode : {"skb", "drv"}) {
      if (interrupted()) break;
      const std::string spec = std::string("afxdp:") + kDutIf + ",mode=" + mode + ",ring=" + ring;
      add(b.gnio_row(std::string("gnio AF_XDP ") + mode + " mode", spec, size));
    }
  }
  // DPDK last: its EAL starts once per process and stays.
  for (uint32_t size : o.sizes) {
    for (const auto& [receiver, spec] : {std::pair{"gnio DPDK net_af_xdp", o.dpdk_af_xdp},
                                         std::pair{"gnio DPDK net_af_packet", o.dpdk_af_packet}})
      if (!interrupted()) add(b.gnio_row(receiver, spec, size));
  }

  const std::string where = bench::machine(b.gpu);
  std::printf("machine: %s\n", where.c_str());
  const bool pktgen = access("/proc/net/pktgen", F_OK) == 0;
  std::printf("veth pair %s -> %s in two namespaces made by this run; sender: %u AF_PACKET thread(s) with "
              "PACKET_QDISC_BYPASS in the peer namespace, counting what the driver took (kernel pktgen: %s; "
              "xdp-trafficgen not used: it has no frame size and needs XDP on the receiving end); "
              "window %.2f s per row; gnio rows: persistent kernel reading every byte, ring mem=%s\n",
              kPeerIf, kDutIf, b.senders, pktgen ? "loaded, not used" : "module not loaded", o.seconds, o.mem.c_str());
  std::string tools;
  for (const char* tool : {"xdp-bench", "xdp-filter", "dpdk-testpmd"}) {
    const std::string path = nicbench::find_tool(tool);
    tools += (tools.empty() ? "" : ", ") + std::string(tool) + " " + (path.empty() ? "not found" : path);
  }
  std::printf("baseline tools (children in the %s namespace with its own sysfs and a private bpffs): %s\n", kDutIf,
              tools.c_str());
  print_table(rows);
  if (!o.json.empty()) write_json(o.json, where, b, rows);
  if (interrupted()) {
    std::fprintf(stderr, "interrupted: the table has the rows measured so far; the namespaces go with this process\n");
    return 130;
  }
  for (const Row& r : rows)
    if (r.measured() && !r.accounted()) return 1;
  for (const Row& r : rows)
    if (r.status.rfind("failed", 0) == 0) return 1;
  return 0;
}

}  // namespace nic_bench
