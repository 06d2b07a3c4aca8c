// SPDX-License-Identifier: Apache-2.0
// TX frame sizes and drops on the dpdk backend (net_ring, whose TX enqueues
// into the ring the test reads): the queue's default max packet size is the
// backend's (the mbuf frame=, within the port's max_rx_pktlen), a kernel's
// fill it cannot send is refused on the device, every descriptor pushed is
// sent or dropped for a reason (sent + sum(dropped) == submitted, exact per
// reason), and the frames counted as sent are the ones in the ring, whole.
// GNIO_TEST_GPU picks the device (cpu: the emulated one; auto: a CUDA GPU,
// skipped without one).
#include <gtest/gtest.h>

#include <string>

#include "../core/test_support.hpp"
#include "gnio/eth.hpp"
#include "ring_inject.hpp"
#include "tx_refusals.hpp"

namespace gnio {
namespace {

struct TxDropsParam {
  const char* port;  // a net_ring vdev of its own per frame size
  uint32_t frame;    // mbuf data room (frame=)
};

class DpdkTxDrops : public ::testing::TestWithParam<TxDropsParam> {};

TEST_P(DpdkTxDrops, EveryDescriptorIsSentOrDroppedForAReasonAndTheRingGetsEachSentFrame) {
  GNIO_OPEN_TEST_GPU(gpu);
  const TxDropsParam p = GetParam();
  const std::string spec = std::string("dpdk:") + p.port + ",mbufs=2048,frame=" + std::to_string(p.frame);
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value()) << spec << ": " << dev.status().to_string();
  EXPECT_EQ(dev->caps().max_packet_size, p.frame) << spec << ": net_ring takes any length";
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(txq.has_value()) << txq.status().to_string();
  EXPECT_EQ(txq->max_packet_size(), dev->caps().max_packet_size) << spec;
  ASSERT_TRUE(txq->set_depth(64));
  ASSERT_TRUE(txq->set_gpu(gpu));
  ASSERT_TRUE(txq->start());
  const uint32_t max = txq->max_packet_size(), slot = txq->staging_slot_size();

  auto statuses = tx_test::run_refusals(gpu, *txq);
  ASSERT_TRUE(statuses.has_value()) << statuses.status().to_string();
  const tx_test::RefusalExpectation want = tx_test::expect_refusals(max, slot);
  tx_test::expect_accounted(*statuses, txq->stats(), want, max, slot);
  // The queue stopped: everything it sent is in the ring.
  tx_test::expect_frames(dpdktest::drain_frames(std::string("ETH_RXTX0_") + p.port), want);
  ASSERT_TRUE(txq->destroy());
}

// The default frame (a 9000-byte frame is too long) and the largest (9000
// bytes go, 64 KiB do not).
INSTANTIATE_TEST_SUITE_P(FrameSizes, DpdkTxDrops,
                         ::testing::Values(TxDropsParam{"net_ring1", 2048}, TxDropsParam{"net_ring2", 9216}),
                         [](const auto& info) { return "frame" + std::to_string(info.param.frame); });

}  // namespace
}  // namespace gnio
