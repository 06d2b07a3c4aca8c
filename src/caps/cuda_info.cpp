// SPDX-License-Identifier: Apache-2.0
// The CUDA axis, read from the CUDA runtime. Without a driver every call
// fails fast with an error code; nothing here may crash or hang then.
// The driver library is never linked: driver-API attributes are fetched
// through cudaGetDriverEntryPointByVersion.
#include "gnio/cuda_info.hpp"

#include <cctype>
#include <cstdio>
#include <string_view>

#include "gnio/capabilities.hpp"

#if GNIO_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>
#endif

namespace gnio {

namespace {

bool parse_hex(std::string_view s, size_t min_digits, size_t max_digits, unsigned long& out) {
  if (s.size() < min_digits || s.size() > max_digits) return false;
  out = 0;
  for (char c : s) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else return false;
    out = out * 16 + static_cast<unsigned long>(v);
  }
  return true;
}

}  // namespace

std::string normalize_bus_id(const std::string& text) {
  std::string_view s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);

  // [domain:]bus:device.function
  size_t dot = s.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string_view func = s.substr(dot + 1);
  std::string_view rest = s.substr(0, dot);
  size_t c2 = rest.rfind(':');
  if (c2 == std::string_view::npos) return {};
  std::string_view dev = rest.substr(c2 + 1);
  rest = rest.substr(0, c2);
  std::string_view bus = rest;
  std::string_view dom = "0";
  size_t c1 = rest.rfind(':');
  if (c1 != std::string_view::npos) {
    bus = rest.substr(c1 + 1);
    dom = rest.substr(0, c1);
  }
  unsigned long d = 0, b = 0, v = 0, f = 0;
  // nvidia-smi prints an 8-digit domain; sysfs shows domains above 0xffff
  // (VMD) with 5 digits, so keep at least 4 and never truncate.
  if (!parse_hex(dom, 1, 8, d) || !parse_hex(bus, 1, 2, b) || !parse_hex(dev, 1, 2, v) ||
      !parse_hex(func, 1, 1, f))
    return {};
  if (v > 0x1f || f > 7) return {};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lx:%02lx:%02lx.%lx", d, b, v, f);
  return buf;
}

#if GNIO_HAVE_CUDA

namespace {

std::string cuda_error_text(const char* call, cudaError_t err) {
  std::string s = call;
  s += " failed: ";
  s += cudaGetErrorName(err);
  s += " (";
  s += cudaGetErrorString(err);
  s += ")";
  return s;
}

// "No GPU here" is an answer, not a failure of the query.
bool means_no_device(cudaError_t err) {
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
         err == cudaErrorCompatNotSupportedOnDevice || err == cudaErrorSystemDriverMismatch;
}

using CuDeviceGetFn = CUresult (*)(CUdevice*, int);
using CuDeviceGetAttributeFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);

// Driver-API entry points through the runtime, so that no binary depends on
// libcuda being present. cuDeviceGet/cuDeviceGetAttribute have kept their
// ABI since before CUDA 12.0, so asking for the 12.0 version lets every
// driver the runtime accepts provide them.
template <typename Fn>
Fn driver_entry(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

int driver_attribute(int ordinal, CUdevice_attribute attr) {
  static const auto get = driver_entry<CuDeviceGetFn>("cuDeviceGet");
  static const auto get_attr = driver_entry<CuDeviceGetAttributeFn>("cuDeviceGetAttribute");
  if (get == nullptr || get_attr == nullptr) return 0;
  CUdevice dev = 0;
  int value = 0;
  if (get(&dev, ordinal) != CUDA_SUCCESS || get_attr(&value, attr, dev) != CUDA_SUCCESS) return 0;
  return value;
}

int runtime_attribute(int ordinal, cudaDeviceAttr attr) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, ordinal) != cudaSuccess) return 0;
  return value;
}

}  // namespace

CudaRuntimeInfo query_cuda_runtime() {
  CudaRuntimeInfo info;
  cudaRuntimeGetVersion(&info.runtime_version);
  cudaError_t drv_err = cudaDriverGetVersion(&info.driver_version);
  if (drv_err != cudaSuccess) info.driver_version = 0;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess && err != cudaErrorNoDevice) {
    info.error = cuda_error_text("cudaGetDeviceCount", err);
    if (drv_err != cudaSuccess) info.error += "; " + cuda_error_text("cudaDriverGetVersion", drv_err);
    else if (info.driver_version == 0)
      info.error += "; cudaDriverGetVersion reports 0: no CUDA driver library (libcuda.so.1) is loaded";
    return info;
  }
  info.available = true;
  if (count == 0) info.error = "the CUDA driver enumerates no device (cudaGetDeviceCount returns 0)";
  return info;
}

Result<std::vector<CudaDeviceInfo>> list_cuda_devices() {
  std::vector<CudaDeviceInfo> out;
  int count = 0;
  if (cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
    if (means_no_device(err)) return out;
    return Status(Errc::Driver, Layer::Cuda,
                  cuda_error_text("cudaGetDeviceCount", err) +
                      ": check that the NVIDIA driver is loaded and matches the CUDA runtime (gnio doctor)");
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaError_t err = cudaGetDeviceProperties(&p, i); err != cudaSuccess) {
      return Status(Errc::Driver, Layer::Cuda,
                    cuda_error_text("cudaGetDeviceProperties", err) + " for CUDA device " +
                        std::to_string(i) + ": check the device with nvidia-smi -q -i " + std::to_string(i));
    }
    CudaDeviceInfo d;
    d.ordinal = i;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.bus_id = normalize_bus_id(bus);
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.total_mem_bytes = p.totalGlobalMem;
    d.multiprocessors = p.multiProcessorCount;
    d.can_map_host_memory = p.canMapHostMemory != 0;
    d.unified_addressing = p.unifiedAddressing != 0;
    d.concurrent_managed_access = p.concurrentManagedAccess != 0;
    d.async_engines = p.asyncEngineCount;
    d.gpudirect_rdma = runtime_attribute(i, cudaDevAttrGPUDirectRDMASupported) != 0;
    d.gpudirect_rdma_writes_ordering = runtime_attribute(i, cudaDevAttrGPUDirectRDMAWritesOrdering);
    d.stream_mem_ops = driver_attribute(i, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR) != 0;
    d.stream_mem_ops_64 = driver_attribute(i, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) != 0;
    PcieLink link = read_pcie_link("/sys", d.bus_id);
    d.pcie_link_gen = link.gen;
    d.pcie_link_width = link.width;
    out.push_back(std::move(d));
  }
  return out;
}

#else

CudaRuntimeInfo query_cuda_runtime() {
  CudaRuntimeInfo info;
  info.error = "gnio was built without CUDA (GNIO_HAVE_CUDA=0): rebuild with a CUDA toolkit, or use --gpu cpu";
  return info;
}

Result<std::vector<CudaDeviceInfo>> list_cuda_devices() { return std::vector<CudaDeviceInfo>{}; }

#endif

}  // namespace gnio
