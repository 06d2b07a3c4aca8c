// SPDX-License-Identifier: Apache-2.0
// nic_bench's state, the veth pair in its two namespaces, and one function
// per kind of row, each in its own file of this folder. A row function
// starts its receiver on gnx0, runs the sender's window around it and
// returns the row, its status saying why where it did not measure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../nic_bench_options.hpp"
#include "gnio/gpu.hpp"
#include "netns_util.hpp"
#include "row.hpp"
#include "tools.hpp"
#include "traffic.hpp"

namespace nic_bench {

// The veth end the sender uses, in the peer namespace.
inline constexpr const char* kPeerIf = "gnx1";

// window.cpp: SIGINT and SIGTERM end the window under way early; the run
// stops after that row.
void catch_interrupts();
bool interrupted();

struct Bench {
  Options o;
  gnio::Gpu gpu;
  gnio::nettest::NetNs dut, peer;
  gnio::nicbench::Mac dut_mac{}, peer_mac{};
  uint32_t senders = 1;

  // pair.cpp: the namespaces "dut" (gnx0) and "peer" (gnx1), the veth pair
  // between them, both ends up, their MACs read.
  gnio::Status make_pair();

  // window.cpp: runs the sender for the window around a started receiver
  // whose live count is `count`, then waits for the frames in flight; fills
  // the row's sent, refused and kernel drop counts.
  gnio::Status send_window(Row& r, const std::function<uint64_t()>& count);

  // receivers.cu: this bench's own receivers, its AF_PACKET socket and a
  // gnio queue (`spec`) into the persistent kernel.
  Row baseline(uint32_t size);
  Row gnio_row(const std::string& receiver, const std::string& spec, uint32_t size);

  // tool_row.cpp: what every tool's row shares, and the mount namespace the
  // tools run in.
  Row tool_row(const std::string& receiver, const std::string& tool, const std::string& spec, uint32_t size,
               const char* package, gnio::nicbench::ChildOptions& child);
  gnio::Result<int> tools_mount_ns();

  // xdp_tools.cpp: xdp-bench drop and xdp-filter, XDP `mode` native or skb.
  Row xdp_bench(uint32_t size, const char* mode);
  Row xdp_filter(uint32_t size, const char* mode);

  // testpmd.cpp: dpdk-testpmd rxonly on the virtual device `pmd` over gnx0.
  Row testpmd(uint32_t size, const std::string& pmd);

 private:
  gnio::nicbench::BpfFsNamespace tools_ns;
  bool tools_ns_tried = false;
  gnio::Status tools_ns_status;
};

// report.cpp: the table, after a line per size naming its ratio base; and
// every row's counts as JSON into `path`.
void print_table(const std::vector<Row>& rows);
void write_json(const std::string& path, const std::string& machine_line, const Bench& b,
                const std::vector<Row>& rows);

}  // namespace nic_bench
