// What the end-to-end net tests set up alike around their persistent
// kernels: the queues, configured one way, the receive kernel with the
// totals it counts into, and the echo kernel. Header only: the tests
// compile it as CUDA.
#pragma once

#include <utility>

#include "common/kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"

namespace gnio::nettest {

// Frames a kernel takes from its queue at a time.
inline constexpr uint32_t kE2eBurst = 32;

// RX queue 0 of `dev` driven by `gpu` (1024 strides of 2048 bytes, bursts
// of kE2eBurst, its ring in `mem`), started, and its kernel handle.
struct E2eRxq {
  EthRxq rxq;
  GpuRxq grxq;  // after rxq: released before it
};

inline Result<E2eRxq> open_e2e_rxq(EthDevice& dev, const Gpu& gpu, RingMem mem) {
  auto rxq = dev.create_rxq(0);
  if (!rxq) return rxq.status();
  for (Status s : {rxq->set_num_strides(1024), rxq->set_stride_size(2048), rxq->set_burst_size(kE2eBurst),
                   rxq->set_ring_mem(mem), rxq->set_gpu(gpu), rxq->start()})
    if (!s.is_ok()) return s;
  auto grxq = GpuRxq::create(gpu, *rxq);
  if (!grxq) return grxq.status();
  return E2eRxq{std::move(*rxq), std::move(*grxq)};
}

// TX queue 0 of `dev` driven by `gpu` (1024 descriptors), started, and its
// kernel handle.
struct E2eTxq {
  EthTxq txq;
  GpuTxq gtxq;  // after txq: released before it
};

inline Result<E2eTxq> open_e2e_txq(EthDevice& dev, const Gpu& gpu) {
  auto txq = dev.create_txq(0);
  if (!txq) return txq.status();
  for (Status s : {txq->set_depth(1024), txq->set_gpu(gpu), txq->start()})
    if (!s.is_ok()) return s;
  auto gtxq = GpuTxq::create(gpu, *txq);
  if (!gtxq) return gtxq.status();
  return E2eTxq{std::move(*txq), std::move(*gtxq)};
}

// One block per kernel: a thread on the emulated device, 128 on a GPU.
inline LaunchConfig e2e_launch_config(const Gpu& gpu, const char* name) {
  LaunchConfig cfg;
  cfg.block = gpu.emulated() ? 1u : 128u;
  cfg.name = name;
  return cfg;
}

// A persistent ReceiveKernel on one queue and the totals it counts into
// (GpuCpu memory, which the host reads once the kernel stopped).
struct ReceiveCounting {
  DeviceMemory totals;
  PersistentKernel kernel;  // after totals: stopped before they are freed

  examples::ReceiveTotals counted() const { return *static_cast<const examples::ReceiveTotals*>(totals.host_ptr()); }
};

inline Result<ReceiveCounting> launch_receive_counting(Gpu& gpu, const GpuRxq& grxq, const char* name) {
  auto totals = gpu.alloc(sizeof(examples::ReceiveTotals), MemKind::GpuCpu);
  if (!totals) return totals.status();
  auto kernel = PersistentKernel::launch(
      gpu, e2e_launch_config(gpu, name),
      examples::ReceiveKernel<Scope::Block>{examples::RxQueueSet::of(grxq.handle()),
                                            static_cast<examples::ReceiveTotals*>(totals->device_ptr()), kE2eBurst});
  if (!kernel) return kernel.status();
  return ReceiveCounting{std::move(*totals), std::move(*kernel)};
}

// A persistent EchoKernel from one RX queue to one TX queue.
inline Result<PersistentKernel> launch_echo(const Gpu& gpu, const GpuRxq& grxq, const GpuTxq& gtxq, const char* name) {
  return PersistentKernel::launch(gpu, e2e_launch_config(gpu, name),
                                  examples::EchoKernel<Scope::Block>{grxq.handle(), gtxq.handle(), kE2eBurst});
}

}  // namespace gnio::nettest
