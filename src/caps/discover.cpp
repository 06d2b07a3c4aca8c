// SPDX-License-Identifier: Apache-2.0
// The thin wrapper around the pure evaluation: opens the NIC spec and looks
// up the GPU. Kept apart so that code using only evaluate() does not need
// the Ethernet layer.
#include "gnio/gpu.hpp"
#include "gnio/capabilities.hpp"
#include "gnio/eth.hpp"

namespace gnio {

NicAxis query_nic_axis(std::string_view nic_spec) {
  if (nic_spec.empty()) return NicAxis::not_queried();
  Result<EthDevice> dev = EthDevice::open(nic_spec);
  if (!dev) return NicAxis::unavailable(std::string(nic_spec), dev.status().to_string());
  // The queue-type queries are the runtime authority; EthCaps mirrors them.
  EthCaps caps = dev->caps();
  caps.rx_cyclic = dev->rxq_type_supported(RxqType::Cyclic);
  caps.tx_regular = dev->txq_type_supported(TxqType::Regular);
  caps.tx_wait_on_time = dev->txq_type_supported(TxqType::WaitOnTime);
  return NicAxis::queried(std::string(nic_spec), std::move(caps));
}

CudaAxis query_cuda_axis(std::string_view gpu) {
  if (Gpu::names_emulated(gpu)) return CudaAxis::emulated();
  CudaRuntimeInfo rt = query_cuda_runtime();
  Result<std::vector<CudaDeviceInfo>> devices = list_cuda_devices();
  if (!devices) return select_cuda_axis(gpu, {}, rt, devices.status().to_string());
  return select_cuda_axis(gpu, *devices, rt, {});
}

CapabilityReport discover(std::string_view nic_spec, std::string_view gpu) {
  return evaluate_all(query_nic_axis(nic_spec), query_cuda_axis(gpu));
}

FeatureVerdict query_feature(Feature f, std::string_view nic_spec, std::string_view gpu) {
  return evaluate(f, query_nic_axis(nic_spec), query_cuda_axis(gpu));
}

}  // namespace gnio
