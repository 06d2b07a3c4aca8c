// SPDX-License-Identifier: Apache-2.0
// The dpdk backend on a veth pair through DPDK's kernel-socket PMDs
// (net_af_packet; net_af_xdp, its UMEM in gnio's region), driven by hand
// (rx_burst, rx_release, tx_burst), against traffic of the kernel stack in
// the peer namespace.
#include <arpa/inet.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "backends/backend.hpp"
#include "gnio/log.hpp"
#include "net_fixture.hpp"

namespace gnio::nettest {
namespace {

using backend::Backend;
using backend::RxFrame;
using backend::TxFrame;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kUdpPort = 7777;
// An address the dut's kernel does not own: only gnio answers for it.
constexpr const char* kGnioIp = "10.77.0.9";

class DpdkNetVeth : public VethFixture<::testing::Test> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(make_veth(1));
    if (IsSkipped()) return;
    Status s = veth_->peer.run([&] { return add_neighbor(kPeerIf, kGnioIp, veth_->dut_mac); });
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  }
  void TearDown() override {
    b_.reset();
    VethFixture::TearDown();
    EXPECT_FALSE(link_exists(kDutIf));
    EXPECT_FALSE(link_exists(kPeerIf));
  }

  std::unique_ptr<Backend> b_;
};

class DpdkNet : public DpdkNetVeth, public ::testing::WithParamInterface<std::string> {
 protected:
  // Closes the port and returns the line it logs as it closes.
  std::string closing_line() {
    std::string line;
    const auto level = logging::level();
    logging::set_level(logging::Level::Info);
    logging::set_sink([&](const logging::Event& e) {
      if (e.component == "dpdk" && e.message.find(" closes: ") != std::string_view::npos) line = e.message;
    });
    b_.reset();
    logging::set_sink({});
    logging::set_level(level);
    return line;
  }

  // dpdk:"net_af_packet0,iface=gx0" or
  // dpdk:"net_af_xdp0,iface=gx0,start_queue=0,queue_count=1", opened in the
  // dut namespace.
  void open() {
    const bool af_xdp = GetParam() == "net_af_xdp";
    if (af_xdp) {
      if (auto refused = xdp_sockets_refused()) GTEST_SKIP() << *refused;
    }
    const std::string spec = "dpdk:\"" + GetParam() + "0,iface=" + kDutIf +
                             (af_xdp ? ",start_queue=0,queue_count=1" : "") + "\"";
    auto b = backend::open_backend(spec);
    ASSERT_TRUE(b.has_value()) << spec << ": " << b.status().to_string();
    b_ = std::move(*b);
  }
};

// Every datagram the peer sends arrives once, in order, with its exact
// bytes, inside the queue's rx_memory().
TEST_P(DpdkNet, ReceivesPeerUdpExactly) {
  ASSERT_NO_FATAL_FAILURE(open());
  if (IsSkipped()) return;
  const auto mem = b_->rx_memory(0);
  ASSERT_TRUE(mem.has_value());
  constexpr uint32_t kCount = 2000;
  std::atomic<uint32_t> received{0};
  uint64_t sent_bytes = 0;
  Status sender_status;
  std::thread sender([&] {
    sender_status = veth_->peer.run([&]() -> Status {
      int fd = socket(AF_INET, SOCK_DGRAM, 0);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(kUdpPort);
      inet_pton(AF_INET, kDutIp, &to.sin_addr);
      for (uint32_t i = 0; i < kCount; ++i) {
        // A window: a wire has no flow control, and the PMD's socket ring is small.
        const auto until = Clock::now() + std::chrono::seconds(5);
        while (received.load() + 64 < i)
          if (Clock::now() > until) {
            close(fd);
            return Status(Errc::Timeout, Layer::App,
                          "gnio received " + std::to_string(received.load()) + " of " + std::to_string(i) +
                              " datagrams and nothing more for 5 s");
          }
        auto p = test_payload(i, 18 + (i * 131) % 1450);
        if (sendto(fd, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) !=
            static_cast<ssize_t>(p.size())) {
          close(fd);
          return Status(Errc::IoError, Layer::App, std::string("sendto: ") + std::strerror(errno));
        }
        sent_bytes += p.size();
      }
      close(fd);
      return Status::ok();
    });
  });
  std::vector<RxFrame> burst(32);
  uint32_t wrong = 0;
  uint64_t bytes = 0, frame_bytes = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (received.load() < kCount && Clock::now() < deadline) {
    auto n = b_->rx_burst(0, burst);
    ASSERT_TRUE(n.has_value()) << n.status().to_string();
    for (size_t i = 0; i < *n; ++i) {
      ASSERT_GE(burst[i].data, mem->base);
      ASSERT_LE(burst[i].data + burst[i].len, mem->base + mem->bytes);
      auto p = udp_payload(burst[i].data, burst[i].len, kUdpPort);
      if (!p) continue;  // ARP, the kernel's ICMP port unreachable, ...
      const uint32_t seq = received.load();
      if (*p != test_payload(seq, 18 + (seq * 131) % 1450)) ++wrong;
      bytes += p->size();
      frame_bytes += burst[i].len;
      received.fetch_add(1);
    }
    b_->rx_release(0, std::span<const RxFrame>(burst.data(), *n));
    if (*n == 0) std::this_thread::yield();
  }
  sender.join();
  ASSERT_TRUE(sender_status.is_ok()) << sender_status.to_string();
  EXPECT_EQ(received.load(), kCount);
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(bytes, sent_bytes);
  EXPECT_EQ(frame_bytes, sent_bytes + 42ull * kCount) << "Ethernet + IPv4 + UDP headers around each payload";

  // The port's closing line: the PMD wrote every frame into gnio's region
  // (net_af_xdp: the region is the UMEM), so the module copied none.
  const std::string closing = closing_line();
  ASSERT_NE(closing.find(" closes: RX "), std::string::npos) << closing;
  unsigned long long ipackets = 0, ibytes = 0, copied = 1;
  ASSERT_EQ(std::sscanf(closing.c_str() + closing.find(" closes: RX "), " closes: RX %llu frames %llu bytes, %llu copied",
                        &ipackets, &ibytes, &copied),
            3)
      << closing;
  EXPECT_GE(ipackets, kCount) << closing;
  EXPECT_GE(ibytes, frame_bytes) << closing;
  EXPECT_EQ(copied, 0u) << closing;
}

