// SPDX-License-Identifier: Apache-2.0
// The model's error taxonomy as gnio surfaces it, and the checks that tell
// the causes of each code apart.
#include "gnio/diagnose.hpp"

#include <array>
#include <nlohmann/json.hpp>

namespace gnio {

namespace {

constexpr std::string_view kNotSupportedChecks[] = {"cuda.devices", "cuda.bus_id", "gpudirect.peermem",
                                                    "gpudirect.dmabuf", "nic.open"};
constexpr std::string_view kInvalidValueChecks[] = {"cuda.devices", "cuda.bus_id", "nic.open"};
constexpr std::string_view kDriverChecks[] = {"cuda.toolkit",  "cuda.driver",  "cuda.runtime",
                                              "cuda.driver_compat", "doca.versions", "doca.cuda",
                                              "cuda.devices",  "cuda.set_device"};
constexpr std::string_view kNoMemoryChecks[] = {"host.memlock", "host.hugepages", "cuda.devices"};
constexpr std::string_view kIoErrorChecks[] = {"nic.open", "host.privileges"};
constexpr std::string_view kNotFoundChecks[] = {"cuda.driver", "cuda.devices", "cuda.bus_id", "nic.open"};
constexpr std::string_view kTimeoutChecks[] = {"cuda.devices", "cuda.set_device"};

const std::array<TaxonomyRow, 10> kRows = {{
    {Errc::Success, "every call that worked", "not an error: the call succeeded", "nothing",
     "nothing to retry", {}, false},
    {Errc::NotSupported,
     "Gpu::open, queue setters (set_type, set_ring_mem), GPU handle creation (GpuRxq/GpuTxq), refuse() from the "
     "capability check; the status names the refusing axis (nic or cuda)",
     "the GPU lacks a CUDA-side capability (compute capability < 8.0, no mapped host memory, no 64-bit stream "
     "memory operations, no GPUDirect RDMA); the NIC backend does not offer the queue type or offload (e.g. TX "
     "wait-on-time); nvidia_peermem missing for a GPUDirect RDMA backend",
     "both capability axes (below): the axis that says 'no' is the cause; compare with the snapshot saved at "
     "configure time: gnio caps --diff BASELINE.json (the diff is the bug)",
     "a retry loop is wrong: a capability does not appear by retrying. Choose another queue type, ring memory "
     "kind or GPU, or fix the environment the refusal names",
     kNotSupportedChecks, true},
    {Errc::InvalidValue,
     "queue setters (strides, burst, packet size, depth: checked against the NIC caps), Gpu::open with a bus id, "
     "buffer-array registration, queue spec parsing",
     "a value outside the NIC's limits (the message names value and limit); a PCIe bus id that matches no GPU "
     "(nvidia-smi -L / cudaDeviceGetPCIBusId disagree with the string passed); a buffer array whose count or "
     "element size does not match the queue's strides",
     "the NIC limits and the bus id resolution (below); the alignment and size the queue expects",
     "a retry loop is wrong: the same value fails the same way. Re-resolve the bus id or fix the value",
     kInvalidValueChecks, true},
    {Errc::BadState,
     "any queue or GPU call at the wrong lifecycle stage: setters after start(), a GPU handle of a queue that is "
     "not started, destroying a queue while a GPU handle to it is alive, closing a Gpu with queues, handles or "
     "kernels alive, a second context for one GPU",
     "the layering order was violated. Bring-up: Ethernet queue configured and started, then Gpu, then GPU "
     "handle, then the persistent kernel; teardown in reverse (kernel, handle, queue, Gpu); a buffer array not "
     "registered before start()",
     "the order of your calls; no environment check tells BAD_STATE apart (it is a program bug, not a host "
     "problem)",
     "a retry loop is wrong: it repeats the ordering bug. Fix the order of calls",
     {}, false},
    {Errc::Again,
     "device side: a TX reservation/submit when the TX ring is full, an RX receive with nothing within the "
     "timeout; host side: a queue operation that would block",
     "the GPU-visible queue is full from the GPU side because completions were not drained (or RX bursts not "
     "released); not a hardware error",
     "that the persistent kernel drains TX completions and releases RX bursts in its loop; TxqStats.completions "
     "against packets; RxqStats.rx_missed",
     "AGAIN is the one code that wants a retry, after a drain: the persistent kernel drains completions (or "
     "releases RX bursts) and then retries the submit. Spinning on the submit without draining never frees a "
     "slot",
     {}, false},
    {Errc::Driver,
     "Gpu::open and any CUDA call (allocation, stream memory operation, kernel launch) when the CUDA driver "
     "layer fails; doca_gpu_create with DOCA backends",
     "a CUDA toolkit or runtime newer than the driver supports, no driver loaded, a CUDA + DOCA version skew, a "
     "GPU in a bad state (Xid errors in dmesg)",
     "the toolkit, driver, runtime and DOCA versions (below) against the tables in data/compat; dmesg for Xid",
     "a retry loop is wrong: the driver fails the same way until the versions line up. Upgrade the driver or "
     "pick the matching toolkit/DOCA first",
     kDriverChecks, false},
    {Errc::NoMemory,
     "GPU and pinned host allocations of rings and buffer arrays; backends that lock memory (AF_XDP UMEM, DPDK "
     "hugepages)",
     "rings larger than GPU or pinned host memory allow; RLIMIT_MEMLOCK too small; no free hugepages",
     "the memlock limit against --ring-bytes, hugepages, GPU memory (below, and gnio caps)",
     "a retry loop is wrong: it asks for the same size again. Shrink the rings or raise the limits",
     kNoMemoryChecks, false},
    {Errc::IoError,
     "backends: reading and writing pcap files, AF_XDP sockets, DPDK ports",
     "a missing or corrupt capture file (the message names file and offset), an interface down or gone, missing "
     "privileges",
     "that the NIC spec opens and the privileges the backend needs (below)",
     "a retry loop is wrong: it rereads the same broken input. Fix the file, the interface or the privileges",
     kIoErrorChecks, false},
    {Errc::NotFound,
     "Gpu::open(\"auto\") with no CUDA device; a queue spec naming a file, interface or driver that does not "
     "exist; a queue id beyond the device's queues",
     "no GPU visible (driver not loaded, container started without the GPU), a typo in a bus id, file or "
     "interface name",
     "device enumeration and the NIC spec (below)",
     "a retry loop is wrong: the thing does not exist and will not appear by retrying",
     kNotFoundChecks, false},
    {Errc::Timeout,
     "EthTxq::stop waiting for queued packets; host waits on a persistent kernel (heartbeat) or a semaphore",
     "a persistent kernel stuck on a queue drain or already exited; a backend that stopped sending; a GPU busy "
     "with another process",
     "nvidia-smi -q -d UTILIZATION while the kernel runs (0% means stuck on a drain), the per-block heartbeat "
     "and counters of the kernel, cuda-gdb attached to the process",
     "a retry loop (waiting longer) rarely helps: find which side stopped making progress first",
     kTimeoutChecks, false},
}};

}  // namespace

std::span<const TaxonomyRow> taxonomy() noexcept { return kRows; }

const TaxonomyRow& taxonomy_row(Errc code) noexcept {
  for (const auto& r : kRows)
    if (r.code == code) return r;
  return kRows.front();
}

std::string valid_error_names() {
  std::string s;
  for (const auto& r : kRows) s += (s.empty() ? "" : ", ") + std::string(errc_name(r.code));
  return s;
}

Diagnosis diagnose(Errc code, const doctor::Environment& env, const doctor::Request& req) {
  Diagnosis d;
  d.row = &taxonomy_row(code);
  d.checks = doctor::run_some(d.row->checks, env, req);
  if (d.row->capability_axes) {
    NicAxis nic = NicAxis::not_queried();
    if (!req.nic_spec.empty() && env.open_nic) {
      Result<EthCaps> caps = env.open_nic(req.nic_spec);
      nic = caps ? NicAxis::queried(req.nic_spec, *caps)
                 : NicAxis::unavailable(req.nic_spec, caps.status().to_string());
    }
    CudaAxis cuda = select_cuda_axis(req.gpu, env.cuda.devices, env.cuda.runtime, env.cuda.devices_error);
    d.caps = evaluate_all(nic, cuda);
  }
  return d;
}

std::string format_diagnosis(const Diagnosis& d) {
  const TaxonomyRow& r = *d.row;
  std::string name(errc_name(r.code));
  std::string s = name + " (code " + std::to_string(static_cast<int>(r.code)) + ")\n";
  s += "  where:  " + std::string(r.where) + "\n";
  s += "  causes: " + std::string(r.causes) + "\n";
  s += "  check:  " + std::string(r.check) + "\n";
  s += "  retry:  " + std::string(r.retry) + "\n";
  if (!d.checks.empty()) s += "\nChecks that tell the causes of " + name + " apart:\n" + doctor::format_table(d.checks);
  if (d.caps) s += "\nBoth capability axes:\n" + format_report(*d.caps);
  return s;
}

std::string to_json(const Diagnosis& d, int indent) {
  const TaxonomyRow& r = *d.row;
  nlohmann::json j{{"schema_version", 1},
                   {"name", errc_name(r.code)},
                   {"code", static_cast<int>(r.code)},
                   {"retryable", is_retryable(r.code)},
                   {"where", r.where},
                   {"causes", r.causes},
                   {"check", r.check},
                   {"retry", r.retry}};
  j["checks"] = nlohmann::json::parse(doctor::to_json(d.checks, -1))["checks"];
  if (d.caps) j["capabilities"] = nlohmann::json::parse(to_json(*d.caps, -1));
  j["exit_code"] = exit_code(d);
  // The checks and the capabilities come escaped (their to_json()); the
  // taxonomy row is gnio's own text.
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

int exit_code(const Diagnosis& d) noexcept { return doctor::exit_code(d.checks); }

}  // namespace gnio
