// SPDX-License-Identifier: Apache-2.0
// The live machine as a doctor Environment.
#include <cstdlib>
#include <filesystem>

#include "doctor/util.hpp"
#include "gnio/doctor.hpp"
#include "gnio/eth.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gnio::doctor {

namespace {

#if GNIO_HAVE_CUDA
Status cuda_set_device(int ordinal) {
  cudaError_t err = cudaSetDevice(ordinal);
  if (err == cudaSuccess) return Status::ok();
  return Status(Errc::Driver, Layer::Cuda,
                std::string("cudaSetDevice failed: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}
#endif

}  // namespace

std::string find_cuda_root() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0' && detail::path_exists(v)) return v;
  }
  if (detail::path_exists("/usr/local/cuda")) return "/usr/local/cuda";
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : "";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty() && detail::path_exists(dir + "/nvcc")) {
      std::error_code ec;
      auto real = std::filesystem::canonical(dir + "/nvcc", ec);
      if (!ec) return real.parent_path().parent_path().string();
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return {};
}

Environment Environment::real() {
  Environment env;
  env.cuda_root = find_cuda_root();
  if (const char* p = std::getenv("PKG_CONFIG_PATH")) env.pkg_config_path = p;
  if (const char* m = std::getenv("CUDA_MODULE_LOADING")) env.cuda_module_loading = m;
#if GNIO_HAVE_CUDA
  env.cuda.built_with_cuda = true;
  env.cuda.set_device = cuda_set_device;
#endif
  env.cuda.runtime = query_cuda_runtime();
  auto devices = list_cuda_devices();
  if (devices) env.cuda.devices = std::move(*devices);
  else env.cuda.devices_error = devices.status().message();
  env.open_nic = [](std::string_view spec) -> Result<EthCaps> {
    Result<EthDevice> dev = EthDevice::open(spec);
    if (!dev) return dev.status();
    return dev->caps();
  };
  return env;
}

}  // namespace gnio::doctor
