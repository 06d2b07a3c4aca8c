// SPDX-License-Identifier: Apache-2.0
// What the end-to-end net tests set up alike around their persistent
// kernels: the queues, configured one way; the kernels are
// tests/support/e2e_kernels.hpp's.
#pragma once

#include <utility>

#include "e2e_kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"

namespace gnio::nettest {

using e2e_test::kE2eBurst;
using e2e_test::launch_echo;
using e2e_test::launch_receive_counting;
using e2e_test::ReceiveCounting;

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

}  // namespace gnio::nettest
