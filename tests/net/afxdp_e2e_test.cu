// End to end: live traffic of the peer's kernel stack through the afxdp
// backend, the NIC engine (frames read in place from the UMEM with
// mem=host, copied in batches with mem=gpu) and a persistent kernel, and
// back out through the TX queue. GNIO_TEST_GPU picks the device (cpu: the
// emulated one; auto: a CUDA GPU, skipped without one). Namespaces and the
// veth pair are made over rtnetlink and traffic comes from sockets of the
// test itself, so this runs where iproute2 and ping are not installed.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "../core/test_support.hpp"
#include "common/kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "net_fixture.hpp"

namespace gnio::nettest {
namespace {

using Clock = std::chrono::steady_clock;
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
  auto rxq = dev->create_rxq(0);
  ASSERT_TRUE(rxq.has_value()) << rxq.status().to_string();
  for (Status s : {rxq->set_num_strides(1024), rxq->set_stride_size(2048), rxq->set_burst_size(32),
                   rxq->set_ring_mem(mem()), rxq->set_gpu(gpu), rxq->start()})
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  auto grxq = GpuRxq::create(gpu, *rxq);
  ASSERT_TRUE(grxq.has_value()) << grxq.status().to_string();
  auto totals = gpu.alloc(sizeof(examples::ReceiveTotals), MemKind::GpuCpu);
  ASSERT_TRUE(totals.has_value()) << totals.status().to_string();
  LaunchConfig cfg;
  cfg.block = gpu.emulated() ? 1u : 128u;
  cfg.name = "afxdp_receive";
  auto kernel = PersistentKernel::launch(
      gpu, cfg,
      examples::ReceiveKernel<Scope::Block>{examples::RxQueueSet::of(grxq->handle()),
                                            static_cast<examples::ReceiveTotals*>(totals->device_ptr()), 32});
  ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();

  constexpr uint32_t kCount = 2000;
  uint64_t frame_bytes = 0;
  Status sender = send_peer_udp_paced(*veth_, kPort, kCount, *rxq, frame_bytes);
  ASSERT_TRUE(sender.is_ok()) << sender.to_string();
  EXPECT_TRUE(test::eventually([&] { return rxq->stats().released >= kCount; }, std::chrono::seconds(10)));
  ASSERT_TRUE(kernel->stop().is_ok());
  const auto t = *static_cast<const examples::ReceiveTotals*>(totals->host_ptr());
  const RxqStats st = rxq->stats();
  EXPECT_EQ(t.packets, kCount);
  EXPECT_EQ(t.bytes, frame_bytes);
  EXPECT_EQ(t.bad_release, 0u);
  EXPECT_EQ(st.packets, kCount);
  EXPECT_EQ(st.rx_missed, 0u);
  EXPECT_TRUE(rxq->source_status().is_ok()) << rxq->source_status().to_string();
  ASSERT_TRUE(grxq->destroy().is_ok());
  ASSERT_TRUE(rxq->destroy().is_ok());
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
  auto rxq = dev->create_rxq(0);
  ASSERT_TRUE(rxq.has_value()) << rxq.status().to_string();
  for (Status s : {rxq->set_num_strides(1024), rxq->set_stride_size(2048), rxq->set_burst_size(32),
                   rxq->set_ring_mem(mem()), rxq->set_gpu(gpu), rxq->start()})
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(txq.has_value()) << txq.status().to_string();
  for (Status s : {txq->set_depth(1024), txq->set_gpu(gpu), txq->start()}) ASSERT_TRUE(s.is_ok()) << s.to_string();
  auto grxq = GpuRxq::create(gpu, *rxq);
  ASSERT_TRUE(grxq.has_value()) << grxq.status().to_string();
  auto gtxq = GpuTxq::create(gpu, *txq);
  ASSERT_TRUE(gtxq.has_value()) << gtxq.status().to_string();
  LaunchConfig cfg;
  cfg.block = gpu.emulated() ? 1u : 128u;
  cfg.name = "afxdp_echo";
  auto kernel =
      PersistentKernel::launch(gpu, cfg, examples::EchoKernel<Scope::Block>{grxq->handle(), gtxq->handle(), 32});
  ASSERT_TRUE(kernel.has_value()) << kernel.status().to_string();

  constexpr uint32_t kCount = 1000, kWindow = 16;
  uint32_t echoed = 0, wrong = 0;
  Status peer = veth_->peer.run([&]() -> Status {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(kPort);
    inet_pton(AF_INET, kDutIp, &to.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0)
      return Status(Errc::IoError, Layer::App, std::string("connect: ") + std::strerror(errno));
    timeval tv{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::vector<uint8_t> buf(2048);
    uint32_t sent = 0;
    while (echoed < kCount) {
      while (sent < kCount && sent < echoed + kWindow) {
        auto p = test_payload(sent, 18 + (sent * 131) % 1450);
        if (send(fd, p.data(), p.size(), 0) != static_cast<ssize_t>(p.size()))
          return Status(Errc::IoError, Layer::App, std::string("send: ") + std::strerror(errno));
        ++sent;
      }
      ssize_t n = recv(fd, buf.data(), buf.size(), 0);
      if (n < 0) break;  // a second without an echo: count what came
      if (std::vector<uint8_t>(buf.begin(), buf.begin() + n) != test_payload(echoed, 18 + (echoed * 131) % 1450))
        ++wrong;
      ++echoed;
    }
    close(fd);
    return Status::ok();
  });
  ASSERT_TRUE(peer.is_ok()) << peer.to_string();
  ASSERT_TRUE(kernel->stop().is_ok());
  EXPECT_EQ(echoed, kCount) << "rx packets " << rxq->stats().packets << ", tx packets " << txq->stats().packets;
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(txq->stats().errors, 0u);
  for (Status s : {gtxq->destroy(), grxq->destroy(), txq->destroy(), rxq->destroy()})
    EXPECT_TRUE(s.is_ok()) << s.to_string();
}

INSTANTIATE_TEST_SUITE_P(ModesAndMemory, AfxdpE2e,
                         ::testing::Values(E2eParam{"skb", "host"}, E2eParam{"skb", "gpu"}, E2eParam{"drv", "host"},
                                           E2eParam{"drv", "gpu"}),
                         [](const auto& info) { return std::string(info.param.mode) + "_" + info.param.mem; });

}  // namespace
}  // namespace gnio::nettest