// The system's ping from the peer to an address only gnio answers: each
// echo request becomes its reply in place and leaves through tx_burst.
TEST_P(DpdkNet, AnswersPingFromThePeer) {
  ASSERT_NO_FATAL_FAILURE(open());
  if (IsSkipped()) return;
  if (access("/usr/bin/ping", X_OK) != 0 && access("/bin/ping", X_OK) != 0) GTEST_SKIP() << "no ping installed";
  std::atomic<bool> done{false};
  int ping_rc = -1;
  std::thread peer([&] {
    pid_t pid = fork();
    if (pid == 0) {
      if (setns(veth_->peer.fd(), CLONE_NEWNET) != 0) _exit(90);
      execlp("ping", "ping", "-c", "10", "-i", "0.2", "-W", "2", "-q", kGnioIp, static_cast<char*>(nullptr));
      _exit(91);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ping_rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    done = true;
  });
  std::vector<RxFrame> burst(32);
  uint32_t echoed = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!done && Clock::now() < deadline) {
    auto n = b_->rx_burst(0, burst);
    ASSERT_TRUE(n.has_value()) << n.status().to_string();
    std::vector<TxFrame> replies;
    for (size_t i = 0; i < *n; ++i) {
      auto* data = const_cast<uint8_t*>(burst[i].data);
      if (icmp_echo_to_reply(data, burst[i].len)) replies.push_back({data, burst[i].len, 0});
    }
    size_t sent = 0;
    while (sent < replies.size() && Clock::now() < deadline) {
      auto k = b_->tx_burst(0, std::span(replies).subspan(sent));
      ASSERT_TRUE(k.has_value()) << k.status().to_string();
      sent += *k;
    }
    echoed += static_cast<uint32_t>(sent);
    b_->rx_release(0, std::span<const RxFrame>(burst.data(), *n));  // TX copied them
    if (*n == 0) std::this_thread::yield();
  }
  peer.join();
  EXPECT_EQ(ping_rc, 0) << "ping from the peer namespace got no full set of replies";
  EXPECT_EQ(echoed, 10u) << "echo requests answered";

  // The PMD's own TX counters: ten replies of 98 bytes (Ethernet 14, IPv4
  // 20, ICMP 8, ping's 56 bytes of data), no errors.
  const std::string closing = closing_line();
  ASSERT_NE(closing.find("; TX "), std::string::npos) << closing;
  unsigned long long opackets = 0, obytes = 0, oerrors = 1;
  ASSERT_EQ(std::sscanf(closing.c_str() + closing.find("; TX "), "; TX %llu frames %llu bytes, %llu errors", &opackets,
                        &obytes, &oerrors),
            3)
      << closing;
  EXPECT_EQ(opackets, 10u) << closing;
  EXPECT_EQ(obytes, 980u) << closing;
  EXPECT_EQ(oerrors, 0u) << closing;
}

