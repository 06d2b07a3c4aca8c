// SPDX-License-Identifier: Apache-2.0
// The XDP baselines of xdp-tools, each an XDP program that drops every
// frame on gnx0, native or skb mode: xdp-bench drop and xdp-filter with a
// deny-all policy, run as children (tools.hpp).
#include "bench.hpp"

using namespace gnio;

namespace nic_bench {

// xdp-bench drop: an XDP program that counts and drops every frame. It
// prints its total only when it ends, so its window count is that total,
// taken after the drain (what was still in flight at the window's end,
// at most the veth's queue, counts in its rate).
Row Bench::xdp_bench(uint32_t size, const char* mode) {
  nicbench::ChildOptions child;
  child.terminal = true;  // its output line by line
  Row r = tool_row(std::string("baseline: xdp-bench drop, XDP ") + mode, "xdp-bench",
                   std::string("xdp-bench drop -m ") + mode + " " + kDutIf, size, "xdp-tools", child);
  if (r.status != "ok") return r;
  auto c = nicbench::Child::start({"xdp-bench", "drop", "-m", mode, "-i", "1", kDutIf}, child);
  if (!c) {
    r.status = "failed: " + c.status().to_string();
    return r;
  }
  nicbench::Child& bench = **c;
  // It says which interface it drops on once the program is attached.
  if (!bench.wait_for([](const std::string& out) { return out.find("packets on") != std::string::npos; }, 10)) {
    const int rc = bench.interrupt(2);
    // libbpf says why: a type missing from the kernel's BTF (xdp-tools
    // 1.3.1 on kernel 6.18: a tracepoint its object also carries is gone),
    // else its first complaint.
    const std::string out = bench.output();
    std::string reason = nicbench::last_lines(out, 1);
    size_t why = out.find("kernel BTF");
    why = why == std::string::npos ? out.find("libbpf: ") : out.rfind("libbpf: ", why);
    if (why != std::string::npos)
      reason = nicbench::last_lines(out.substr(why, out.find('\n', why) - why), 1) + " / " + reason;
    r.status = "not available: xdp-bench could not attach its program here (exit status " + std::to_string(rc) +
               "): " + reason;
    return r;
  }
  Status s = send_window(r, [] { return uint64_t{0}; });
  const int rc = bench.interrupt(5);
  const std::string out = bench.output();
  uint64_t received = 0;
  if (!s) r.status = "failed: " + s.to_string();
  else if (!nicbench::number_after(out, "Packets received", received))
    r.status = "failed: xdp-bench ended (exit status " + std::to_string(rc) +
               ") without its 'Packets received' total: " + nicbench::last_lines(out, 3);
  r.received = received;
  r.window_received = received;
  return r;
}

// xdp-filter with a deny-all policy on Ethernet headers: an XDP program
// that drops every frame and counts it by action ('xdp-filter status'
// prints the counts at any time).
Row Bench::xdp_filter(uint32_t size, const char* mode) {
  nicbench::ChildOptions child;
  Row r = tool_row(std::string("baseline: xdp-filter deny all, XDP ") + mode, "xdp-filter",
                   std::string("xdp-filter load -m ") + mode + " -p deny -f ethernet " + kDutIf, size, "xdp-tools",
                   child);
  if (r.status != "ok") return r;
  auto load = nicbench::run_tool({"xdp-filter", "load", "-m", mode, "-p", "deny", "-f", "ethernet", kDutIf}, child, 20);
  if (!load) {
    r.status = "failed: " + load.status().to_string();
    return r;
  }
  if (load->status != 0) {
    r.status = "not available: xdp-filter could not load its program here (exit status " +
               std::to_string(load->status) + "): " + nicbench::last_lines(load->output, 3);
    return r;
  }
  std::string failure;
  // Every frame the program saw, whatever its action (deny-all: XDP_DROP).
  auto seen = [&]() -> uint64_t {
    auto st = nicbench::run_tool({"xdp-filter", "status"}, child, 10);
    uint64_t total = 0;
    for (const char* action : {"XDP_ABORTED", "XDP_DROP", "XDP_PASS"}) {
      uint64_t n = 0;
      if (st && nicbench::number_after(st->output, action, n)) total += n;
      else if (failure.empty())
        failure = "'xdp-filter status' printed no " + std::string(action) + " count: " +
                  (st ? nicbench::last_lines(st->output, 3) : st.status().to_string());
    }
    return total;
  };
  Status s = send_window(r, seen);
  r.received = seen();
  auto unload = nicbench::run_tool({"xdp-filter", "unload", kDutIf}, child, 20);
  if (!s) r.status = "failed: " + s.to_string();
  else if (!failure.empty()) r.status = "failed: " + failure;
  else if (!unload || unload->status != 0)
    r.status = "failed: 'xdp-filter unload " + std::string(kDutIf) + "' did not detach its program: " +
               (unload ? nicbench::last_lines(unload->output, 3) : unload.status().to_string());
  return r;
}

}  // namespace nic_bench
