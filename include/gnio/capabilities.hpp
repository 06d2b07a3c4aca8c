// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Two-axis capability discovery: is feature F supported on NIC
/// spec N with GPU G?
///
/// The NIC axis comes from the Ethernet device's capability queries
/// (EthCaps), the CUDA axis from the CUDA device properties and attributes
/// (CudaDeviceInfo). Both are plain data, so evaluation is a pure function
/// (evaluate(), evaluate_all()); discover() is the thin wrapper that opens
/// the spec and looks up the GPU. Host only; the functions keep no state
/// and may be called from any thread.
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

/// @brief A capability gnio can be asked about.
enum class Feature : uint8_t {
  GpuRx,             ///< GPU-visible RX queue (cyclic type).
  GpuTx,             ///< GPU-visible TX queue (regular type).
  TxWaitOnTime,      ///< GPU-visible TX queue honouring per-packet send times.
  RxRingMemGpu,      ///< RX ring in device memory ("mem=gpu").
  RxRingMemHost,     ///< RX ring in pinned, mapped host memory ("mem=host").
  GpuDirectRdma,     ///< NIC DMA straight into GPU memory.
  PersistentKernel,  ///< One long-running kernel per GPU per direction.
};

/// @brief The snake-case name of a feature, as `gnio caps` and snapshots
///        write it.
/// @param f The feature.
/// @return "gpu_rx", "gpu_tx", "tx_wait_on_time", "rx_ring_mem_gpu",
///         "rx_ring_mem_host", "gpudirect_rdma" or "persistent_kernel";
///         "unknown" outside the enumeration.
std::string_view feature_name(Feature f) noexcept;
/// @brief The feature a name stands for, the inverse of feature_name().
/// @param name A name as feature_name() returns it (exact match).
/// @return The feature, or std::nullopt for an unknown name.
std::optional<Feature> feature_from_name(std::string_view name) noexcept;
/// @brief Every feature, in the order reports list them.
/// @return A static list of the seven features.
std::span<const Feature> all_features() noexcept;
/// @brief The queue type a feature is asked for.
/// @param f The feature.
/// @return "rxq:cyclic", "txq:regular", "txq:wait_on_time", or "-" when the
///         feature is not about one queue.
std::string_view feature_queue(Feature f) noexcept;

/// @brief The answer of one axis (or of both together) for one feature.
enum class Verdict : uint8_t {
  Yes,            ///< Supported.
  No,             ///< Refused; the reason says what is missing and what to do.
  Unknown,        ///< The axis could not be queried (no NIC spec given, no CUDA driver).
  NotApplicable,  ///< The axis has no requirement for this feature.
};
/// @brief The name of a verdict.
/// @param v The verdict.
/// @return "yes", "no", "unknown" or "n/a".
std::string_view verdict_name(Verdict v) noexcept;

/// @brief One axis's verdict for one feature, with its reason.
struct AxisVerdict {
  Verdict verdict = Verdict::Unknown;  ///< The answer.
  std::string reason;  ///< Why: always set when the verdict is No, Unknown or NotApplicable.
};

/// @brief Both axes' verdicts for one feature.
struct FeatureVerdict {
  Feature feature = Feature::GpuRx;  ///< The feature asked about.
  AxisVerdict nic;                   ///< The NIC axis's answer.
  AxisVerdict cuda;                  ///< The CUDA axis's answer.
  std::vector<std::string> notes;    ///< Information that is not a refusal (e.g. a driver module GPUDirect also needs).

  /// @brief Both axes together.
  /// @return No when an axis says No; else Unknown when an axis says
  ///         Unknown; else Yes (NotApplicable counts as Yes).
  Verdict overall() const noexcept;
  /// @brief Whether the feature is usable.
  /// @return True when overall() is Yes.
  bool supported() const noexcept { return overall() == Verdict::Yes; }
  /// @brief The axis to blame.
  /// @return The axis that says No (NIC before CUDA), else the one that
  ///         says Unknown (NIC before CUDA), else Axis::None.
  Axis refused_by() const noexcept;
};

