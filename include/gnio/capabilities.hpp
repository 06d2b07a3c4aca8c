// Two-axis capability discovery: is feature F supported on NIC spec N with
// GPU G? The NIC axis comes from the Ethernet device's capability queries
// (EthCaps), the CUDA axis from the CUDA device properties and attributes
// (CudaDeviceInfo). Both are plain data, so evaluation is a pure function;
// discover() is the thin wrapper that opens the spec and looks up the GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/cuda_info.hpp"
#include "gnio/eth_caps.hpp"
#include "gnio/status.hpp"

namespace gnio {

enum class Feature : uint8_t {
  GpuRx,             // GPU-visible RX queue (cyclic type)
  GpuTx,             // GPU-visible TX queue (regular type)
  TxWaitOnTime,      // GPU-visible TX queue honouring per-packet send times
  RxRingMemGpu,      // RX ring in device memory ("mem=gpu")
  RxRingMemHost,     // RX ring in pinned, mapped host memory ("mem=host")
  GpuDirectRdma,     // NIC DMA straight into GPU memory
  PersistentKernel,  // one long-running kernel per GPU per direction
};

// "gpu_rx", "gpu_tx", "tx_wait_on_time", "rx_ring_mem_gpu",
// "rx_ring_mem_host", "gpudirect_rdma", "persistent_kernel".
std::string_view feature_name(Feature f) noexcept;
std::optional<Feature> feature_from_name(std::string_view name) noexcept;
std::span<const Feature> all_features() noexcept;
// The queue type a feature is asked for: "rxq:cyclic", "txq:regular",
// "txq:wait_on_time", or "-" when the feature is not about one queue.
std::string_view feature_queue(Feature f) noexcept;

// The answer of one axis (or of both together) for one feature.
// NotApplicable: the axis has no requirement for this feature.
// Unknown: the axis could not be queried (no --nic given, no CUDA driver).
enum class Verdict : uint8_t { Yes, No, Unknown, NotApplicable };
std::string_view verdict_name(Verdict v) noexcept;  // "yes", "no", "unknown", "n/a"

struct AxisVerdict {
  Verdict verdict = Verdict::Unknown;
  std::string reason;  // why (always set when verdict is No or Unknown)
};

struct FeatureVerdict {
  Feature feature = Feature::GpuRx;
  AxisVerdict nic;
  AxisVerdict cuda;
  std::vector<std::string> notes;  // information that is not a refusal

  // Yes when no axis says No or Unknown; No when an axis says No;
  // Unknown otherwise.
  Verdict overall() const noexcept;
  bool supported() const noexcept { return overall() == Verdict::Yes; }
  // The axis that refused (No wins over Unknown; NIC before CUDA), or None.
  Axis refused_by() const noexcept;
};

// The NIC axis input: the capabilities of an opened device, or why there
// are none.
struct NicAxis {
  enum class State : uint8_t { NotQueried, Queried, Unavailable };
  State state = State::NotQueried;
  std::string spec;  // the queue spec, "" when none was named
  EthCaps caps;      // meaningful when state == Queried
  std::string error; // why Unavailable

  static NicAxis not_queried();
  static NicAxis queried(std::string spec, EthCaps caps);
  static NicAxis unavailable(std::string spec, std::string error);
};
std::string_view nic_state_name(NicAxis::State s) noexcept;  // "not_queried", "queried", "unavailable"

// The CUDA axis input: one CUDA device, the emulated device, or why no
// device could be queried.
struct CudaAxis {
  enum class State : uint8_t { Device, Emulated, Unavailable };
  State state = State::Unavailable;
  std::string gpu;          // as requested: bus id, "auto" or "cpu"
  CudaDeviceInfo device;    // meaningful when state == Device
  int runtime_version = 0;  // cudaRuntimeGetVersion, 0 when unknown
  int driver_version = 0;   // cudaDriverGetVersion, 0 when no driver
  std::string error;        // why Unavailable

  static CudaAxis emulated();
  static CudaAxis from_device(std::string gpu, CudaDeviceInfo device, int runtime_version = 0,
                              int driver_version = 0);
  static CudaAxis unavailable(std::string gpu, std::string error, int runtime_version = 0,
                              int driver_version = 0);
};
std::string_view cuda_state_name(CudaAxis::State s) noexcept;  // "device", "emulated", "unavailable"

// GPU-initiated networking needs compute capability 8.0 (Ampere) or newer.
inline constexpr int kMinCcMajor = 8;
inline constexpr int kMinCcMinor = 0;

// Picks the device `gpu` names ("auto": the first; "cpu": emulated; a bus
// id in any form normalize_bus_id accepts) among the enumerated ones.
// enumerate_error says why `devices` is empty, when it is.
CudaAxis select_cuda_axis(std::string_view gpu, const std::vector<CudaDeviceInfo>& devices,
                          const CudaRuntimeInfo& runtime, std::string_view enumerate_error);

// The core: one feature on both axes, from plain data.
FeatureVerdict evaluate(Feature f, const NicAxis& nic, const CudaAxis& cuda);

// Everything a `gnio caps` snapshot holds: both axes and every feature.
struct CapabilityReport {
  static constexpr int kSchemaVersion = 1;
  int schema_version = kSchemaVersion;
  std::string gnio_version;
  NicAxis nic;
  CudaAxis cuda;
  std::vector<FeatureVerdict> features;  // in all_features() order

  const FeatureVerdict& verdict(Feature f) const;
};

CapabilityReport evaluate_all(const NicAxis& nic, const CudaAxis& cuda);

// The two halves of discover(), for callers that need one axis: the NIC
// axis of a queue spec ("" -> NotQueried), the CUDA axis of a GPU choice.
NicAxis query_nic_axis(std::string_view nic_spec);
CudaAxis query_cuda_axis(std::string_view gpu);

// Opens the NIC spec (when not empty) through EthDevice::open and the GPU
// through the CUDA runtime, then evaluates every feature. Never fails: an
// axis that cannot be queried is reported Unavailable with the reason.
CapabilityReport discover(std::string_view nic_spec, std::string_view gpu);

// The one-call question: is feature f (for its queue type, feature_queue)
// supported on NIC spec nic_spec with GPU gpu? Both axes, with reasons.
FeatureVerdict query_feature(Feature f, std::string_view nic_spec, std::string_view gpu);

// The NotSupported status for a feature the report refuses, with Axis set
// to the refusing axis and a message naming the axis, the reason and the
// fix; Status::ok() when both axes support the feature.
Status refuse(Feature f, const CapabilityReport& report);

// Snapshot JSON (with "schema_version"). Parsing rejects another schema
// major and malformed input with InvalidValue naming the field.
std::string to_json(const CapabilityReport& report, int indent = 2);
Result<CapabilityReport> capability_report_from_json(std::string_view text);

// One changed leaf between two snapshots, as flattened JSON paths
// ("cuda.device.cc_major"); values are JSON text, "(absent)" when missing.
struct CapsChange {
  std::string path;
  std::string before;
  std::string after;
};
std::vector<CapsChange> diff(const CapabilityReport& before, const CapabilityReport& after);

// Human-readable report: both axes, then one row per feature with the
// reasons for every refusal.
std::string format_report(const CapabilityReport& report);

// PCIe link of a device from sysfs (<sys_root>/bus/pci/devices/<bus>/
// current_link_speed, current_link_width); zeros when sysfs does not say.
struct PcieLink {
  int gen = 0;
  int width = 0;
};
PcieLink read_pcie_link(const std::string& sys_root, const std::string& bus_id);

}  // namespace gnio
