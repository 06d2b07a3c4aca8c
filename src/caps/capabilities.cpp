// SPDX-License-Identifier: Apache-2.0
// Feature rules for both capability axes, and the NotSupported status built
// from them. Every refusal names the value that failed and what to do.
#include "gnio/gpu.hpp"
#include "gnio/capabilities.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>

namespace gnio {

namespace {

struct FeatureRow {
  Feature feature;
  std::string_view name;
  std::string_view queue;
};

constexpr std::array<FeatureRow, 7> kFeatures = {{
    {Feature::GpuRx, "gpu_rx", "rxq:cyclic"},
    {Feature::GpuTx, "gpu_tx", "txq:regular"},
    {Feature::TxWaitOnTime, "tx_wait_on_time", "txq:wait_on_time"},
    {Feature::RxRingMemGpu, "rx_ring_mem_gpu", "rxq:cyclic"},
    {Feature::RxRingMemHost, "rx_ring_mem_host", "rxq:cyclic"},
    {Feature::GpuDirectRdma, "gpudirect_rdma", "-"},
    {Feature::PersistentKernel, "persistent_kernel", "-"},
}};

constexpr std::array<Feature, 7> kAllFeatures = {
    Feature::GpuRx,         Feature::GpuTx,         Feature::TxWaitOnTime,    Feature::RxRingMemGpu,
    Feature::RxRingMemHost, Feature::GpuDirectRdma, Feature::PersistentKernel,
};

// One requirement of an axis: whether it holds, and the refusal text.
struct Need {
  bool ok;
  std::string why;
};

AxisVerdict all_of(std::initializer_list<Need> needs) {
  AxisVerdict v{Verdict::Yes, {}};
  for (const Need& n : needs) {
    if (n.ok) continue;
    v.verdict = Verdict::No;
    if (!v.reason.empty()) v.reason += "; ";
    v.reason += n.why;
  }
  return v;
}

AxisVerdict not_applicable(std::string why) { return {Verdict::NotApplicable, std::move(why)}; }

AxisVerdict nic_verdict(Feature f, const NicAxis& nic) {
  if (f == Feature::GpuDirectRdma)
    return not_applicable("EthCaps has no NIC-side GPUDirect property; the backend decides (gnio's software "
                          "backends use the CPU-proxy engine)");
  if (f == Feature::PersistentKernel) return not_applicable("a property of the GPU only");
  if (nic.state == NicAxis::State::NotQueried)
    return {Verdict::Unknown, "no NIC spec given: pass --nic SPEC (e.g. synthetic:count=10) to query the NIC axis"};
  if (nic.state == NicAxis::State::Unavailable)
    return {Verdict::Unknown, "NIC spec '" + nic.spec + "' could not be opened: " + nic.error};

  const EthCaps& c = nic.caps;
  const std::string drv = "driver '" + c.driver + "'";
  Need rx{c.rx_supported, drv + " has no RX path (rx_supported=false)"};
  Need rx_cyclic{c.rx_cyclic, drv + " does not offer the cyclic RX queue type (rx_cyclic=false), the only one "
                                    "gnio's engine exposes to a GPU"};
  Need rx_queues{c.max_rx_queues >= 1, drv + " offers max_rx_queues=" + std::to_string(c.max_rx_queues)};
  Need tx{c.tx_supported, drv + " has no TX path (tx_supported=false)"};
  Need tx_queues{c.max_tx_queues >= 1, drv + " offers max_tx_queues=" + std::to_string(c.max_tx_queues)};
  // Without an RX (TX) path the other RX (TX) limits say nothing more.
  switch (f) {
    case Feature::GpuRx:
    case Feature::RxRingMemGpu:
    case Feature::RxRingMemHost:
      return c.rx_supported ? all_of({rx_cyclic, rx_queues}) : all_of({rx});
    case Feature::GpuTx:
      if (!c.tx_supported) return all_of({tx});
      return all_of({tx_queues, {c.tx_regular, drv + " does not offer the regular TX queue type (tx_regular=false)"}});
    case Feature::TxWaitOnTime:
      if (!c.tx_supported) return all_of({tx});
      return all_of({tx_queues,
                     {c.tx_wait_on_time, drv + " does not honour per-packet send times (tx_wait_on_time=false): "
                                               "use a TX queue of type regular"}});
    case Feature::GpuDirectRdma:
    case Feature::PersistentKernel:
      break;
  }
  return {Verdict::Unknown, "unhandled feature"};
}

std::string device_label(const CudaDeviceInfo& d) {
  std::string s = "GPU " + (d.bus_id.empty() ? "#" + std::to_string(d.ordinal) : d.bus_id);
  if (!d.name.empty()) s += " (" + d.name + ")";
  return s;
}

AxisVerdict cuda_verdict(Feature f, const CudaAxis& cuda) {
  if (cuda.state == CudaAxis::State::Emulated) {
    if (f == Feature::GpuDirectRdma)
      return {Verdict::No, "the emulated device 'cpu' has no GPU memory a NIC could DMA into: pick a CUDA GPU "
                           "with --gpu BUSID"};
    return {Verdict::Yes, "emulated device: the same kernel code runs on CPU threads"};
  }
  if (cuda.state == CudaAxis::State::Unavailable)
    return {Verdict::Unknown, "no CUDA device for --gpu " + cuda.gpu + ": " + cuda.error};

  const CudaDeviceInfo& d = cuda.device;
  const std::string dev = device_label(d);
  bool cc_ok = d.cc_major > kMinCcMajor || (d.cc_major == kMinCcMajor && d.cc_minor >= kMinCcMinor);
  Need cc{cc_ok, dev + " has compute capability " + std::to_string(d.cc_major) + "." +
                     std::to_string(d.cc_minor) + " < " + std::to_string(kMinCcMajor) + "." +
                     std::to_string(kMinCcMinor) +
                     " required for GPU-initiated networking: use an Ampere or newer GPU, or --gpu cpu"};
  Need map_host{d.can_map_host_memory, dev + " cannot map pinned host memory (canMapHostMemory=0), where the "
                                             "queue indices live"};
  switch (f) {
    case Feature::GpuRx:
    case Feature::GpuTx:
    case Feature::TxWaitOnTime:
      return all_of({cc, map_host});
    case Feature::RxRingMemGpu:
      // The receivers copy their bursts from pinned staging (dev::Rxq::stage_in()).
      return all_of({cc, map_host});
    case Feature::RxRingMemHost:
      return all_of({cc, map_host,
                     {d.unified_addressing, dev + " has no unified addressing (unifiedAddressing=0), so a "
                                                  "mapped host ring has no single address: use mem=gpu"}});
    case Feature::GpuDirectRdma:
      return all_of({{d.gpudirect_rdma, dev + " does not support GPUDirect RDMA "
                                              "(cudaDevAttrGPUDirectRDMASupported=0): use gnio's CPU-proxy "
                                              "engine (any software backend)"}});
    case Feature::PersistentKernel:
      return all_of({cc});
  }
  return {Verdict::Unknown, "unhandled feature"};
}

}  // namespace

std::string_view feature_name(Feature f) noexcept {
  for (const auto& r : kFeatures)
    if (r.feature == f) return r.name;
  return "unknown";
}

std::optional<Feature> feature_from_name(std::string_view name) noexcept {
  for (const auto& r : kFeatures)
    if (r.name == name) return r.feature;
  return std::nullopt;
}

std::span<const Feature> all_features() noexcept { return kAllFeatures; }

std::string_view feature_queue(Feature f) noexcept {
  for (const auto& r : kFeatures)
    if (r.feature == f) return r.queue;
  return "-";
}

std::string_view verdict_name(Verdict v) noexcept {
  switch (v) {
    case Verdict::Yes: return "yes";
    case Verdict::No: return "no";
    case Verdict::Unknown: return "unknown";
    case Verdict::NotApplicable: return "n/a";
  }
  return "unknown";
}

std::string_view nic_state_name(NicAxis::State s) noexcept {
  switch (s) {
    case NicAxis::State::NotQueried: return "not_queried";
    case NicAxis::State::Queried: return "queried";
    case NicAxis::State::Unavailable: return "unavailable";
  }
  return "unknown";
}

std::string_view cuda_state_name(CudaAxis::State s) noexcept {
  switch (s) {
    case CudaAxis::State::Device: return "device";
    case CudaAxis::State::Emulated: return "emulated";
    case CudaAxis::State::Unavailable: return "unavailable";
  }
  return "unknown";
}

Verdict FeatureVerdict::overall() const noexcept {
  if (nic.verdict == Verdict::No || cuda.verdict == Verdict::No) return Verdict::No;
  if (nic.verdict == Verdict::Unknown || cuda.verdict == Verdict::Unknown) return Verdict::Unknown;
  return Verdict::Yes;
}

Axis FeatureVerdict::refused_by() const noexcept {
  if (nic.verdict == Verdict::No) return Axis::Nic;
  if (cuda.verdict == Verdict::No) return Axis::Cuda;
  if (nic.verdict == Verdict::Unknown) return Axis::Nic;
  if (cuda.verdict == Verdict::Unknown) return Axis::Cuda;
  return Axis::None;
}

NicAxis NicAxis::not_queried() { return {}; }

NicAxis NicAxis::queried(std::string spec, EthCaps caps) {
  NicAxis n;
  n.state = State::Queried;
  n.spec = std::move(spec);
  n.caps = std::move(caps);
  return n;
}

NicAxis NicAxis::unavailable(std::string spec, std::string error) {
  NicAxis n;
  n.state = State::Unavailable;
  n.spec = std::move(spec);
  n.error = std::move(error);
  return n;
}

CudaAxis CudaAxis::emulated() {
  CudaAxis c;
  c.state = State::Emulated;
  c.gpu = "cpu";
  return c;
}

CudaAxis CudaAxis::from_device(std::string gpu, CudaDeviceInfo device, int runtime_version, int driver_version) {
  CudaAxis c;
  c.state = State::Device;
  c.gpu = std::move(gpu);
  c.device = std::move(device);
  c.runtime_version = runtime_version;
  c.driver_version = driver_version;
  return c;
}

CudaAxis CudaAxis::unavailable(std::string gpu, std::string error, int runtime_version, int driver_version) {
  CudaAxis c;
  c.state = State::Unavailable;
  c.gpu = std::move(gpu);
  c.error = std::move(error);
  c.runtime_version = runtime_version;
  c.driver_version = driver_version;
  return c;
}

CudaAxis select_cuda_axis(std::string_view gpu, const std::vector<CudaDeviceInfo>& devices,
                          const CudaRuntimeInfo& runtime, std::string_view enumerate_error) {
  std::string req(gpu.empty() ? "auto" : gpu);
  if (Gpu::names_emulated(req)) return CudaAxis::emulated();
  std::string why_none(enumerate_error);
  if (why_none.empty()) why_none = runtime.error;
  if (why_none.empty()) why_none = "the CUDA runtime enumerates no device";
  if (req == "auto") {
    if (devices.empty())
      return CudaAxis::unavailable(req, why_none + "; check the driver with `gnio doctor`, or use --gpu cpu",
                                   runtime.runtime_version, runtime.driver_version);
    return CudaAxis::from_device(req, devices.front(), runtime.runtime_version, runtime.driver_version);
  }
  std::string bus = normalize_bus_id(req);
  if (bus.empty())
    return CudaAxis::unavailable(req, "'" + req + "' is not a PCIe bus id (dddd:bb:dd.f), 'auto' or 'cpu'",
                                 runtime.runtime_version, runtime.driver_version);
  std::string seen;
  for (const auto& d : devices) {
    if (d.bus_id == bus) return CudaAxis::from_device(req, d, runtime.runtime_version, runtime.driver_version);
    seen += seen.empty() ? d.bus_id : ", " + d.bus_id;
  }
  std::string error = devices.empty()
                          ? "GPU " + bus + " not found: " + why_none + "; check the driver with `gnio doctor`"
                          : "GPU " + bus + " not found among the CUDA devices (" + seen +
                                "): re-resolve the bus id with nvidia-smi -L or `gnio caps --gpu auto`";
  return CudaAxis::unavailable(req, error, runtime.runtime_version, runtime.driver_version);
}

FeatureVerdict evaluate(Feature f, const NicAxis& nic, const CudaAxis& cuda) {
  FeatureVerdict v;
  v.feature = f;
  v.nic = nic_verdict(f, nic);
  v.cuda = cuda_verdict(f, cuda);
  if (f == Feature::GpuDirectRdma && cuda.state == CudaAxis::State::Device) {
    v.notes.push_back("GPUDirect RDMA also needs the nvidia_peermem module (or dma-buf) on the host: "
                      "`gnio doctor` checks it");
    const int order = cuda.device.gpudirect_rdma_writes_ordering;
    // cudaGPUDirectRDMAWritesOrdering: None = 0, Owner = 100, AllDevices = 200.
    v.notes.push_back("cudaDevAttrGPUDirectRDMAWritesOrdering=" + std::to_string(order) +
                      (order >= 200   ? " (NIC writes are ordered for consumers on any CUDA device)"
                       : order >= 100 ? " (NIC writes are ordered for this GPU's own consumers; other GPUs need "
                                        "cudaFlushGPUDirectRDMAWrites)"
                                      : " (NIC writes need cudaFlushGPUDirectRDMAWrites before a kernel consumes "
                                        "them)"));
  }
  return v;
}

CapabilityReport evaluate_all(const NicAxis& nic, const CudaAxis& cuda) {
  CapabilityReport r;
  r.gnio_version = GNIO_VERSION_STRING;
  r.nic = nic;
  r.cuda = cuda;
  for (Feature f : all_features()) r.features.push_back(evaluate(f, nic, cuda));
  return r;
}

const FeatureVerdict& CapabilityReport::verdict(Feature f) const {
  for (const auto& v : features)
    if (v.feature == f) return v;
  throw std::out_of_range("capability report has no verdict for feature " + std::string(feature_name(f)));
}

Status refuse(Feature f, const CapabilityReport& report) {
  FeatureVerdict v = evaluate(f, report.nic, report.cuda);
  Axis axis = v.refused_by();
  if (axis == Axis::None) return Status::ok();
  const AxisVerdict& av = axis == Axis::Nic ? v.nic : v.cuda;
  std::string msg = "feature " + std::string(feature_name(f));
  if (feature_queue(f) != "-") msg += " (" + std::string(feature_queue(f)) + ")";
  msg += av.verdict == Verdict::No ? " refused by the " : " could not be established on the ";
  msg += axis_name(axis);
  msg += " axis: " + av.reason;
  msg += "; compare both axes with `gnio caps";
  if (!report.nic.spec.empty()) msg += " --nic " + report.nic.spec;
  msg += " --gpu " + (report.cuda.gpu.empty() ? std::string("auto") : report.cuda.gpu) + "`";
  return Status(Errc::NotSupported, Layer::Caps, std::move(msg), axis);
}

}  // namespace gnio
