// SPDX-License-Identifier: Apache-2.0
// TX frame sizes and drops on the afxdp backend: the queue's default max
// packet size is the backend's (the longest frame the link takes: MTU plus
// an Ethernet header and a VLAN tag, within a UMEM frame less the kernel's
// headroom), a kernel's fill it cannot send is refused on the device, every
// descriptor pushed is sent or dropped for a reason (sent + sum(dropped) ==
// submitted, exact per reason), and every frame counted as sent reaches the
// peer end of the veth pair whole (an AF_PACKET socket in the peer
// namespace). GNIO_TEST_GPU picks the device.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../core/test_support.hpp"
#include "gnio/eth.hpp"
#include "net_fixture.hpp"
#include "tx_refusals.hpp"

namespace gnio::nettest {
namespace {

using tx_test::Bytes;

// The refusal kernel's frames start with refusal_byte(0..13): an
// EtherType (bytes 12-13) nothing else on the pair sends.
bool is_refusal_frame(const uint8_t* f, size_t len) {
  if (len < ETH_HLEN) return false;
  for (uint32_t j = 0; j < ETH_HLEN; ++j)
    if (f[j] != tx_test::refusal_byte(j)) return false;
  return true;
}

// Frames arriving on the peer's end of the pair, as its kernel hands them
// to an AF_PACKET socket (frames the peer sends itself left out).
class PeerCapture {
 public:
  explicit PeerCapture(const VethPair& v) {
    thread_ = std::thread([this, &v] {
      status_ = v.peer.run([this] { return capture(); });
      ready_ = true;  // also when the socket could not be made
    });
    while (!ready_) std::this_thread::yield();
  }
  ~PeerCapture() { stop(); }

  /// Stops capturing; what the socket could not do, if anything.
  Status stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return status_;
  }

  std::vector<Bytes> frames() const {
    std::lock_guard lock(mu_);
    return frames_;
  }

 private:
  Status capture() {
    const int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) return Status(Errc::IoError, Layer::App, std::string("socket(AF_PACKET): ") + std::strerror(errno));
    int big = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    timeval tv{0, 50000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_ll at{};
    at.sll_family = AF_PACKET;
    at.sll_protocol = htons(ETH_P_ALL);
    at.sll_ifindex = static_cast<int>(if_nametoindex(kPeerIf));
    if (at.sll_ifindex == 0 || bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
      const int err = errno;
      close(fd);
      return Status(Errc::IoError, Layer::App,
                    std::string("binding an AF_PACKET socket to ") + kPeerIf + ": " + std::strerror(err));
    }
    ready_ = true;
    std::vector<uint8_t> buf(70000);
    while (!stop_) {
      sockaddr_ll from{};
      socklen_t from_len = sizeof from;
      const ssize_t n = recvfrom(fd, buf.data(), buf.size(), MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0 || from.sll_pkttype == PACKET_OUTGOING || !is_refusal_frame(buf.data(), static_cast<size_t>(n)))
        continue;
      std::lock_guard lock(mu_);
      frames_.emplace_back(buf.begin(), buf.begin() + std::min<ssize_t>(n, static_cast<ssize_t>(buf.size())));
    }
    close(fd);
    return Status::ok();
  }

  std::thread thread_;
  std::atomic<bool> ready_{false}, stop_{false};
  Status status_;
  mutable std::mutex mu_;
  std::vector<Bytes> frames_;
};

struct TxDropsParam {
  const char* mode;  // afxdp mode
  uint32_t frame;    // UMEM frame bytes
  uint32_t mtu;      // of both ends of the pair
};

class AfxdpTxDrops : public VethFixture<::testing::TestWithParam<TxDropsParam>> {
 protected:
  void SetUp() override { make_veth(1); }
};

TEST_P(AfxdpTxDrops, EveryDescriptorIsSentOrDroppedForAReasonAndThePeerGetsEachSentFrame) {
  const TxDropsParam p = GetParam();
  ASSERT_TRUE(set_mtu(kDutIf, p.mtu).is_ok());
  Status peer_mtu = veth_->peer.run([&] { return set_mtu(kPeerIf, p.mtu); });
  ASSERT_TRUE(peer_mtu.is_ok()) << peer_mtu.to_string();
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string spec =
      std::string("afxdp:") + kDutIf + ",mode=" + p.mode + ",frame=" + std::to_string(p.frame);
  auto dev = EthDevice::open(spec);
  if (!dev && dev.status().code() == Errc::NotSupported) GTEST_SKIP() << dev.status().to_string();
  ASSERT_TRUE(dev.has_value()) << spec << ": " << dev.status().to_string();
  // A frame of MTU + 18 bytes (Ethernet header, one VLAN tag) is the longest
  // the link takes; the frame size allows more.
  const uint32_t link_max = p.mtu + 18;
  ASSERT_LE(link_max, p.frame - 256);
  EXPECT_EQ(dev->caps().max_packet_size, link_max) << spec;
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(txq.has_value()) << txq.status().to_string();
  EXPECT_EQ(txq->max_packet_size(), dev->caps().max_packet_size) << spec;
  ASSERT_TRUE(txq->set_depth(64));
  ASSERT_TRUE(txq->set_gpu(gpu));
  ASSERT_TRUE(txq->start());
  const uint32_t max = txq->max_packet_size(), slot = txq->staging_slot_size();

  PeerCapture peer(*veth_);
  auto statuses = tx_test::run_refusals(gpu, *txq);
  ASSERT_TRUE(statuses.has_value()) << statuses.status().to_string();
  const tx_test::RefusalExpectation want = tx_test::expect_refusals(max, slot);
  tx_test::expect_accounted(*statuses, txq->stats(), want, max, slot);

  EXPECT_TRUE(test::eventually([&] { return peer.frames().size() >= want.sent.size(); }, std::chrono::seconds(5)));
  // Anything late or twice would show as more frames than were sent.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Status captured = peer.stop();
  ASSERT_TRUE(captured.is_ok()) << captured.to_string();
  tx_test::expect_frames(peer.frames(), want);
  ASSERT_TRUE(txq->destroy());
}

// The pair's default MTU, and the largest MTU each frame size carries (a
// frame of the queue's max then fills a UMEM frame to its headroom); in drv
// mode veth takes no MTU over about 3500 (a page with its XDP headroom), so
// its larger frame size gets an MTU between the two limits.
INSTANTIATE_TEST_SUITE_P(ModesAndSizes, AfxdpTxDrops,
                         ::testing::Values(TxDropsParam{"skb", 2048, 1500}, TxDropsParam{"skb", 2048, 1774},
                                           TxDropsParam{"skb", 4096, 3822}, TxDropsParam{"drv", 2048, 1500},
                                           TxDropsParam{"drv", 4096, 3000}),
                         [](const auto& info) {
                           return std::string(info.param.mode) + "_frame" + std::to_string(info.param.frame) + "_mtu" +
                                  std::to_string(info.param.mtu);
                         });

}  // namespace
}  // namespace gnio::nettest
