// SPDX-License-Identifier: Apache-2.0
// What the rows of the baseline tools share: the tool found on PATH, and
// the mount namespace they run in (sysfs of the dut namespace, a bpffs of
// their own), made once for all of them.
#include "bench.hpp"

using namespace gnio;

namespace nic_bench {

// The namespace's descriptor, or why it could not be made.
Result<int> Bench::tools_mount_ns() {
  if (!tools_ns_tried) {
    tools_ns_tried = true;
    auto ns = nicbench::BpfFsNamespace::create();
    if (ns) tools_ns = std::move(*ns);
    else tools_ns_status = ns.status();
  }
  if (!tools_ns_status) return tools_ns_status;
  return tools_ns.fd();
}

// A tool's row with what every tool's row shares; status set when the tool cannot run here.
Row Bench::tool_row(const std::string& receiver, const std::string& tool, const std::string& spec, uint32_t size,
                    const char* package, nicbench::ChildOptions& child) {
  Row r;
  r.receiver = receiver;
  r.tool = tool;
  r.spec = spec;
  r.size = size;
  r.is_baseline = true;
  if (nicbench::find_tool(tool).empty()) {
    r.status = "not available: " + tool + " not found (Debian package " + package + ")";
    return r;
  }
  auto ns = tools_mount_ns();
  if (!ns) r.status = "failed: " + ns.status().to_string();
  else child.mount_ns = *ns;
  return r;
}

}  // namespace nic_bench
