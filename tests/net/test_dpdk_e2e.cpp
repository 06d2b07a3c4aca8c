// SPDX-License-Identifier: Apache-2.0
// End to end through DPDK's net_af_xdp on a veth pair: live traffic of the
// peer's kernel stack, the dpdk backend (the RX queue's region is the XDP
// socket's UMEM), the NIC engine (frames read in place with mem=host,
// copied in batches with mem=gpu), a persistent kernel, and back out
// through the TX queue. GNIO_TEST_GPU picks the device (cpu: the emulated
// one; auto: a CUDA GPU, skipped without one).
#include <chrono>
#include <string>

#include "../core/test_support.hpp"
#include "e2e_rig.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "net_fixture.hpp"

namespace gnio::nettest {
namespace {

constexpr uint16_t kPort = 7777;

class DpdkAfXdpE2e : public VethFixture<::testing::TestWithParam<const char*>> {
 protected:
  void SetUp() override {
    if (auto refused = xdp_sockets_refused()) GTEST_SKIP() << *refused;
    make_veth(1);
  }

  static std::string spec() {
    return std::string("dpdk:\"net_af_xdp0,iface=") + kDutIf + ",start_queue=0,queue_count=1\"";
  }
  RingMem mem() const { return std::string(GetParam()) == "host" ? RingMem::Host : RingMem::Gpu; }
};

// Every datagram the peer sends is counted by the persistent kernel, with
// its exact frame length, and none is dropped on the way.
TEST_P(DpdkAfXdpE2e, PersistentKernelReceivesPeerUdpExactly) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open(spec());
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto rx = open_e2e_rxq(*dev, gpu, mem());
  ASSERT_TRUE(rx.has_value()) << rx.status().to_string();
  RxqStats st;
  ASSERT_NO_FATAL_FAILURE(receive_peer_udp_exactly(gpu, *rx, *veth_, kPort, 2000, "dpdk_af_xdp_receive", st));
  EXPECT_TRUE(rx->rxq.source_status().is_ok()) << rx->rxq.source_status().to_string();
  ASSERT_TRUE(rx->grxq.destroy().is_ok());
  ASSERT_TRUE(rx->rxq.destroy().is_ok());
}

// The persistent kernel swaps addresses in place and sends every datagram
// back out through the port's TX queue: the peer's connected UDP socket
// gets each of its datagrams back, byte for byte.
TEST_P(DpdkAfXdpE2e, PersistentKernelEchoesPeerUdp) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open(spec());
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  ASSERT_NO_FATAL_FAILURE(echo_peer_udp_exactly(gpu, *dev, mem(), *veth_, kPort, 1000, 16, "dpdk_af_xdp_echo"));
}

INSTANTIATE_TEST_SUITE_P(RingMemory, DpdkAfXdpE2e, ::testing::Values("host", "gpu"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace gnio::nettest