/// @brief The NIC axis input: the capabilities of an opened device, or why
/// there are none.
struct NicAxis {
  /// @brief Whether the NIC axis could be queried.
  enum class State : uint8_t {
    NotQueried,   ///< No NIC spec was named.
    Queried,      ///< The spec opened; caps holds its capabilities.
    Unavailable,  ///< The spec did not open; error says why.
  };
  State state = State::NotQueried;  ///< Whether caps or error is meaningful.
  std::string spec;   ///< The queue spec, "" when none was named.
  EthCaps caps;       ///< Meaningful when state == Queried.
  std::string error;  ///< Why Unavailable.

  /// @brief No spec named.
  /// @return A NicAxis in state NotQueried.
  static NicAxis not_queried();
  /// @brief A spec that opened.
  /// @param spec The queue spec.
  /// @param caps What its device reported.
  /// @return A NicAxis in state Queried.
  static NicAxis queried(std::string spec, EthCaps caps);
  /// @brief A spec that did not open.
  /// @param spec The queue spec.
  /// @param error Why (e.g. the Status text of EthDevice::open()).
  /// @return A NicAxis in state Unavailable.
  static NicAxis unavailable(std::string spec, std::string error);
};
/// @brief The name of a NIC axis state, as snapshots write it.
/// @param s The state.
/// @return "not_queried", "queried" or "unavailable".
std::string_view nic_state_name(NicAxis::State s) noexcept;

/// @brief The CUDA axis input: one CUDA device, the emulated device, or why
/// no device could be queried.
struct CudaAxis {
  /// @brief What the GPU choice resolved to.
  enum class State : uint8_t {
    Device,       ///< A CUDA device; device holds its properties.
    Emulated,     ///< The emulated device ("cpu").
    Unavailable,  ///< No device matched or none could be queried; error says why.
  };
  State state = State::Unavailable;  ///< Whether device or error is meaningful.
  std::string gpu;          ///< As requested: bus id, "auto" or "cpu".
  CudaDeviceInfo device;    ///< Meaningful when state == Device.
  int runtime_version = 0;  ///< cudaRuntimeGetVersion, 0 when unknown.
  int driver_version = 0;   ///< cudaDriverGetVersion, 0 when no driver.
  std::string error;        ///< Why Unavailable.

  /// @brief The emulated device.
  /// @return A CudaAxis in state Emulated with gpu "cpu".
  static CudaAxis emulated();
  /// @brief A CUDA device.
  /// @param gpu The GPU choice as requested.
  /// @param device What the runtime said about the device.
  /// @param runtime_version cudaRuntimeGetVersion, 0 when unknown.
  /// @param driver_version cudaDriverGetVersion, 0 when no driver.
  /// @return A CudaAxis in state Device.
  static CudaAxis from_device(std::string gpu, CudaDeviceInfo device, int runtime_version = 0,
                              int driver_version = 0);
  /// @brief No device for the choice.
  /// @param gpu The GPU choice as requested.
  /// @param error Why, with what to do.
  /// @param runtime_version cudaRuntimeGetVersion, 0 when unknown.
  /// @param driver_version cudaDriverGetVersion, 0 when no driver.
  /// @return A CudaAxis in state Unavailable.
  static CudaAxis unavailable(std::string gpu, std::string error, int runtime_version = 0,
                              int driver_version = 0);
};
/// @brief The name of a CUDA axis state, as snapshots write it.
/// @param s The state.
/// @return "device", "emulated" or "unavailable".
std::string_view cuda_state_name(CudaAxis::State s) noexcept;

/// @brief GPU-initiated networking needs compute capability 8.0 (Ampere) or
/// newer: the major part.
inline constexpr int kMinCcMajor = 8;
/// @brief The minor part of the minimum compute capability.
inline constexpr int kMinCcMinor = 0;

