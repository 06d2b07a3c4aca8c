// SPDX-License-Identifier: Apache-2.0
// What the end-to-end net tests set up alike around their persistent
// kernels: the queues, configured one way; the kernels are
// tests/support/e2e_kernels.hpp's.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <utility>

#include "../core/test_support.hpp"
#include "e2e_kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "net_fixture.hpp"

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

// The peer sends `count` paced UDP datagrams to `port`; the receive kernel
// (named `kernel_name`) must count each once with its exact frame length,
// and the queue none missed. Leaves the queue's stats in `st` for the
// driver's own checks; use with ASSERT_NO_FATAL_FAILURE.
inline void receive_peer_udp_exactly(Gpu& gpu, E2eRxq& rx, const VethPair& veth, uint16_t port, uint32_t count,
                                     const char* kernel_name, RxqStats& st) {
  auto counting = launch_receive_counting(gpu, rx.grxq, kernel_name);
  ASSERT_TRUE(counting.has_value()) << counting.status().to_string();
  uint64_t frame_bytes = 0;
  Status sender = send_peer_udp_paced(veth, port, count, rx.rxq, frame_bytes);
  ASSERT_TRUE(sender.is_ok()) << sender.to_string();
  EXPECT_TRUE(test::eventually([&] { return rx.rxq.stats().released >= count; }, std::chrono::seconds(10)));
  ASSERT_TRUE(counting->kernel.stop().is_ok());
  const dev::ReceiveTotals t = counting->counted();
  st = rx.rxq.stats();
  EXPECT_EQ(t.packets, count);
  EXPECT_EQ(t.bytes, frame_bytes);
  EXPECT_EQ(t.bad_release, 0u);
  EXPECT_EQ(st.packets, count);
  EXPECT_EQ(st.rx_missed, 0u);
}

// The echo kernel (named `kernel_name`) on RX and TX queue 0 of `dev`: the
// peer sends `count` UDP datagrams to `port`, `window` in flight, and must
// get each back byte for byte, with no TX error; the handles and queues
// are torn down after. Use with ASSERT_NO_FATAL_FAILURE.
inline void echo_peer_udp_exactly(Gpu& gpu, EthDevice& dev, RingMem mem, const VethPair& veth, uint16_t port,
                                  uint32_t count, uint32_t window, const char* kernel_name) {
  auto rx = open_e2e_rxq(dev, gpu, mem);
  ASSERT_TRUE(rx.has_value()) << rx.status().to_string();
  auto tx = open_e2e_txq(dev, gpu);
  ASSERT_TRUE(tx.has_value()) << tx.status().to_string();
  auto kernel = launch_echo(gpu, rx->grxq, tx->gtxq, kernel_name);
  ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();
  uint32_t echoed = 0, wrong = 0;
  Status peer = echo_peer_udp(veth, port, count, window, echoed, wrong);
  ASSERT_TRUE(peer.is_ok()) << peer.to_string();
  ASSERT_TRUE(kernel->stop().is_ok());
  EXPECT_EQ(echoed, count) << "rx packets " << rx->rxq.stats().packets << ", tx packets " << tx->txq.stats().packets;
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(tx->txq.stats().errors, 0u);
  for (Status s : {tx->gtxq.destroy(), rx->grxq.destroy(), tx->txq.destroy(), rx->rxq.destroy()})
    EXPECT_TRUE(s.is_ok()) << s.to_string();
}

}  // namespace gnio::nettest
