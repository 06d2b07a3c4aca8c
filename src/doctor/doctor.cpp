// SPDX-License-Identifier: Apache-2.0
// The check registry, and the table and JSON of a doctor run.
#include <array>
#include <nlohmann/json.hpp>

#include "gnio/text_escape.hpp"
#include "doctor/checks.hpp"
#include "gnio/doctor.hpp"

namespace gnio::doctor {

namespace {

using namespace detail;

constexpr std::array<CheckInfo, 20> kChecks = {{
    {"cuda.toolkit", "a CUDA toolkit is installed and its parts agree on one version (nvcc, version.json/.txt, cuda.h)",
     check_cuda_toolkit},
    {"cuda.driver", "an NVIDIA driver is loaded: kernel module and the CUDA driver library", check_cuda_driver},
    {"cuda.runtime", "the CUDA runtime built into gnio is not newer than the driver supports", check_cuda_runtime},
    {"cuda.driver_compat", "the driver is new enough for the CUDA toolkit (data/compat/cuda_driver.json)",
     check_cuda_driver_compat},
    {"doca.versions", "doca-gpunetio and doca-common come from one DOCA release (where DOCA is installed)",
     check_doca_versions},
    {"doca.cuda", "the CUDA toolkit is one the installed DOCA supports (data/compat/doca_cuda.json)", check_doca_cuda},
    {"cuda.devices", "cudaGetDeviceCount >= 1 and every device's properties are readable", check_cuda_devices},
    {"cuda.bus_id", "the requested GPU resolves to one CUDA device and its PCIe bus id", check_cuda_bus_id},
    {"cuda.set_device", "cudaSetDevice succeeds for the requested GPU", check_cuda_set_device},
    {"cuda.module_loading", "CUDA loads kernels eagerly, so that CUDA code run beside a persistent kernel cannot hang",
     check_cuda_module_loading},
    {"gpudirect.peermem", "nvidia_peermem is loaded (GPUDirect RDMA backends need it; gnio's CPU proxy does not)",
     check_gpudirect_peermem},
    {"gpudirect.dmabuf", "GPU memory can be shared with the NIC as dma-buf (Linux >= 5.12, NVIDIA open modules)",
     check_gpudirect_dmabuf},
    {"nic.open", "the --nic queue spec opens and reports its capabilities", check_nic_open},
    {"afxdp.interface", "the afxdp interface exists and fits the spec: queues, MTU against the frame, UMEM against memlock",
     check_afxdp_interface},
    {"afxdp.xdp_program", "no other XDP program is attached to the afxdp interface", check_afxdp_xdp_program},
    {"host.privileges", "the process holds the capabilities the chosen backend needs (CapEff)", check_host_privileges},
    {"host.memlock", "RLIMIT_MEMLOCK covers the ring bytes the backend pins (--ring-bytes)", check_host_memlock},
    {"host.hugepages", "hugepages are reserved and free (dpdk backend)", check_host_hugepages},
    {"host.iommu", "the IOMMU mode suits the backend (vfio needs one; GPUDirect prefers passthrough)",
     check_host_iommu},
    {"host.pcie_placement", "the NIC and the GPU share a PCIe switch, or at least a root complex and NUMA node",
     check_host_pcie_placement},
}};

CheckResult run_one(const CheckInfo& c, const Environment& env, const Request& req) {
  CheckResult r = c.run(env, req);
  r.id = c.id;
  r.requirement = c.requirement;
  return r;
}

}  // namespace

std::string_view state_name(State s) noexcept {
  switch (s) {
    case State::Pass: return "PASS";
    case State::Warn: return "WARN";
    case State::Fail: return "FAIL";
    case State::Skip: return "SKIP";
  }
  return "SKIP";
}

std::span<const CheckInfo> checks() noexcept { return kChecks; }

Result<CheckResult> run_check(std::string_view id, const Environment& env, const Request& req) {
  for (const auto& c : kChecks)
    if (c.id == id) return run_one(c, env, req);
  std::string names;
  for (const auto& c : kChecks) names += (names.empty() ? "" : ", ") + std::string(c.id);
  return Status(Errc::NotFound, Layer::Doctor, "no doctor check named '" + std::string(id) + "'; checks: " + names);
}

std::vector<CheckResult> run_all(const Environment& env, const Request& req) {
  std::vector<CheckResult> out;
  for (const auto& c : kChecks) out.push_back(run_one(c, env, req));
  return out;
}

std::vector<CheckResult> run_some(std::span<const std::string_view> ids, const Environment& env, const Request& req) {
  std::vector<CheckResult> out;
  for (const auto& c : kChecks)
    for (std::string_view id : ids)
      if (c.id == id) out.push_back(run_one(c, env, req));
  return out;
}

int exit_code(const std::vector<CheckResult>& results) noexcept {
  for (const auto& r : results)
    if (r.state == State::Fail) return 1;
  return 0;
}

std::string format_table(const std::vector<CheckResult>& results) {
  std::string s;
  int counts[4] = {0, 0, 0, 0};
  for (const auto& r : results) {
    ++counts[static_cast<int>(r.state)];
    s += "[" + std::string(state_name(r.state)) + "] " + r.id + ": " + r.requirement + "\n";
    s += "       found: " + r.found + "\n";
    if (!r.fix.empty()) s += "       fix:   " + r.fix + "\n";
  }
  s += "\n" + std::to_string(counts[0]) + " PASS, " + std::to_string(counts[1]) + " WARN, " +
       std::to_string(counts[2]) + " FAIL, " + std::to_string(counts[3]) + " SKIP";
  s += counts[2] > 0 ? ": fix the FAIL rows first (exit status 1)\n" : ": no FAIL (exit status 0)\n";
  return s;
}

std::string to_json(const std::vector<CheckResult>& results, int indent) {
  nlohmann::json checks = nlohmann::json::array();
  int counts[4] = {0, 0, 0, 0};
  for (const auto& r : results) {
    ++counts[static_cast<int>(r.state)];
    // What was found and the fix quote the user's spec and paths and the
    // host's files: any bytes, written by escape_text()'s rule.
    checks.push_back({{"id", r.id},
                      {"requirement", r.requirement},
                      {"state", state_name(r.state)},
                      {"found", escape_text(r.found)},
                      {"fix", escape_text(r.fix)}});
  }
  nlohmann::json j{{"schema_version", 1},
                   {"checks", checks},
                   {"summary", {{"pass", counts[0]}, {"warn", counts[1]}, {"fail", counts[2]}, {"skip", counts[3]}}},
                   {"exit_code", exit_code(results)}};
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gnio::doctor
