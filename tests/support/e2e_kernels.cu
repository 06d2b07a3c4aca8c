// SPDX-License-Identifier: Apache-2.0
// The end-to-end tests' two kernel launches (see e2e_kernels.hpp).
#include "e2e_kernels.hpp"

namespace gnio::e2e_test {
namespace {

// One block per kernel: a thread on the emulated device, 128 on a GPU.
LaunchConfig e2e_launch_config(const Gpu& gpu, const char* name) {
  LaunchConfig cfg;
  cfg.block = gpu.emulated() ? 1u : 128u;
  cfg.name = name;
  return cfg;
}

}  // namespace

Result<ReceiveCounting> launch_receive_counting(Gpu& gpu, const GpuRxq& grxq, const char* name) {
  auto totals = gpu.alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
  if (!totals) return totals.status();
  auto kernel = PersistentKernel::launch(
      gpu, e2e_launch_config(gpu, name),
      dev::ReceiveKernel<Scope::Block>{dev::RxQueueSet::of(grxq.handle()),
                                            static_cast<dev::ReceiveTotals*>(totals->device_ptr()), kE2eBurst});
  if (!kernel) return kernel.status();
  return ReceiveCounting{std::move(*totals), std::move(*kernel)};
}

Result<PersistentKernel> launch_echo(const Gpu& gpu, const GpuRxq& grxq, const GpuTxq& gtxq, const char* name) {
  return PersistentKernel::launch(gpu, e2e_launch_config(gpu, name),
                                  dev::EchoKernel<Scope::Block>{grxq.handle(), gtxq.handle(), kE2eBurst});
}

}  // namespace gnio::e2e_test
