// The CUDA axis of the two-axis capability question: what the CUDA runtime
// and driver say about each device, read once and kept as plain data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gnio/status.hpp"

namespace gnio {

struct CudaDeviceInfo {
  int ordinal = -1;
  std::string bus_id;  // normalised "dddd:bb:dd.f", lower case
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t total_mem_bytes = 0;
  int multiprocessors = 0;
  bool can_map_host_memory = false;
  bool unified_addressing = false;
  bool concurrent_managed_access = false;
  bool gpudirect_rdma = false;            // cudaDevAttrGPUDirectRDMASupported
  int gpudirect_rdma_writes_ordering = 0; // cudaDevAttrGPUDirectRDMAWritesOrdering
  bool stream_mem_ops = false;            // CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR
  bool stream_mem_ops_64 = false;         // 64-bit stream memory operations
  int async_engines = 0;
  int pcie_link_gen = 0;    // 0 when unknown (NVML/sysfs not available)
  int pcie_link_width = 0;
};

struct CudaRuntimeInfo {
  bool available = false;    // built with CUDA and the runtime loads
  int runtime_version = 0;   // cudaRuntimeGetVersion, e.g. 13000
  int driver_version = 0;    // cudaDriverGetVersion; 0 when no driver
  std::string error;         // why not available / why no devices
};

// Normalises "0000:06:00.0", "00000000:06:00.0", "06:00.0" to "0000:06:00.0".
// Returns an empty string when the text is not a PCIe bus id.
std::string normalize_bus_id(const std::string& text);

CudaRuntimeInfo query_cuda_runtime();

// Every CUDA device the runtime enumerates; an empty list (not an error)
// when there is no device or no driver. Errors only for real failures.
Result<std::vector<CudaDeviceInfo>> list_cuda_devices();

}  // namespace gnio
