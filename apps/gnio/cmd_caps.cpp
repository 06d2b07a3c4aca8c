// SPDX-License-Identifier: Apache-2.0
// gnio caps: both capability axes for a NIC spec and a GPU, saved as a
// snapshot or compared with one ("the diff against this baseline is the bug").
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.hpp"
#include "gnio/text_escape.hpp"
#include "gnio/capabilities.hpp"
#include "gnio/driver_report.hpp"
#include "gnio/gpu.hpp"
#include "options.hpp"

namespace gnio::cli {

namespace {

struct CapsOptions {
  TargetOptions target;
  bool json = false;
  std::string save;
  std::string diff;
  std::string sys_root = "/sys";
  CLI::Option* nic_opt = nullptr;
  CLI::Option* gpu_opt = nullptr;
};

// The parts come escaped (to_json() and the reports); the baseline's path is
// the user's text, escaped here. Replacing what still is not UTF-8 keeps the
// dump from throwing.
std::string json_text(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

void save_snapshot(const CapabilityReport& r, const std::string& path) {
  std::ofstream out(path);
  out << to_json(r) << "\n";
  if (!out) {
    std::cerr << "gnio caps: cannot write the snapshot to '" << path
              << "': check that the directory exists and is writable\n";
    exit_with(2);
  }
}

CapabilityReport load_snapshot(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "gnio caps: cannot read the baseline '" << path
              << "': give the file a previous 'gnio caps --save FILE' wrote\n";
    exit_with(2);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  Result<CapabilityReport> r = capability_report_from_json(ss.str());
  if (!r) {
    std::cerr << "gnio caps: baseline '" << path << "': " << r.status().to_string() << "\n";
    exit_with(2);
  }
  return std::move(*r);
}

void run_diff(const CapsOptions& o) {
  CapabilityReport before = load_snapshot(o.diff);
  // By default the live side asks the same question the baseline asked.
  std::string nic = o.nic_opt->count() > 0 ? o.target.nic : before.nic.spec;
  std::string gpu = o.gpu_opt->count() > 0 ? o.target.gpu : before.cuda.gpu;
  CapabilityReport live = discover(nic, gpu);
  std::vector<CapsChange> changes = diff(before, live);
  if (!o.save.empty()) save_snapshot(live, o.save);

  if (o.json) {
    nlohmann::json j{{"schema_version", 1}, {"baseline", escape_text(o.diff)}, {"changes", nlohmann::json::array()}};
    for (const auto& c : changes) j["changes"].push_back({{"path", c.path}, {"before", c.before}, {"after", c.after}});
    j["live"] = nlohmann::json::parse(to_json(live, -1));
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << "Baseline " << o.diff << " (gnio " << before.gnio_version << ") against the live state (nic '"
              << (nic.empty() ? "none" : nic) << "', gpu '" << gpu << "'):\n";
    for (const auto& c : changes) std::cout << "  " << c.path << ": " << c.before << " -> " << c.after << "\n";
    if (changes.empty()) std::cout << "  no difference\n";
    else
      std::cout << changes.size() << " difference(s): a NOT_SUPPORTED that the baseline did not have is explained "
                                     "by these lines\n";
  }
  if (!changes.empty()) exit_with(1);
}

// Emulated devices need no CUDA runtime: it is asked only when an entry
// may name a CUDA device.
std::vector<CudaDeviceInfo> devices_for(const std::string& list) {
  auto parsed = Gpu::parse_list(list);
  if (parsed && std::all_of(parsed->begin(), parsed->end(), [](const std::string& e) { return Gpu::names_emulated(e); }))
    return {};
  auto listed = list_cuda_devices();
  return listed ? std::move(*listed) : std::vector<CudaDeviceInfo>{};
}

void run_caps(const CapsOptions& o) {
  if (!o.diff.empty()) return run_diff(o);
  const std::vector<CudaDeviceInfo> devices = devices_for(o.target.gpu);
  const std::vector<std::string> gpus = gpu_entries("caps", o.target, devices);
  // The features are those of the first GPU; the others are listed with it.
  const std::string first = gpus.empty() ? o.target.gpu : gpus.front();
  CapabilityReport r = discover(o.target.nic, first);
  // A live driver also shows what it says of its NIC (afxdp: the kernel
  // of the interface, dpdk: DPDK of the port).
  auto nic = describe_nic(o.target.nic);
  const nlohmann::json gpus_j = gpus_json(gpus, devices, o.sys_root, o.target.nic);
  if (o.json) {
    nlohmann::json j = nlohmann::json::parse(to_json(r, -1));
    if (nic) j["nic"][nic->json_key] = nlohmann::json::parse(nic->json);
    j["gpus"] = gpus_j;
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << format_report(r);
    const bool placed = std::any_of(gpus_j.begin(), gpus_j.end(),
                                    [](const nlohmann::json& g) { return !g["placement"]["relation"].is_null(); });
    if (gpus.size() > 1 || placed) {
      std::cout << "\nGPUs (features above are those of " << first << ")\n";
      for (const auto& g : gpus_j) std::cout << "  " << gpu_line(g) << "\n";
    }
    if (nic) std::cout << "\n" << nic->title << " (" << o.target.nic << ")\n" << nic->text;
  }
  if (!o.save.empty()) save_snapshot(r, o.save);
  // An axis the user named explicitly and that could not be queried is an
  // error; "--gpu auto" on a host without a GPU is an answer.
  bool nic_failed = r.nic.state == NicAxis::State::Unavailable;
  bool gpu_failed = r.cuda.state == CudaAxis::State::Unavailable && o.gpu_opt->count() > 0 && first != "auto";
  if (nic_failed) std::cerr << "gnio caps: --nic " << o.target.nic << ": " << r.nic.error << "\n";
  if (gpu_failed) std::cerr << "gnio caps: --gpu " << first << ": " << r.cuda.error << "\n";
  if (nic_failed || gpu_failed) exit_with(1);
}

}  // namespace

void add_caps_command(CLI::App& app) {
  auto o = std::make_shared<CapsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "caps", "Which features a NIC spec and a GPU support, on both capability axes; snapshots and diffs");
  add_target_options(cmd, o->target, false);
  o->nic_opt = cmd->get_option("--nic");
  o->gpu_opt = cmd->get_option("--gpu");
  cmd->add_flag("--json", o->json, "Print JSON (with \"schema_version\") instead of the table");
  cmd->add_option("--save", o->save, "Also write the report as a JSON snapshot to FILE")->type_name("FILE");
  cmd->add_option("--diff", o->diff,
                  "Compare the live state with a saved snapshot (same --nic/--gpu unless given); exit status 1 "
                  "when anything changed")
      ->type_name("OLD.json");
  cmd->add_option("--sys-root", o->sys_root, "Read sysfs (NUMA nodes, PCIe placement) from DIR instead of /sys")
      ->type_name("DIR");
  cmd->footer(
      "Answers 'is feature F supported for queue type T on NIC spec N with GPU G' on both axes: the NIC axis\n"
      "(queue types, queues, burst and packet limits, offloads, wait-on-time) and the CUDA axis (compute\n"
      "capability >= 8.0, mapped host memory, unified addressing, GPUDirect RDMA, stream memory operations,\n"
      "copy engines, memory, PCIe link). Each refusal names the axis and the reason. Features: gpu_rx, gpu_tx,\n"
      "tx_wait_on_time, rx_ring_mem_gpu, rx_ring_mem_host, gpudirect_rdma, persistent_kernel. Save the answer\n"
      "at configure time; when a NOT_SUPPORTED appears later, the diff against that baseline is the bug.\n\n"
      "Examples:\n"
      "  gnio caps --nic synthetic:count=10 --gpu auto     both axes, first CUDA GPU\n"
      "  gnio caps --nic pcap:data/sample.pcap --gpu cpu   the emulated device\n"
      "  gnio caps --gpu all --json | jq '.gpus'          every CUDA GPU: bus id, NUMA node\n"
      "  gnio caps --nic afxdp:eth1 --gpu all           each GPU's PCIe placement against the NIC (PIX..SYS)\n"
      "  gnio caps --nic loop: --gpu 0000:06:00.0 --save baseline.json\n"
      "  gnio caps --diff baseline.json                    what changed since (exit 1 if anything)\n"
      "  gnio caps --nic afxdp:eth0 --gpu auto            also the interface: channels, XDP modes, MTU\n"
      "  gnio caps --json | jq '.features.gpu_rx'\n"
      "Exit status: 0, or 1 when a diff is found or a named --nic/--gpu cannot be queried, 2 when a file "
      "cannot be read or written.");
  cmd->callback([o] { run_caps(*o); });
}

}  // namespace gnio::cli
