// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief The CUDA axis of the two-axis capability question: what the CUDA
/// runtime and driver say about each device, read once and kept as plain
/// data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gnio/status.hpp"

namespace gnio {

/// @brief What the CUDA runtime and driver say about one device.
///
/// Plain data (copyable, comparable field by field in snapshots); every
/// field keeps its default when the query behind it fails.
struct CudaDeviceInfo {
  int ordinal = -1;    ///< CUDA device ordinal; -1 when not a CUDA device (the emulated one).
  std::string bus_id;  ///< PCIe bus id, normalised "dddd:bb:dd.f", lower case ("cpu" on the emulated device).
  std::string name;    ///< Device name (cudaDeviceProp::name).
  int cc_major = 0;    ///< Compute capability, major.
  int cc_minor = 0;    ///< Compute capability, minor.
  uint64_t total_mem_bytes = 0;  ///< Global memory, bytes.
  int multiprocessors = 0;       ///< Streaming multiprocessors.
  bool can_map_host_memory = false;        ///< Pinned host memory can be mapped into the device (canMapHostMemory).
  bool unified_addressing = false;         ///< Host and device share one address space (unifiedAddressing).
  bool concurrent_managed_access = false;  ///< Managed memory is usable while kernels run (needed by MemKind::GpuCpu).
  bool gpudirect_rdma = false;             ///< cudaDevAttrGPUDirectRDMASupported.
  /// cudaDevAttrGPUDirectRDMAWritesOrdering: 0 none, 100 owner, 200 all devices.
  int gpudirect_rdma_writes_ordering = 0;
  bool stream_mem_ops = false;     ///< CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR.
  bool stream_mem_ops_64 = false;  ///< 64-bit stream memory operations (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS).
  int async_engines = 0;           ///< Copy engines that overlap kernels (asyncEngineCount).
  int pcie_link_gen = 0;           ///< PCIe generation of the current link, from sysfs; 0 when unknown.
  int pcie_link_width = 0;         ///< PCIe lanes of the current link, from sysfs; 0 when unknown.
};

/// @brief The CUDA runtime and driver of this process (query_cuda_runtime()).
struct CudaRuntimeInfo {
  bool available = false;   ///< gnio was built with CUDA and the runtime answered the device count (zero included).
  int runtime_version = 0;  ///< cudaRuntimeGetVersion, e.g. 13000 for 13.0; 0 without CUDA.
  int driver_version = 0;   ///< cudaDriverGetVersion; 0 when no driver.
  std::string error;        ///< Why not available, or why there are no devices; empty otherwise.
};

/// @brief Normalises a PCIe bus id.
///
/// Accepts "[domain:]bus:device.function" in hexadecimal, any case, with
/// surrounding white space: "0000:06:00.0", "00000000:06:00.0" (as
/// nvidia-smi prints it) and "06:00.0" all become "0000:06:00.0". A domain
/// above 0xffff keeps all its digits.
/// @param text The bus id as given.
/// @return The normalised id ("%04x:%02x:%02x.%x"), or an empty string when
///         the text is not a PCIe bus id (device above 0x1f, function above 7).
std::string normalize_bus_id(const std::string& text);

/// @brief Asks the CUDA runtime for its version, the driver's and whether
///        devices can be counted. Never fails and never hangs without a driver.
/// @return The answer; without CUDA in the build, available false and an
///         error that says so.
CudaRuntimeInfo query_cuda_runtime();

/// @brief Every CUDA device the runtime enumerates, in ordinal order, with
///        its properties, attributes and PCIe link.
/// @return The devices: an empty list (not an error) when there is no
///         device or no driver, or gnio was built without CUDA; Driver when
///         the runtime fails otherwise or a device's properties cannot be read.
Result<std::vector<CudaDeviceInfo>> list_cuda_devices();

}  // namespace gnio
