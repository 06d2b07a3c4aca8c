// SPDX-License-Identifier: Apache-2.0
// Host rows of the environment-precondition matrix: GPUDirect kernel
// support, the NIC spec, privileges, memlock, hugepages, IOMMU and the PCIe
// placement of NIC and GPU.
#include <filesystem>
#include <sstream>

#include "doctor/checks.hpp"
#include "doctor/util.hpp"
#include "gnio/capabilities.hpp"
#include "gnio/gpu.hpp"

namespace gnio::doctor::detail {

namespace {

namespace fs = std::filesystem;

std::string spec_driver(std::string_view spec) { return std::string(spec.substr(0, spec.find(':'))); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

// Backends whose frames never touch a NIC: no privileges, no PCIe device.
bool is_software_backend(const std::string& driver) {
  return driver == "pcap" || driver == "pcap-out" || driver == "pcapng-out" || driver == "synthetic" ||
         driver == "loop" || driver == "mem" || driver == "null";
}

struct Cap {
  int bit;
  const char* name;
};
constexpr Cap kNetAdmin{12, "CAP_NET_ADMIN"};
constexpr Cap kNetRaw{13, "CAP_NET_RAW"};
constexpr Cap kIpcLock{14, "CAP_IPC_LOCK"};
constexpr Cap kSysAdmin{21, "CAP_SYS_ADMIN"};
constexpr Cap kBpf{39, "CAP_BPF"};

bool has_cap(uint64_t eff, Cap c) { return (eff >> c.bit) & 1u; }

std::string meminfo_value(const std::string& meminfo, const std::string& key) {
  std::istringstream in(meminfo);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return trim(std::string_view(line).substr(key.size() + 1));
  return {};
}

}  // namespace

namespace {

const char* const kNoGpuMemory = "emulated device requested (--gpu cpu): no GPU memory to share";

CheckResult peermem(const Environment& env) {
  const char* id = "gpudirect.peermem";
  auto modules = read_file(env.proc_root + "/modules").value_or("");
  auto loaded = [&](const std::string& name) {
    return path_exists(env.sys_root + "/module/" + name) || modules.rfind(name + " ", 0) == 0 ||
           modules.find("\n" + name + " ") != std::string::npos;
  };
  if (loaded("nvidia_peermem")) return make(id, State::Pass, "nvidia_peermem is loaded");
  if (loaded("nv_peer_mem"))
    return make(id, State::Pass, "the legacy nv_peer_mem module (MLNX_OFED) is loaded",
                "prefer nvidia_peermem from the NVIDIA driver when upgrading");
  return make(id, State::Warn,
              "nvidia_peermem is not loaded (no " + env.sys_root + "/module/nvidia_peermem, not in " + env.proc_root +
                  "/modules): GPUDirect RDMA backends (DOCA GPUNetIO, DPDK with GPU memory) cannot register GPU "
                  "memory with the NIC; gnio's CPU-proxy engine does not need it",
              "for GPUDirect RDMA: sudo modprobe nvidia_peermem, and persist it in /etc/modules-load.d/");
}

CheckResult dmabuf(const Environment& env) {
  const char* id = "gpudirect.dmabuf";
  std::string kernel = trim(read_file(env.proc_root + "/sys/kernel/osrelease").value_or(""));
  auto nv = read_file(env.proc_root + "/driver/nvidia/version");
  std::string module = nv ? parse_nvidia_driver_version(*nv) : std::string();
  bool open_module = nv && nv->find("Open Kernel Module") != std::string::npos;
  // RDMA memory registration of dma-buf arrived in Linux 5.12; the NVIDIA
  // driver exports GPU memory as dma-buf from R515 with its open modules.
  bool kernel_ok = !kernel.empty() && compare_versions(kernel, "5.12") >= 0;
  bool driver_ok = open_module && compare_versions(module, "515") >= 0;
  std::string found = "kernel " + (kernel.empty() ? std::string("unknown") : kernel) + ", NVIDIA driver " +
                      (module.empty() ? std::string("not loaded")
                                      : module + (open_module ? " (open kernel modules)" : " (proprietary kernel modules)"));
  if (kernel_ok && driver_ok) return make(id, State::Pass, found + ": GPU memory can be shared with the NIC as dma-buf");
  std::string missing;
  if (!kernel_ok) missing = "Linux >= 5.12";
  if (!driver_ok) missing += std::string(missing.empty() ? "" : " and ") + "NVIDIA open kernel modules >= 515";
  return make(id, State::Warn,
              found + ": dma-buf GPUDirect RDMA needs " + missing + "; gnio's CPU-proxy engine does not need it",
              "for GPUDirect RDMA without nvidia_peermem: install the NVIDIA open kernel modules (R515+) on Linux "
              ">= 5.12; otherwise load nvidia_peermem");
}

}  // namespace

// The host's answer holds for every GPU of the list; emulated entries have
// no memory to share.
CheckResult check_gpudirect_peermem(const Environment& env, const Request& req) {
  if (only_emulated(req)) return make("gpudirect.peermem", State::Skip, kNoGpuMemory);
  return per_gpu(env, req, "gpudirect.peermem", "emulated: no GPU memory to share",
                 [&](const Request&) { return peermem(env); });
}

CheckResult check_gpudirect_dmabuf(const Environment& env, const Request& req) {
  if (only_emulated(req)) return make("gpudirect.dmabuf", State::Skip, kNoGpuMemory);
  return per_gpu(env, req, "gpudirect.dmabuf", "emulated: no GPU memory to share",
                 [&](const Request&) { return dmabuf(env); });
}

CheckResult check_nic_open(const Environment& env, const Request& req) {
  const char* id = "nic.open";
  if (req.nic_spec.empty()) return make(id, State::Skip, "no --nic SPEC given");
  if (!env.open_nic) return make(id, State::Skip, "this build cannot open queue specs");
  Result<EthCaps> caps = env.open_nic(req.nic_spec);
  if (!caps)
    return make(id, State::Fail, "'" + req.nic_spec + "' does not open: " + caps.status().message(),
                "fix the spec (pcap:FILE, pcap-out:FILE, pcapng-out:FILE, synthetic:..., loop:, afxdp:IFACE, "
                "dpdk:...); "
                "`gnio diagnose " + std::string(errc_name(caps.status().code())) + "` explains the code");
  const EthCaps& c = *caps;
  return make(id, State::Pass,
              "'" + req.nic_spec + "' opens: driver " + c.driver + ", " + std::to_string(c.max_rx_queues) + " RX / " +
                  std::to_string(c.max_tx_queues) + " TX queues, burst " + std::to_string(c.max_burst) +
                  ", max packet " + std::to_string(c.max_packet_size) + " bytes");
}

CheckResult check_host_privileges(const Environment& env, const Request& req) {
  const char* id = "host.privileges";
  if (req.nic_spec.empty()) return make(id, State::Skip, "no --nic SPEC given: no backend to check privileges for");
  const std::string driver = spec_driver(req.nic_spec);
  if (is_software_backend(driver))
    return make(id, State::Pass, "backend '" + driver + "' needs no privileges");
  std::vector<Cap> need;
  std::string note;
  if (driver == "afxdp") {
    need = {kNetRaw, kNetAdmin, kBpf};
  } else if (driver == "dpdk") {
    need = {kNetRaw, kNetAdmin, kIpcLock};
    note = "; DPDK with physical addressing (IOVA as PA) also needs CAP_SYS_ADMIN";
  } else {
    return make(id, State::Skip, "backend '" + driver + "' is not known to the doctor");
  }
  auto eff = effective_capabilities(env.proc_root);
  if (!eff)
    return make(id, State::Warn, "cannot read CapEff from " + env.proc_root + "/self/status",
                "run the doctor where /proc is mounted");
  std::string missing, have;
  for (Cap c : need) {
    // Kernels before 5.8 have no CAP_BPF; CAP_SYS_ADMIN grants the same.
    bool ok = has_cap(*eff, c) || (c.bit == kBpf.bit && has_cap(*eff, kSysAdmin));
    std::string& list = ok ? have : missing;
    list += (list.empty() ? "" : ", ") + std::string(c.name);
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(*eff));
  std::string found = "backend '" + driver + "' needs " + (have.empty() ? missing : have + (missing.empty() ? "" : ", " + missing)) +
                      "; CapEff=" + hex;
  if (!missing.empty())
    return make(id, State::Fail, found + "; missing " + missing + note,
                "run as root, or grant the capabilities: sudo setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep "
                "$(command -v gnio) (or AmbientCapabilities= in a systemd unit)");
  return make(id, State::Pass, found + note);
}

CheckResult check_host_memlock(const Environment& env, const Request& req) {
  const char* id = "host.memlock";
  const std::string path = env.proc_root + "/self/limits";
  auto limits = read_file(path);
  std::string soft, hard;
  if (limits) {
    std::istringstream in(*limits);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Max locked memory", 0) != 0) continue;
      std::istringstream cols(line.substr(17));
      cols >> soft >> hard;
    }
  }
  if (soft.empty())
    return make(id, State::Warn, "no 'Max locked memory' line in " + path, "run the doctor where /proc is mounted");
  auto eff = effective_capabilities(env.proc_root);
  auto as_text = [](const std::string& v) {
    return v == "unlimited" ? v : bytes_text(std::strtoull(v.c_str(), nullptr, 10));
  };
  std::string found = "RLIMIT_MEMLOCK soft " + as_text(soft) + ", hard " + as_text(hard);
  if (req.ring_bytes > 0) found += "; rings need " + bytes_text(req.ring_bytes);
  if (soft == "unlimited") return make(id, State::Pass, found);
  // Locking memory with CAP_IPC_LOCK ignores the limit.
  if (eff && has_cap(*eff, kIpcLock)) return make(id, State::Pass, found + "; CAP_IPC_LOCK lifts the limit");
  if (req.ring_bytes == 0)
    return make(id, State::Skip, found + "; pass --ring-bytes N to check it against the rings you will pin");
  uint64_t soft_b = std::strtoull(soft.c_str(), nullptr, 10);
  if (req.ring_bytes <= soft_b) return make(id, State::Pass, found);
  bool hard_ok = hard == "unlimited" || req.ring_bytes <= std::strtoull(hard.c_str(), nullptr, 10);
  return make(id, State::Fail, found + ": the soft limit is too small",
              hard_ok ? "raise the soft limit before starting: ulimit -l " + std::to_string((req.ring_bytes + 1023) / 1024) +
                            " (KiB), or ulimit -l unlimited"
                      : "raise the hard limit: 'memlock' in /etc/security/limits.conf, LimitMEMLOCK=infinity in a "
                        "systemd unit, or --ulimit memlock=-1 for a container; or grant CAP_IPC_LOCK");
}

CheckResult check_host_hugepages(const Environment& env, const Request& req) {
  const char* id = "host.hugepages";
  auto meminfo = read_file(env.proc_root + "/meminfo");
  if (!meminfo) return make(id, State::Warn, "cannot read " + env.proc_root + "/meminfo", "run where /proc is mounted");
  std::string total = meminfo_value(*meminfo, "HugePages_Total");
  std::string free = meminfo_value(*meminfo, "HugePages_Free");
  std::string size = meminfo_value(*meminfo, "Hugepagesize");
  std::string found = "HugePages_Total " + (total.empty() ? "?" : total) + ", free " + (free.empty() ? "?" : free) +
                      ", size " + (size.empty() ? "?" : size);
  const std::string driver = spec_driver(req.nic_spec);
  if (driver != "dpdk")
    return make(id, State::Skip, found + "; only the dpdk backend needs hugepages" +
                                     (req.nic_spec.empty() ? std::string() : " ('" + driver + "' does not)"));
  long n_total = std::strtol(total.c_str(), nullptr, 10), n_free = std::strtol(free.c_str(), nullptr, 10);
  const std::string fix = "reserve hugepages: echo 1024 | sudo tee /sys/kernel/mm/hugepages/hugepages-2048kB/"
                          "nr_hugepages (or dpdk-hugepages.py --setup 2G), and mount hugetlbfs";
  if (n_total <= 0) return make(id, State::Fail, found + ": DPDK cannot allocate its memory", fix);
  if (n_free <= 0) return make(id, State::Fail, found + ": every hugepage is in use", "stop the other DPDK process, or " + fix);
  return make(id, State::Pass, found);
}

CheckResult check_host_iommu(const Environment& env, const Request& req) {
  const char* id = "host.iommu";
  int units = 0;
  std::error_code ec;
  for (fs::directory_iterator it(env.sys_root + "/class/iommu", ec), end; !ec && it != end; it.increment(ec)) ++units;
  std::string cmdline = trim(read_file(env.proc_root + "/cmdline").value_or(""));
  bool passthrough = false, off = false;
  for (const std::string& tok : split(cmdline, ' ')) {
    if (tok == "iommu=pt" || tok == "iommu.passthrough=1" || tok == "iommu.passthrough=on") passthrough = true;
    if (tok == "intel_iommu=off" || tok == "amd_iommu=off" || tok == "iommu=off") off = true;
  }
  const bool dpdk = spec_driver(req.nic_spec) == "dpdk";
  if (units == 0 || off) {
    std::string found = "IOMMU off (" + std::to_string(units) + " units in " + env.sys_root + "/class/iommu" +
                        (off ? ", disabled on the kernel command line" : "") + ")";
    if (dpdk)
      return make(id, State::Warn, found + ": vfio-pci (DPDK) needs an IOMMU",
                  "enable VT-d/AMD-Vi in firmware and boot with intel_iommu=on iommu=pt, or use vfio's no-IOMMU mode");
    return make(id, State::Pass, found);
  }
  std::string found = "IOMMU on, " + std::to_string(units) + " unit(s), " +
                      (passthrough ? "passthrough (iommu=pt)" : "translating DMA");
  if (!passthrough)
    return make(id, State::Warn, found + ": GPUDirect RDMA peer-to-peer traffic can fail or slow down under "
                                         "translation; gnio's CPU-proxy engine is unaffected",
                "for GPUDirect RDMA boot with iommu=pt (passthrough), or disable the IOMMU for the GPU/NIC");
  return make(id, State::Pass, found);
}

// Where one GPU sits relative to the NIC, in nvidia-smi topo's words.
CheckResult place_gpu(const Environment& env, const Request& one) {
  const char* id = "host.pcie_placement";
  std::string why;
  const CudaDeviceInfo* gpu = resolve_gpu(env, one, &why);
  if (gpu == nullptr) return make(id, State::Skip, "no GPU: " + why);
  auto placed = place_gpu_against_nic(env.sys_root, one.nic_spec, gpu->bus_id);
  if (!placed) return make(id, State::Skip, placed.status().message());
  const PciePlacement& p = *placed;
  auto numa = [](int n) { return n < 0 ? std::string("?") : std::to_string(n); };
  const std::string found = "NIC " + p.nic_bus_id + " (NUMA " + numa(p.nic_numa_node) + "), GPU " + p.gpu_bus_id +
                            " (NUMA " + numa(p.gpu_numa_node) + "): " + p.describe();
  const std::string fix = "place the NIC and the GPU under one PCIe switch (nvidia-smi topo -m shows PIX/PXB), or at "
                          "least on one root complex and NUMA node; pin the engine threads to that node";
  switch (p.relation) {
    case PcieRelation::Sys:
    case PcieRelation::Node: return make(id, State::Warn, found, fix);
    case PcieRelation::Phb: return make(id, State::Pass, found + ": acceptable");
    case PcieRelation::Pix:
    case PcieRelation::Pxb: break;
  }
  return make(id, State::Pass, found);
}

CheckResult check_host_pcie_placement(const Environment& env, const Request& req) {
  const char* id = "host.pcie_placement";
  if (only_emulated(req))
    return make(id, State::Skip, "emulated device(s) requested (--gpu " + req.gpu + "): no GPU on PCIe");
  if (req.nic_spec.empty()) return make(id, State::Skip, "no --nic SPEC given");
  // A NIC sysfs does not place skips once, not once per GPU.
  auto link = nic_pcie_device(env.sys_root, req.nic_spec);
  if (!link) return make(id, State::Skip, link.status().message());
  if (auto nic = read_pcie_position(env.sys_root, *link); !nic)
    return make(id, State::Skip, "sysfs does not show where the NIC sits: " + nic.status().message());
  return per_gpu(env, req, id, "emulated, not on PCIe", [&](const Request& one) { return place_gpu(env, one); });
}

}  // namespace gnio::doctor::detail
