// SPDX-License-Identifier: Apache-2.0
// Options several subcommands share: what will be driven (--nic, --gpu,
// --ring-bytes) and the roots the doctor reads (for debugging and audits).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gnio/cuda_info.hpp"
#include "gnio/doctor.hpp"

namespace gnio::cli {

struct TargetOptions {
  std::string nic;
  std::string gpu = "auto";
  uint64_t ring_bytes = 0;
};

struct RootOptions {
  std::string cuda_root;
  std::string sys_root;
  std::string proc_root;
  std::string pkg_config_path;
  std::string compat_dir;
};

void add_target_options(CLI::App* cmd, TargetOptions& t, bool with_ring_bytes);
void add_root_options(CLI::App* cmd, RootOptions& r);

doctor::Request make_request(const TargetOptions& t);
// The live machine, with the roots the user overrode.
doctor::Environment make_environment(const RootOptions& r);

// The entries of --gpu (a list, "all" expanded to the devices' bus ids); a
// list that does not parse ends the subcommand with status 2 and the reason.
std::vector<std::string> gpu_entries(const std::string& command, const TargetOptions& t,
                                     const std::vector<CudaDeviceInfo>& devices);
// One object per entry: what it names ("cuda", "emulated", "unavailable"),
// the bus id and the NUMA node sysfs under sys_root gives (null when none),
// and its PCIe placement against the NIC of nic_spec ("placement": the
// relation, PIX..SYS, with both NUMA nodes; a null relation with the reason
// where there is none).
nlohmann::json gpus_json(const std::vector<std::string>& entries, const std::vector<CudaDeviceInfo>& devices,
                         const std::string& sys_root, const std::string& nic_spec);
// One entry of gpus_json() as a line of text.
std::string gpu_line(const nlohmann::json& gpu);

// Ends the subcommand with this exit status (CLI11 turns it into main's).
[[noreturn]] void exit_with(int code);

}  // namespace gnio::cli