/// @brief Picks the device a GPU choice names among enumerated devices.
/// @param gpu "auto" or empty (the first device), "cpu" (the emulated
///        device), or a bus id in any form normalize_bus_id() accepts.
/// @param devices The devices list_cuda_devices() returned.
/// @param runtime The runtime's versions, copied into the axis.
/// @param enumerate_error Why `devices` is empty, when it is (else "").
/// @return The axis: Emulated, Device, or Unavailable with a reason (no
///         device at all, text that is not a bus id, a bus id not among
///         the devices).
CudaAxis select_cuda_axis(std::string_view gpu, const std::vector<CudaDeviceInfo>& devices,
                          const CudaRuntimeInfo& runtime, std::string_view enumerate_error);

/// @brief The core: one feature on both axes, from plain data.
/// @param f The feature.
/// @param nic The NIC axis input.
/// @param cuda The CUDA axis input.
/// @return Both verdicts with their reasons, and notes.
FeatureVerdict evaluate(Feature f, const NicAxis& nic, const CudaAxis& cuda);

/// @brief Everything a `gnio caps` snapshot holds: both axes and every
/// feature.
struct CapabilityReport {
  /// The snapshot schema this gnio writes and reads.
  static constexpr int kSchemaVersion = 1;
  int schema_version = kSchemaVersion;   ///< The schema of this report.
  std::string gnio_version;              ///< The gnio version that made it.
  NicAxis nic;                           ///< The NIC axis input.
  CudaAxis cuda;                         ///< The CUDA axis input.
  std::vector<FeatureVerdict> features;  ///< One per feature, in all_features() order.

  /// @brief The verdict of one feature.
  /// @param f The feature.
  /// @return Its entry in features.
  /// @throws std::out_of_range when the report has no verdict for `f`
  ///         (only possible for a snapshot read from JSON that lacks it).
  const FeatureVerdict& verdict(Feature f) const;
};

/// @brief Every feature on both axes.
/// @param nic The NIC axis input.
/// @param cuda The CUDA axis input.
/// @return The report, with this gnio's version.
CapabilityReport evaluate_all(const NicAxis& nic, const CudaAxis& cuda);

/// @brief The NIC half of discover(): opens the spec through
///        EthDevice::open() and reads its capabilities.
/// @param nic_spec A queue spec; "" for none.
/// @return NotQueried for "", Queried, or Unavailable with the open error.
NicAxis query_nic_axis(std::string_view nic_spec);
/// @brief The CUDA half of discover(): asks the CUDA runtime and picks the
///        device (select_cuda_axis()).
/// @param gpu "auto", "cpu" or a bus id.
/// @return The axis.
CudaAxis query_cuda_axis(std::string_view gpu);

/// @brief Opens the NIC spec (when not empty) and looks up the GPU, then
///        evaluates every feature.
///
/// Never fails: an axis that cannot be queried is reported Unavailable
/// with the reason.
/// @param nic_spec A queue spec; "" leaves the NIC axis NotQueried.
/// @param gpu "auto", "cpu" or a bus id.
/// @return The report.
CapabilityReport discover(std::string_view nic_spec, std::string_view gpu);

/// @brief The one-call question: is feature `f` (for its queue type,
///        feature_queue()) supported on NIC spec `nic_spec` with GPU `gpu`?
/// @param f The feature.
/// @param nic_spec A queue spec; "" leaves the NIC axis NotQueried.
/// @param gpu "auto", "cpu" or a bus id.
/// @return Both axes' verdicts, with reasons.
FeatureVerdict query_feature(Feature f, std::string_view nic_spec, std::string_view gpu);

