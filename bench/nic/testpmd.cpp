// SPDX-License-Identifier: Apache-2.0
// The DPDK baseline: dpdk-testpmd in rxonly mode on net_af_packet or
// net_af_xdp over gnx0, a child driven through its prompt.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "bench.hpp"

using namespace gnio;

namespace nic_bench {
namespace {

// Whether the machine has huge pages reserved; without, testpmd runs on
// ordinary memory.
bool hugepages_reserved() {
  std::ifstream f("/proc/meminfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("HugePages_Total:", 0) == 0) return std::strtoull(line.c_str() + 16, nullptr, 10) > 0;
  return false;
}

}  // namespace

// dpdk-testpmd in rxonly mode on a virtual device over gnx0, driven
// through its prompt on a pseudo-terminal: 'show port stats 0' gives the
// frames it received and missed whenever the bench asks.
Row Bench::testpmd(uint32_t size, const std::string& pmd) {
  nicbench::ChildOptions child;
  child.terminal = true;
  const std::string vdev = pmd + "0,iface=" + kDutIf;
  Row r = tool_row("baseline: dpdk-testpmd rxonly, " + pmd, "dpdk-testpmd", "--vdev " + vdev, size, "dpdk-dev",
                   child);
  if (r.status != "ok") return r;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  // The main lcore and one forwarding lcore, the last core.
  std::vector<std::string> argv{"dpdk-testpmd", "-l", "0," + std::to_string(std::max(cores - 1, 1L)), "--no-pci",
                                "--no-telemetry", "--log-level=warning", "--vdev", vdev};
  if (hugepages_reserved()) {
    argv.insert(argv.end(), {"--in-memory"});
  } else {
    argv.insert(argv.end(), {"--no-huge", "--no-shconf", "-m", "512"});
  }
  argv.insert(argv.end(), {"--", "-i", "--forward-mode=rxonly", "--total-num-mbufs=16384"});
  auto c = nicbench::Child::start(argv, child);
  if (!c) {
    r.status = "failed: " + c.status().to_string();
    return r;
  }
  nicbench::Child& pmd_app = **c;
  const std::string prompt = "testpmd> ";
  std::string failure;
  // Sends a command and returns what it printed up to the next prompt.
  auto command = [&](const std::string& line) -> std::string {
    const size_t from = pmd_app.output().size();
    if (Status w = pmd_app.write(line + "\n"); !w) {
      if (failure.empty()) failure = w.to_string();
      return "";
    }
    const bool answered = pmd_app.wait_for(
        [&](const std::string& out) {
          const size_t echo = out.find('\n', from);
          return echo != std::string::npos && out.find(prompt, echo) != std::string::npos;
        },
        10);
    const std::string out = pmd_app.output();
    if (!answered && failure.empty())
      failure = "dpdk-testpmd did not answer '" + line + "': " + nicbench::last_lines(out.substr(from), 3);
    return out.substr(std::min(from, out.size()));
  };
  struct PortStats {
    uint64_t received = 0, missed = 0, no_mbuf = 0;
  };
  auto port_stats = [&]() {
    const std::string out = command("show port stats 0");
    PortStats p;
    if (!nicbench::number_after(out, "RX-packets", p.received) || !nicbench::number_after(out, "RX-missed", p.missed) ||
        !nicbench::number_after(out, "RX-nombuf", p.no_mbuf)) {
      if (failure.empty()) failure = "'show port stats 0' printed no RX counts: " + nicbench::last_lines(out, 3);
    }
    return p;
  };
  if (!pmd_app.wait_for([&](const std::string& out) { return out.find(prompt) != std::string::npos; }, 30)) {
    const int rc = pmd_app.interrupt(5);
    r.status = "failed: dpdk-testpmd did not start (exit status " + std::to_string(rc) +
               "): " + nicbench::last_lines(pmd_app.output(), 3);
    return r;
  }
  command("start");
  Status s = send_window(r, [&] { return port_stats().received; });
  const PortStats end = port_stats();
  // testpmd 22.11's net_af_packet does not count what its sockets'
  // rings dropped; the bench reads them from the kernel (a testpmd that
  // reads them itself leaves the rest: each drop is counted once).
  // net_af_xdp's drops are in its RX-missed already.
  auto sockets = nicbench::socket_drops_of(pmd_app.pid());
  command("stop");
  (void)pmd_app.write("quit\n");
  pmd_app.wait(10);
  r.received = end.received;
  r.tool_dropped = end.missed + end.no_mbuf;
  if (sockets) r.kernel.packet_ring_full = sockets->packet_ring_full;
  if (!s) r.status = "failed: " + s.to_string();
  else if (!failure.empty()) r.status = "failed: " + failure;
  else if (!sockets) r.status = "failed: " + sockets.status().to_string();
  return r;
}

}  // namespace nic_bench
