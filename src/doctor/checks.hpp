// SPDX-License-Identifier: Apache-2.0
// The individual doctor checks and the facts several of them share.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gnio/doctor.hpp"

namespace gnio::doctor::detail {

// One row of the report, as the checks build it.
inline CheckResult make(std::string_view id, State s, std::string found, std::string fix = {}) {
  CheckResult r;
  r.id = id;
  r.state = s;
  r.found = std::move(found);
  r.fix = std::move(fix);
  return r;
}

struct ToolkitInfo {
  bool root_exists = false;
  std::string version;  // from the first source that says
  std::vector<std::pair<std::string, std::string>> sources;  // (where, version)
  std::string nvcc_error;
};
// run_nvcc: also ask bin/nvcc (a child process); the files suffice for the
// checks that only need the version.
ToolkitInfo toolkit_info(const Environment& env, bool run_nvcc);

struct DocaVersions {
  bool pkg_config_missing = false;
  std::string gpunetio;  // empty: not found
  std::string common;
};
DocaVersions doca_versions(const Environment& env);

// The CUDA device req.gpu names; nullptr with the reason otherwise.
const CudaDeviceInfo* resolve_gpu(const Environment& env, const Request& req, std::string* why);

// Whether every comma-separated entry of req.gpu names an emulated device.
bool only_emulated(const Request& req);
// A row for every GPU of req.gpu: `one` gets a Request naming one entry
// ("all" expanded to the CUDA devices). One entry gives its own row; several
// give one row naming each entry's result ("[0000:06:00.0] ...; [cpu:1] ..."),
// the worst state deciding, emulated entries skipped with `emulated_why`.
// A list that does not parse FAILs with the entry at fault.
CheckResult per_gpu(const Environment& env, const Request& req, std::string_view id, std::string_view emulated_why,
                    const std::function<CheckResult(const Request&)>& one);

CheckResult check_cuda_toolkit(const Environment&, const Request&);
CheckResult check_cuda_driver(const Environment&, const Request&);
CheckResult check_cuda_runtime(const Environment&, const Request&);
CheckResult check_cuda_driver_compat(const Environment&, const Request&);
CheckResult check_doca_versions(const Environment&, const Request&);
CheckResult check_doca_cuda(const Environment&, const Request&);
CheckResult check_cuda_devices(const Environment&, const Request&);
CheckResult check_cuda_bus_id(const Environment&, const Request&);
CheckResult check_cuda_set_device(const Environment&, const Request&);
CheckResult check_cuda_module_loading(const Environment&, const Request&);
CheckResult check_gpudirect_peermem(const Environment&, const Request&);
CheckResult check_gpudirect_dmabuf(const Environment&, const Request&);
CheckResult check_nic_open(const Environment&, const Request&);
// The afxdp driver's rows, with the driver in backends/afxdp/doctor.cpp.
CheckResult check_afxdp_interface(const Environment&, const Request&);
CheckResult check_afxdp_xdp_program(const Environment&, const Request&);
CheckResult check_host_privileges(const Environment&, const Request&);
CheckResult check_host_memlock(const Environment&, const Request&);
CheckResult check_host_hugepages(const Environment&, const Request&);
CheckResult check_host_iommu(const Environment&, const Request&);
CheckResult check_host_pcie_placement(const Environment&, const Request&);

}  // namespace gnio::doctor::detail