/// @brief The status to return for a feature the report does not support.
///
/// The feature is evaluated again from the report's axes (not taken from
/// its saved verdicts).
/// @param f The feature.
/// @param report The axes to evaluate it on.
/// @return Status::ok() when both axes support the feature; otherwise
///         NotSupported (Layer::Caps) with Status::axis() set to the axis
///         that refused (or could not be established) and a message naming
///         the axis, the reason and the `gnio caps` command to compare both.
Status refuse(Feature f, const CapabilityReport& report);

/// @brief The snapshot JSON of a report (`gnio caps --save`), with
///        "schema_version". Bytes that are not UTF-8 (e.g. in a file name)
///        are replaced, never thrown on.
/// @param report The report.
/// @param indent Spaces per level; -1 for one line.
/// @return The JSON text.
std::string to_json(const CapabilityReport& report, int indent = 2);
/// @brief Reads a snapshot written by to_json(). Verdicts are kept as saved.
/// @param text The JSON text.
/// @return The report, or InvalidValue (Layer::Caps) naming the first
///         missing or mistyped field, for text that is not a JSON object,
///         or for a schema_version other than CapabilityReport::kSchemaVersion.
Result<CapabilityReport> capability_report_from_json(std::string_view text);

/// @brief One changed leaf between two snapshots.
struct CapsChange {
  std::string path;    ///< Flattened JSON path of the leaf, e.g. "cuda.device.cc_major".
  std::string before;  ///< Its JSON text in the first report; "(absent)" when missing.
  std::string after;   ///< Its JSON text in the second report; "(absent)" when missing.
};
/// @brief Every leaf that differs between two reports' snapshot JSON.
/// @param before The earlier report (e.g. a saved baseline).
/// @param after The later report.
/// @return The changes, in path order (leaves missing from `before` last);
///         empty when the snapshots agree.
std::vector<CapsChange> diff(const CapabilityReport& before, const CapabilityReport& after);

/// @brief The human-readable report: both axes, one row per feature, then
///        each distinct refusal reason (and note) once, with the features
///        it concerns.
/// @param report The report.
/// @return Multi-line text ending in a newline.
std::string format_report(const CapabilityReport& report);

/// @brief The PCIe link of a device, read from sysfs.
struct PcieLink {
  int gen = 0;    ///< PCIe generation (1..7) of the current link speed; 0 when unknown.
  int width = 0;  ///< Lanes of the current link; 0 when unknown.
};
/// @brief Reads `<sys_root>/bus/pci/devices/<bus_id>/current_link_speed`
///        and `current_link_width`.
/// @param sys_root The sysfs root, "/sys" on the live machine.
/// @param bus_id The normalised bus id ("0000:06:00.0").
/// @return The link; zeros where sysfs does not say (or `bus_id` is empty).
PcieLink read_pcie_link(const std::string& sys_root, const std::string& bus_id);

/// @brief Where a PCIe device sits in the sysfs device tree.
struct PciePosition {
  std::string host_bridge;         ///< The root complex's host bridge, e.g. "pci0000:00".
  std::vector<std::string> chain;  ///< Bus ids from the root port down to the device itself (its last entry).
  int numa_node = -1;              ///< The device's `numa_node`; -1 where sysfs does not say.
};
/// @brief Reads a device's place from the sysfs tree.
/// @param sys_root The sysfs root, "/sys" on the live machine.
/// @param device_link A path to the device's directory, or a link to it
///        (`<sys_root>/bus/pci/devices/BUSID`, `<sys_root>/class/net/IF/device`).
/// @return The position, or NotFound (Layer::Caps) naming the path when it
///         does not resolve to a PCIe device under `<sys_root>/devices`.
Result<PciePosition> read_pcie_position(const std::string& sys_root, const std::string& device_link);

