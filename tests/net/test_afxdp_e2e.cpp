// SPDX-License-Identifier: Apache-2.0
// End to end: live traffic of the peer's kernel stack through the afxdp
// backend, the NIC engine (frames read in place from the UMEM with
// mem=host, copied in batches with mem=gpu) and a persistent kernel, and
// back out through the TX queue. GNIO_TEST_GPU picks the device (cpu: the
// emulated one; auto: a CUDA GPU, skipped without one). Namespaces and the
// veth pair are made over rtnetlink and traffic comes from sockets of the
// test itself, so this runs where iproute2 and ping are not installed.
#include <chrono>
#include <optional>
#include <string>

#include "../core/test_support.hpp"
#include "e2e_rig.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "net_fixture.hpp"

namespace gnio::nettest {
namespace {

constexpr uint16_t kPort = 7777;

struct E2eParam {
  const char* mode;  // afxdp mode
  const char* mem;   // RX ring memory
};

class AfxdpE2e : public VethFixture<::testing::TestWithParam<E2eParam>> {
 protected:
  void SetUp() override { make_veth(1); }

  std::string spec() const { return std::string("afxdp:") + kDutIf + ",mode=" + GetParam().mode; }
  RingMem mem() const { return std::string(GetParam().mem) == "host" ? RingMem::Host : RingMem::Gpu; }

  // Opens the device, or skips where the kernel refuses the mode.
  std::optional<EthDevice> open_device() {
    auto d = EthDevice::open(spec());
    if (!d && d.status().code() == Errc::NotSupported) {
      skipped_ = d.status().to_string();
      return std::nullopt;
    }
    EXPECT_TRUE(d.has_value()) << d.status().to_string();
    if (!d) return std::nullopt;
    return std::move(*d);
  }

  std::string skipped_;
};

// Every datagram the peer sends is counted by the persistent kernel, with
// its exact frame length, and none is dropped on the way.
TEST_P(AfxdpE2e, PersistentKernelReceivesPeerUdpExactly) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = open_device();
  if (!dev) {
    if (!skipped_.empty()) GTEST_SKIP() << skipped_;
    return;
  }
  auto rx = open_e2e_rxq(*dev, gpu, mem());
  ASSERT_TRUE(rx.has_value()) << rx.status().to_string();
  RxqStats st;
  ASSERT_NO_FATAL_FAILURE(receive_peer_udp_exactly(gpu, *rx, *veth_, kPort, 2000, "afxdp_receive", st));
  EXPECT_TRUE(rx->rxq.source_status().is_ok()) << rx->rxq.source_status().to_string();
  ASSERT_TRUE(rx->grxq.destroy().is_ok());
  ASSERT_TRUE(rx->rxq.destroy().is_ok());
}

// The persistent kernel swaps addresses in place and sends every datagram
// back out of the interface: the peer's connected UDP socket gets each of
// its datagrams back, byte for byte.
TEST_P(AfxdpE2e, PersistentKernelEchoesPeerUdp) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = open_device();
  if (!dev) {
    if (!skipped_.empty()) GTEST_SKIP() << skipped_;
    return;
  }
  ASSERT_NO_FATAL_FAILURE(echo_peer_udp_exactly(gpu, *dev, mem(), *veth_, kPort, 1000, 16, "afxdp_echo"));
}

INSTANTIATE_TEST_SUITE_P(ModesAndMemory, AfxdpE2e,
                         ::testing::Values(E2eParam{"skb", "host"}, E2eParam{"skb", "gpu"}, E2eParam{"drv", "host"},
                                           E2eParam{"drv", "gpu"}),
                         [](const auto& info) { return std::string(info.param.mode) + "_" + info.param.mem; });

}  // namespace
}  // namespace gnio::nettest
