// SPDX-License-Identifier: Apache-2.0
// gnio doctor: one row per environment precondition, exit 1 on any FAIL.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gnio/doctor.hpp"
#include "options.hpp"

namespace gnio::cli {

namespace {

struct DoctorOptions {
  TargetOptions target;
  RootOptions roots;
  bool json = false;
};

void run_doctor(const DoctorOptions& o) {
  doctor::Environment env = make_environment(o.roots);
  const std::vector<std::string> gpus = gpu_entries("doctor", o.target, env.cuda.devices);
  std::vector<doctor::CheckResult> results = doctor::run_all(env, make_request(o.target));
  if (o.json) {
    nlohmann::json j = nlohmann::json::parse(doctor::to_json(results, -1));
    j["gpus"] = gpus_json(gpus, env.cuda.devices, env.sys_root, o.target.nic);
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else
    std::cout << doctor::format_table(results);
  if (int code = doctor::exit_code(results); code != 0) exit_with(code);
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto o = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Check every environment precondition: PASS/WARN/FAIL/SKIP with the fix; exit 1 on any FAIL");
  add_target_options(cmd, o->target, true);
  add_root_options(cmd, o->roots);
  cmd->add_flag("--json", o->json, "Print the checks as JSON (schema_version 1) instead of the table");
  cmd->footer(
      "Walks the environment-precondition matrix: CUDA toolkit, driver and runtime versions and their\n"
      "compatibility (data/compat/cuda_driver.json), DOCA versions and DOCA/CUDA compatibility where DOCA is\n"
      "installed (data/compat/doca_cuda.json), CUDA devices and the requested GPU, GPUDirect kernel support\n"
      "(nvidia_peermem, dma-buf), the NIC spec, privileges, memlock, hugepages, IOMMU and PCIe placement.\n"
      "One row per check: what must be true, what was found, the state and the fix. Exit status 0 when no\n"
      "check FAILs, 1 otherwise.\n\n"
      "Examples:\n"
      "  gnio doctor                                   the whole matrix for the first GPU\n"
      "  gnio doctor --gpu 0000:06:00.0 --nic afxdp:eth1 --ring-bytes 256m\n"
      "                                                what this GPU, NIC and ring size need\n"
      "  gnio doctor --gpu cpu --nic synthetic:count=10   the emulated device: CUDA rows SKIP\n"
      "  gnio doctor --gpu all --nic afxdp:eth1 --json   every GPU's placement against the NIC, a \"gpus\" array\n"
      "  gnio doctor --json | jq '.checks[] | select(.state==\"FAIL\")'\n"
      "  gnio doctor --sys-root /tmp/sys --proc-root /tmp/proc   audit a copied tree\n"
      "WARN rows do not fail the run: gnio's CPU-proxy engine works without GPUDirect RDMA.");
  cmd->callback([o] { run_doctor(*o); });
}

}  // namespace gnio::cli
