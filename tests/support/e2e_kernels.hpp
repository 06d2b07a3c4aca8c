// SPDX-License-Identifier: Apache-2.0
// The end-to-end tests' persistent kernels on one queue: the receive kernel
// with the totals it counts into, and the echo kernel. Their launches are
// compiled by nvcc in e2e_kernels.cu; the tests around them are plain C++.
#pragma once

#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "gnio/dev/stock_kernels.hpp"

namespace gnio::e2e_test {

// Frames a kernel takes from its queue at a time.
inline constexpr uint32_t kE2eBurst = 32;

// A persistent ReceiveKernel on one queue and the totals it counts into
// (GpuCpu memory, which the host reads once the kernel stopped).
struct ReceiveCounting {
  DeviceMemory totals;
  PersistentKernel kernel;  // after totals: stopped before they are freed

  dev::ReceiveTotals counted() const { return *static_cast<const dev::ReceiveTotals*>(totals.host_ptr()); }
};

Result<ReceiveCounting> launch_receive_counting(Gpu& gpu, const GpuRxq& grxq, const char* name);

// A persistent EchoKernel from one RX queue to one TX queue.
Result<PersistentKernel> launch_echo(const Gpu& gpu, const GpuRxq& grxq, const GpuTxq& gtxq, const char* name);

}  // namespace gnio::e2e_test