/// @brief The sysfs directory of the PCIe device a queue spec drives.
/// @param sys_root The sysfs root.
/// @param nic_spec "afxdp:IFACE,..." or "dpdk:...,BUSID,..."; any other
///        driver drives no PCIe device.
/// @return `<sys_root>/class/net/IFACE/device` or
///         `<sys_root>/bus/pci/devices/BUSID`; NotFound (Layer::Caps) saying
///         why there is none (a software backend, a virtual interface, a
///         virtual DPDK PMD, a bus id sysfs does not list).
Result<std::string> nic_pcie_device(const std::string& sys_root, std::string_view nic_spec);

/// @brief How far apart two PCIe devices are, in the words of `nvidia-smi topo -m`.
enum class PcieRelation : uint8_t {
  Pix,   ///< Behind one PCIe bridge (one switch port level): the best placement.
  Pxb,   ///< Behind shared PCIe bridges (one switch, several levels).
  Phb,   ///< Below one host bridge, no shared switch: one root complex.
  Node,  ///< Different host bridges on one NUMA node.
  Sys,   ///< Different NUMA nodes: traffic crosses the socket interconnect.
};
/// @brief The name of a relation.
/// @param r The relation.
/// @return "PIX", "PXB", "PHB", "NODE" or "SYS".
std::string_view pcie_relation_name(PcieRelation r) noexcept;

/// @brief Where a GPU sits relative to the NIC.
struct PciePlacement {
  PcieRelation relation = PcieRelation::Sys;  ///< How far apart they are.
  std::string nic_bus_id;                     ///< The NIC's bus id.
  std::string gpu_bus_id;                     ///< The GPU's bus id.
  int nic_numa_node = -1;                     ///< The NIC's NUMA node, -1 when unknown.
  int gpu_numa_node = -1;                     ///< The GPU's NUMA node, -1 when unknown.
  std::string nic_host_bridge;                ///< The NIC's host bridge ("pci0000:00").
  std::string gpu_host_bridge;                ///< The GPU's host bridge.
  std::string shared_bridge;  ///< The deepest bridge above both (PIX, PXB); "" otherwise.
  /// @brief Below one PCIe switch (PIX or PXB).
  /// @return True for Pix and Pxb.
  bool same_switch() const noexcept { return relation == PcieRelation::Pix || relation == PcieRelation::Pxb; }
  /// @brief Below one host bridge.
  /// @return True when both host bridges are the same one.
  bool same_root_complex() const noexcept { return nic_host_bridge == gpu_host_bridge; }
  /// @brief On different NUMA nodes, where sysfs gives both.
  /// @return True when both nodes are known and differ.
  bool other_numa_node() const noexcept {
    return nic_numa_node >= 0 && gpu_numa_node >= 0 && nic_numa_node != gpu_numa_node;
  }
  /// @brief The verdict in words, e.g. "behind one PCIe bridge
  ///        0000:01:00.0 (PIX)" or "different NUMA nodes (SYS): traffic
  ///        crosses the socket interconnect".
  /// @return One phrase ending in the relation's name or its consequence.
  std::string describe() const;
};
/// @brief Places a GPU against a NIC from their positions.
/// @param nic The NIC's position (read_pcie_position()).
/// @param gpu The GPU's position.
/// @return The placement: a common host bridge and a common bridge below it
///         decide PIX (both one level below it) or PXB; a common host
///         bridge alone PHB; different host bridges NODE; different NUMA
///         nodes SYS (also below one host bridge).
PciePlacement place_pcie(const PciePosition& nic, const PciePosition& gpu);
/// @brief Places a GPU, by bus id, against the NIC a queue spec drives.
/// @param sys_root The sysfs root.
/// @param nic_spec The NIC's queue spec (nic_pcie_device()).
/// @param gpu_bus_id The GPU's normalised bus id.
/// @return The placement, or NotFound (Layer::Caps) saying which side sysfs
///         does not show, and why.
Result<PciePlacement> place_gpu_against_nic(const std::string& sys_root, std::string_view nic_spec,
                                            const std::string& gpu_bus_id);

}  // namespace gnio