// Two queues (net_af_packet's qpairs: the kernel's fanout hash spreads
// flows): every datagram of every flow arrives, each flow on one queue only,
// each queue's frames inside that queue's own rx_memory().
using DpdkNetAfPacket = DpdkNetVeth;
TEST_F(DpdkNetAfPacket, SpreadsFlowsOverTwoQueuesOneQueuePerFlow) {
  constexpr uint32_t kQueues = 2, kFlows = 16, kPerFlow = 40;
  const std::string spec = "dpdk:\"net_af_packet0,iface=" + std::string(kDutIf) + ",qpairs=2\",queues=2";
  auto opened = backend::open_backend(spec);
  ASSERT_TRUE(opened.has_value()) << spec << ": " << opened.status().to_string();
  b_ = std::move(*opened);
  ASSERT_EQ(b_->caps().max_rx_queues, kQueues);
  std::atomic<uint32_t> received{0};
  Status sender_status;
  std::thread sender([&] {
    sender_status = veth_->peer.run([&]() -> Status {
      std::vector<int> fds;
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(kUdpPort);
      inet_pton(AF_INET, kDutIp, &to.sin_addr);
      for (uint32_t f = 0; f < kFlows; ++f) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        sockaddr_in from{};
        from.sin_family = AF_INET;
        from.sin_port = htons(static_cast<uint16_t>(20000 + f));
        if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0)
          return Status(Errc::IoError, Layer::App, std::string("bind: ") + std::strerror(errno));
        fds.push_back(fd);
      }
      for (uint32_t i = 0; i < kPerFlow; ++i)
        for (uint32_t f = 0; f < kFlows; ++f) {
          const uint32_t n = i * kFlows + f;
          const auto until = Clock::now() + std::chrono::seconds(5);
          while (received.load() + 64 < n)
            if (Clock::now() > until) return Status(Errc::Timeout, Layer::App, "receiver stalled");
          auto p = test_payload(n, 100);
          sendto(fds[f], p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
        }
      for (int fd : fds) close(fd);
      return Status::ok();
    });
  });
  std::vector<std::set<uint16_t>> queues_of_flow(kFlows);
  std::vector<uint32_t> per_queue(kQueues, 0);
  std::vector<RxFrame> burst(32);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (received.load() < kFlows * kPerFlow && Clock::now() < deadline) {
    bool any = false;
    for (uint16_t q = 0; q < kQueues; ++q) {
      const auto mem = b_->rx_memory(q);
      ASSERT_TRUE(mem.has_value());
      auto n = b_->rx_burst(q, burst);
      ASSERT_TRUE(n.has_value()) << n.status().to_string();
      any |= *n > 0;
      for (size_t i = 0; i < *n; ++i) {
        ASSERT_GE(burst[i].data, mem->base) << "queue " << q;
        ASSERT_LE(burst[i].data + burst[i].len, mem->base + mem->bytes) << "queue " << q;
        uint16_t sport = 0;
        if (!udp_payload(burst[i].data, burst[i].len, kUdpPort, &sport)) continue;
        ASSERT_GE(sport, 20000);
        ASSERT_LT(sport, 20000 + kFlows);
        queues_of_flow[sport - 20000].insert(q);
        ++per_queue[q];
        received.fetch_add(1);
      }
      b_->rx_release(q, std::span<const RxFrame>(burst.data(), *n));
    }
    if (!any) std::this_thread::yield();
  }
  sender.join();
  ASSERT_TRUE(sender_status.is_ok()) << sender_status.to_string();
  EXPECT_EQ(received.load(), kFlows * kPerFlow);
  for (uint32_t f = 0; f < kFlows; ++f) EXPECT_EQ(queues_of_flow[f].size(), 1u) << "flow " << f << " on several queues";
  for (uint32_t q = 0; q < kQueues; ++q) EXPECT_GT(per_queue[q], 0u) << "queue " << q << " got no flow of 16";
}

// net_af_xdp: an mbuf is one UMEM chunk, which cannot span two pages, and
// the kernel keeps XDP's 256 bytes of headroom inside the data room. The
// same interface queue takes a new port after one closed (DPDK 22.11 left
// its XDP socket bound; the module closes it).
using DpdkNetAfXdp = DpdkNetVeth;
TEST_F(DpdkNetAfXdp, FrameLimitsFollowTheUmemChunk) {
  if (auto refused = xdp_sockets_refused()) GTEST_SKIP() << *refused;
  if (sysconf(_SC_PAGESIZE) != 4096) GTEST_SKIP() << "the limits below are those of 4 KiB pages";
  const std::string port = "dpdk:\"net_af_xdp0,iface=" + std::string(kDutIf) + "\"";
  auto big = backend::open_backend(port + ",frame=3777");
  ASSERT_FALSE(big.has_value());
  EXPECT_NE(big.status().message().find("use frame=3776 or less"), std::string::npos) << big.status().to_string();
  // The refused port was removed: the same device opens again.
  auto fits = backend::open_backend(port + ",frame=3776");
  ASSERT_TRUE(fits.has_value()) << fits.status().to_string();
  EXPECT_EQ((*fits)->caps().max_packet_size, 3776u - 256u);
  fits->reset();
  auto standard = backend::open_backend(port);
  ASSERT_TRUE(standard.has_value()) << standard.status().to_string();
  EXPECT_EQ((*standard)->caps().max_packet_size, 2048u - 256u);
}

INSTANTIATE_TEST_SUITE_P(Pmd, DpdkNet, ::testing::Values("net_af_packet", "net_af_xdp"),
                         [](const auto& info) { return info.param.substr(4); });

}  // namespace
}  // namespace gnio::nettest
