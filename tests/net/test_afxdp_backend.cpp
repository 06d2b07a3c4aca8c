// SPDX-License-Identifier: Apache-2.0
// The afxdp backend on a veth pair, driven by hand (rx_burst, rx_release,
// tx_burst), against traffic of the kernel stack in a peer namespace.
#include <arpa/inet.h>
#include <netinet/ip_icmp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/afxdp/caps.hpp"
#include "backends/afxdp/iface.hpp"
#include "backends/backend.hpp"
#include "gnio/doctor.hpp"
#include "net_fixture.hpp"

namespace gnio::nettest {
namespace {

using backend::Backend;
using backend::RxFrame;
using backend::TxFrame;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kRxPort = 7777;
constexpr uint16_t kTxPort = 8888;

class AfxdpNet : public VethFixture<::testing::TestWithParam<std::string>> {
 protected:
  void make(uint32_t queues = 1) {
    baseline_fds_ = open_netns_fds();
    make_veth(queues);
  }

  // Opens the backend in the dut namespace; skips where the kernel refuses
  // the mode on veth.
  std::unique_ptr<Backend> open(const std::string& options) {
    const std::string spec = std::string("afxdp:") + kDutIf + ",mode=" + GetParam() + options;
    auto b = backend::open_backend(spec);
    if (!b) {
      if (b.status().code() == Errc::NotSupported) {
        skipped_ = "the kernel refuses " + spec + ": " + b.status().to_string();
        return nullptr;
      }
      ADD_FAILURE() << spec << ": " << b.status().to_string();
      return nullptr;
    }
    return std::move(*b);
  }

  void TearDown() override {
    VethFixture::TearDown();
    if (baseline_fds_ >= 0) {
      EXPECT_EQ(open_netns_fds(), baseline_fds_) << "a network namespace descriptor was left open";
    }
    // Nothing of the test leaked into the namespace the test started in.
    EXPECT_FALSE(link_exists(kDutIf));
    EXPECT_FALSE(link_exists(kPeerIf));
  }

  std::string skipped_;
  int baseline_fds_ = -1;
  std::atomic<uint32_t> received_{0};
};

// Waits until the receiver has counted all but `window` of `sent`; a
// Timeout status when it counted nothing more for 2 s (frames were lost).
Status wait_window(const std::atomic<uint32_t>& received, uint32_t sent, uint32_t window) {
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (received.load() + window < sent) {
    if (Clock::now() > deadline)
      return Status(Errc::Timeout, Layer::App,
                    "the receiver counted " + std::to_string(received.load()) + " of " + std::to_string(sent) +
                        " datagrams sent and nothing more for 2 s");
    usleep(50);
  }
  return Status::ok();
}

// A child process that opens a backend and holds it until it is killed.
struct Holder {
  pid_t pid = -1;
  bool opened = false;  // the child's open succeeded (it logs why not)
};

// Forks the holder of `spec` and waits until its open returned.
void hold_in_child(const std::string& spec, Holder& holder) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  holder.pid = fork();
  if (holder.pid == 0) {
    auto b = backend::open_backend(spec);
    char c = b ? 'y' : 'n';
    if (!b) fprintf(stderr, "child: %s\n", b.status().to_string().c_str());
    (void)!write(ready[1], &c, 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  holder.opened = c == 'y';
}

#define OPEN_OR_SKIP(var, options)            \
  auto var = open(options);                   \
  if (!var) {                                 \
    if (!skipped_.empty()) GTEST_SKIP() << skipped_; \
    return;                                   \
  }

// UDP datagrams of the peer's kernel stack arrive whole and in order, each
// frame inside the queue's UMEM; a small ring proves frames are recycled.
TEST_P(AfxdpNet, ReceivesPeerUdpExactly) {
  ASSERT_NO_FATAL_FAILURE(make());
  if (IsSkipped()) return;  // the kernel refuses network namespaces here
  OPEN_OR_SKIP(b, ",ring=64");
  auto mem = b->rx_memory(0);
  ASSERT_TRUE(mem.has_value());
  ASSERT_EQ(reinterpret_cast<uintptr_t>(mem->base) % 4096, 0u);

  constexpr uint32_t kCount = 600;
  uint64_t sent_bytes = 0;
  for (uint32_t i = 0; i < kCount; ++i) sent_bytes += 42 + std::max<uint32_t>(4, 1 + (i * 37) % 1400);
  std::atomic<int> sent{0};
  std::atomic<uint32_t>& received = received_;
  Status sender_status;
  std::thread sender([&] {
    sender_status = veth_->peer.run([&]() -> Status {
      int fd = socket(AF_INET, SOCK_DGRAM, 0);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(kRxPort);
      inet_pton(AF_INET, kDutIp, &to.sin_addr);
      for (uint32_t i = 0; i < kCount; ++i) {
        auto p = test_payload(i, 1 + (i * 37) % 1400);
        if (sendto(fd, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) !=
            static_cast<ssize_t>(p.size()))
          return Status(Errc::IoError, Layer::App, std::string("sendto: ") + std::strerror(errno));
        sent.fetch_add(1);
        // A wire has no flow control: the sender keeps at most a window in
        // flight, so that a busy test machine cannot empty the 64-frame ring.
        GNIO_TRY(wait_window(received, i + 1, 32));
      }
      close(fd);
      return Status::ok();
    });
  });

  std::vector<RxFrame> burst(32);
  uint32_t got = 0, other = 0;
  uint64_t bytes = 0;
  std::vector<std::string> mismatches;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (got < kCount && Clock::now() < deadline) {
    auto n = b->rx_burst(0, burst);
    ASSERT_TRUE(n.has_value()) << n.status().to_string();
    for (size_t i = 0; i < *n; ++i) {
      const RxFrame& f = burst[i];
      ASSERT_GE(f.data, mem->base);
      ASSERT_LE(f.data + f.len, mem->base + mem->bytes);
      ASSERT_EQ(f.cookie % 2048, 0u);
      ASSERT_EQ(static_cast<uint64_t>(f.data - mem->base) / 2048, f.cookie / 2048) << "frame outside its UMEM chunk";
      auto p = udp_payload(f.data, f.len, kRxPort);
      if (!p) {
        ++other;  // IPv6 router solicitations and the like
        continue;
      }
      if (*p != test_payload(got, 1 + (got * 37) % 1400) && mismatches.size() < 5)
        mismatches.push_back("datagram " + std::to_string(got) + " differs");
      ++got;
      received = got;
      bytes += f.len;
    }
    b->rx_release(0, std::span<const RxFrame>(burst.data(), *n));
    if (*n == 0) std::this_thread::yield();
  }
  sender.join();
  ASSERT_TRUE(sender_status.is_ok()) << sender_status.to_string();
  EXPECT_EQ(sent.load(), static_cast<int>(kCount));
  EXPECT_EQ(got, kCount) << "other frames: " << other;
  EXPECT_EQ(bytes, sent_bytes);
  EXPECT_TRUE(mismatches.empty()) << mismatches.front();
}

// Frames given to tx_burst reach the peer's UDP socket byte for byte.
TEST_P(AfxdpNet, SendsToPeerUdpExactly) {
  ASSERT_NO_FATAL_FAILURE(make());
  if (IsSkipped()) return;  // the kernel refuses network namespaces here
  OPEN_OR_SKIP(b, ",ring=128");

  constexpr uint32_t kCount = 500;
  std::atomic<bool> ready{false};
  uint32_t received = 0;
  uint64_t received_bytes = 0;
  uint32_t wrong = 0;
  Status receiver_status;
  std::thread receiver([&] {
    receiver_status = veth_->peer.run([&]() -> Status {
      int fd = socket(AF_INET, SOCK_DGRAM, 0);
      int big = 8 << 20;
      setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
      sockaddr_in at{};
      at.sin_family = AF_INET;
      at.sin_port = htons(kTxPort);
      if (bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0)
        return Status(Errc::IoError, Layer::App, std::string("bind: ") + std::strerror(errno));
      timeval tv{0, 200000};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ready = true;
      std::vector<uint8_t> buf(2048);
      const auto deadline = Clock::now() + std::chrono::seconds(10);
      while (received < kCount && Clock::now() < deadline) {
        ssize_t n = recv(fd, buf.data(), buf.size(), 0);
        if (n < 0) continue;
        buf.resize(static_cast<size_t>(n));
        if (buf != test_payload(received, 1 + (received * 53) % 1400)) ++wrong;
        buf.resize(2048);
        ++received;
        received_bytes += static_cast<uint64_t>(n);
      }
      close(fd);
      return Status::ok();
    });
  });
  while (!ready) std::this_thread::yield();

  std::vector<std::vector<uint8_t>> frames;
  uint64_t payload_bytes = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    auto p = test_payload(i, 1 + (i * 53) % 1400);
    payload_bytes += p.size();
    frames.push_back(udp_frame(*veth_, 40000, kTxPort, p));
  }
  size_t next = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (next < frames.size() && Clock::now() < deadline) {
    std::vector<TxFrame> burst;
    for (size_t i = next; i < std::min(frames.size(), next + 32); ++i)
      burst.push_back({frames[i].data(), static_cast<uint32_t>(frames[i].size()), 0});
    auto n = b->tx_burst(0, burst);
    ASSERT_TRUE(n.has_value()) << n.status().to_string();
    next += *n;
    if (*n == 0) usleep(100);
  }
  ASSERT_TRUE(b->flush().is_ok());
  receiver.join();
  ASSERT_TRUE(receiver_status.is_ok()) << receiver_status.to_string();
  EXPECT_EQ(next, frames.size());
  EXPECT_EQ(received, kCount);
  EXPECT_EQ(received_bytes, payload_bytes);
  EXPECT_EQ(wrong, 0u);
}

// Echo requests of the peer are answered from the UMEM: the request frame
// becomes the reply in place and goes out without a copy; the peer counts
// its replies (with ping where it is installed, and a raw ICMP socket).
uint32_t echo_until(Backend& b, const std::atomic<bool>& done) {
  std::vector<RxFrame> burst(32);
  uint32_t echoed = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (!done && Clock::now() < deadline) {
    auto n = b.rx_burst(0, burst);
    if (!n) {
      ADD_FAILURE() << n.status().to_string();
      return echoed;
    }
    std::vector<TxFrame> replies;
    for (size_t i = 0; i < *n; ++i) {
      auto* data = const_cast<uint8_t*>(burst[i].data);
      if (icmp_echo_to_reply(data, burst[i].len)) replies.push_back({data, burst[i].len, 0});
    }
    size_t sent = 0;
    while (sent < replies.size() && Clock::now() < deadline) {
      auto k = b.tx_burst(0, std::span(replies).subspan(sent));
      if (!k) {
        ADD_FAILURE() << k.status().to_string();
        return echoed;
      }
      sent += *k;
    }
    echoed += static_cast<uint32_t>(sent);
    // Released right away: frames still being sent stay out of the fill ring
    // until their completion.
    b.rx_release(0, std::span<const RxFrame>(burst.data(), *n));
    if (*n == 0) {
      (void)b.flush();
      std::this_thread::yield();
    }
  }
  return echoed;
}

TEST_P(AfxdpNet, AnswersPeerPingFromTheUmem) {
  ASSERT_NO_FATAL_FAILURE(make());
  if (IsSkipped()) return;  // the kernel refuses network namespaces here
  OPEN_OR_SKIP(b, "");
  std::atomic<bool> done{false};
  constexpr int kPings = 50;
  int replies = 0, ping_rc = -1;
  Status peer_status;
  std::thread peer([&] {
    peer_status = veth_->peer.run([&]() -> Status {
      int fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
      if (fd < 0) return Status(Errc::IoError, Layer::App, std::string("raw ICMP socket: ") + std::strerror(errno));
      timeval tv{0, 300000};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      inet_pton(AF_INET, kDutIp, &to.sin_addr);
      for (int seq = 0; seq < kPings; ++seq) {
        uint8_t req[64] = {8, 0, 0, 0, 0x12, 0x34, 0, static_cast<uint8_t>(seq)};
        for (int i = 8; i < 64; ++i) req[i] = static_cast<uint8_t>(seq + i);
        uint32_t sum = 0;
        for (int i = 0; i < 64; i += 2) sum += static_cast<uint32_t>(req[i] << 8 | req[i + 1]);
        while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
        req[2] = static_cast<uint8_t>(~sum >> 8);
        req[3] = static_cast<uint8_t>(~sum);
        sendto(fd, req, sizeof req, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
        uint8_t in[256];
        for (int tries = 0; tries < 5; ++tries) {
          ssize_t n = recv(fd, in, sizeof in, 0);
          if (n < 0) break;
          const uint32_t ihl = (in[0] & 0x0F) * 4u;
          if (n >= static_cast<ssize_t>(ihl + 64) && in[ihl] == 0 && in[ihl + 4] == 0x12 && in[ihl + 5] == 0x34 &&
              in[ihl + 7] == seq && std::memcmp(in + ihl + 8, req + 8, 56) == 0) {
            ++replies;
            break;
          }
        }
      }
      close(fd);
      // The system's ping too, where it is installed.
      if (access("/usr/bin/ping", X_OK) == 0 || access("/bin/ping", X_OK) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
          if (setns(veth_->peer.fd(), CLONE_NEWNET) != 0) _exit(90);
          execlp("ping", "ping", "-c", "5", "-i", "0.2", "-W", "2", "-q", kDutIp, static_cast<char*>(nullptr));
          _exit(91);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        ping_rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
      }
      return Status::ok();
    });
    done = true;
  });
  const uint32_t echoed = echo_until(*b, done);
  peer.join();
  ASSERT_TRUE(peer_status.is_ok()) << peer_status.to_string();
  EXPECT_EQ(replies, kPings);
  EXPECT_GE(echoed, static_cast<uint32_t>(kPings));
  if (ping_rc != -1) {
    EXPECT_EQ(ping_rc, 0) << "ping from the peer namespace got no full set of replies";
  }
}

// Several queues (busy polling on): the peer's flows spread over them,
// each flow on one queue.
TEST_P(AfxdpNet, SpreadsFlowsOverQueuesOneQueuePerFlow) {
  constexpr uint32_t kQueues = 4, kFlows = 16, kPerFlow = 40;
  ASSERT_NO_FATAL_FAILURE(make(kQueues));
  if (IsSkipped()) return;  // the kernel refuses network namespaces here
  OPEN_OR_SKIP(b, ",queues=4,ring=256,busy_poll=1");
  ASSERT_EQ(b->caps().max_rx_queues, kQueues);
  Status sender_status;
  std::thread sender([&] {
    sender_status = veth_->peer.run([&]() -> Status {
      std::vector<int> fds;
      for (uint32_t f = 0; f < kFlows; ++f) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(kRxPort);
        inet_pton(AF_INET, kDutIp, &to.sin_addr);
        if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0)
          return Status(Errc::IoError, Layer::App, std::string("connect: ") + std::strerror(errno));
        fds.push_back(fd);
      }
      for (uint32_t i = 0; i < kPerFlow; ++i) {
        for (uint32_t f = 0; f < kFlows; ++f) {
          auto p = test_payload(f * 1000 + i, 100);
          if (send(fds[f], p.data(), p.size(), 0) != 100)
            return Status(Errc::IoError, Layer::App, std::string("send: ") + std::strerror(errno));
        }
        GNIO_TRY(wait_window(received_, (i + 1) * kFlows, 2 * kFlows));
      }
      for (int fd : fds) close(fd);
      return Status::ok();
    });
  });
  std::map<uint16_t, std::set<uint16_t>> queues_of_flow;  // source port -> queues
  std::map<uint16_t, uint32_t> count_of_flow;
  uint32_t got = 0;
  std::vector<RxFrame> burst(32);
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (got < kFlows * kPerFlow && Clock::now() < deadline) {
    for (uint16_t q = 0; q < kQueues; ++q) {
      auto n = b->rx_burst(q, burst);
      ASSERT_TRUE(n.has_value()) << n.status().to_string();
      for (size_t i = 0; i < *n; ++i) {
        uint16_t sport = 0;
        if (!udp_payload(burst[i].data, burst[i].len, kRxPort, &sport)) continue;
        queues_of_flow[sport].insert(q);
        ++count_of_flow[sport];
        received_ = ++got;
      }
      b->rx_release(q, std::span<const RxFrame>(burst.data(), *n));
    }
  }
  sender.join();
  ASSERT_TRUE(sender_status.is_ok()) << sender_status.to_string();
  EXPECT_EQ(got, kFlows * kPerFlow);
  EXPECT_EQ(queues_of_flow.size(), kFlows);
  std::set<uint16_t> used;
  for (const auto& [port, qs] : queues_of_flow) {
    EXPECT_EQ(qs.size(), 1u) << "flow from port " << port << " arrived on " << qs.size() << " queues";
    EXPECT_EQ(count_of_flow[port], kPerFlow);
    used.insert(qs.begin(), qs.end());
  }
  EXPECT_GE(used.size(), 2u) << "all " << kFlows << " flows arrived on one queue";
}

// The errors a user meets, each with its code and the fix in the message.
TEST_P(AfxdpNet, ErrorsNameTheProblemAndTheFix) {
  ASSERT_NO_FATAL_FAILURE(make());
  if (IsSkipped()) return;  // the kernel refuses network namespaces here
  const std::string mode = ",mode=" + GetParam();
  auto none = backend::open_backend("afxdp:gxnope" + mode);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.status().code(), Errc::NotFound);
  EXPECT_NE(none.status().message().find("does not exist"), std::string::npos) << none.status().message();

  auto queue = backend::open_backend(std::string("afxdp:") + kDutIf + ",queue=1" + mode);
  ASSERT_FALSE(queue.has_value());
  EXPECT_EQ(queue.status().code(), Errc::InvalidValue);
  EXPECT_NE(queue.status().message().find("the interface has 1"), std::string::npos) << queue.status().message();

  ASSERT_TRUE(set_mtu(kDutIf, 3000).is_ok());
  auto mtu = backend::open_backend(std::string("afxdp:") + kDutIf + mode);
  ASSERT_FALSE(mtu.has_value());
  EXPECT_EQ(mtu.status().code(), Errc::InvalidValue);
  EXPECT_NE(mtu.status().message().find("MTU 3000"), std::string::npos) << mtu.status().message();
  EXPECT_NE(mtu.status().message().find("frame=4096"), std::string::npos) << mtu.status().message();
  auto big = backend::open_backend(std::string("afxdp:") + kDutIf + ",frame=4096" + mode);
  if (!big && big.status().code() == Errc::NotSupported) GTEST_SKIP() << big.status().to_string();
  ASSERT_TRUE(big.has_value()) << big.status().to_string();
  big->reset();
  ASSERT_TRUE(set_mtu(kDutIf, 1500).is_ok());

  // In this process a second open shares the interface (RX and TX specs
  // naming it); other options cannot share it.
  OPEN_OR_SKIP(first, "");
  auto shared = backend::open_backend(std::string("afxdp:") + kDutIf + mode);
  ASSERT_TRUE(shared.has_value()) << shared.status().to_string();
  EXPECT_EQ((*shared)->rx_memory(0)->base, first->rx_memory(0)->base);
  auto other = backend::open_backend(std::string("afxdp:") + kDutIf + ",ring=512" + mode);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.status().code(), Errc::BadState);
  EXPECT_NE(other.status().message().find("give the same options"), std::string::npos) << other.status().message();
  shared->reset();
  first.reset();

  // Another process's XDP program is not replaced.
  Holder holder;
  ASSERT_NO_FATAL_FAILURE(hold_in_child(std::string("afxdp:") + kDutIf + mode, holder));
  EXPECT_TRUE(holder.opened);
  auto second = backend::open_backend(std::string("afxdp:") + kDutIf + mode);
  kill(holder.pid, SIGKILL);
  waitpid(holder.pid, nullptr, 0);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.status().code(), Errc::BadState);
  EXPECT_NE(second.status().message().find("already attached"), std::string::npos) << second.status().message();

  // veth has no AF_XDP zero copy.
  auto zc = backend::open_backend(std::string("afxdp:") + kDutIf + ",mode=zc");
  ASSERT_FALSE(zc.has_value());
  EXPECT_EQ(zc.status().code(), Errc::NotSupported);
  EXPECT_NE(zc.status().message().find("mode=zc is not available"), std::string::npos) << zc.status().message();
}

// What gnio attached is gone when the backend closes, and when the process
// holding it is killed (SIGTERM, SIGKILL).
TEST_P(AfxdpNet, InterfaceIsCleanAfterCloseAndAfterKill) {
  ASSERT_NO_FATAL_FAILURE(make());
  if (IsSkipped()) return;  // the kernel refuses network namespaces here
  auto attached = [] {
    auto f = backend::afxdp::query_iface(kDutIf);
    return f ? f->xdp_prog_id : 0xFFFFFFFFu;
  };
  ASSERT_EQ(attached(), 0u);
  {
    OPEN_OR_SKIP(b, "");
    EXPECT_NE(attached(), 0u);
  }
  EXPECT_EQ(attached(), 0u);

  for (int sig : {SIGTERM, SIGKILL}) {
    Holder holder;
    ASSERT_NO_FATAL_FAILURE(hold_in_child(std::string("afxdp:") + kDutIf + ",mode=" + GetParam(), holder));
    EXPECT_TRUE(holder.opened);
    EXPECT_NE(attached(), 0u);
    kill(holder.pid, sig);
    int st = 0;
    waitpid(holder.pid, &st, 0);
    EXPECT_TRUE(WIFSIGNALED(st));
    uint32_t left = attached();
    for (int i = 0; i < 100 && left != 0; ++i) {
      usleep(10000);
      left = attached();
    }
    EXPECT_EQ(left, 0u) << "an XDP program stayed attached after signal " << sig;
  }
}

// gnio caps and gnio doctor read the interface as the kernel reports it:
// veth has native XDP but no zero copy, four queues here, and the program
// gnio attached shows up while the backend is open.
TEST_P(AfxdpNet, CapsAndDoctorReadTheInterface) {
  ASSERT_NO_FATAL_FAILURE(make(4));
  if (IsSkipped()) return;  // the kernel refuses network namespaces here
  const std::string spec = std::string("afxdp:") + kDutIf + ",queues=4";
  auto report = caps::afxdp_interface_report(spec);
  ASSERT_TRUE(report.has_value());
  auto j = nlohmann::json::parse(report->json);
  EXPECT_EQ(j["driver"], "veth");
  EXPECT_EQ(j["xsk_queues"], 4);
  EXPECT_EQ(j["channels"]["rx"], 4);
  EXPECT_EQ(j["mtu"], 1500);
  EXPECT_EQ(j["max_mtu_for_frame"], 2048 - 256 - 18);
  EXPECT_EQ(j["xdp_prog_id"], 0);
  if (j.contains("xdp_features")) {  // kernels >= 6.3
    EXPECT_EQ(j["xdp_modes"]["drv"], "yes");
    EXPECT_EQ(j["xdp_modes"]["zc"], "no");
    EXPECT_EQ(j["auto_mode"], "drv");
  }
  EXPECT_FALSE(caps::afxdp_interface_report("loop:").has_value());

  const doctor::Environment env = doctor::Environment::real();
  doctor::Request req;
  req.nic_spec = spec;
  req.gpu = "cpu";
  auto iface = doctor::run_check("afxdp.interface", env, req);
  ASSERT_TRUE(iface.has_value());
  EXPECT_EQ(iface->state, doctor::State::Pass) << iface->found;
  req.nic_spec = std::string("afxdp:") + kDutIf + ",queue=4";
  iface = doctor::run_check("afxdp.interface", env, req);
  EXPECT_EQ(iface->state, doctor::State::Fail) << iface->found;
  EXPECT_NE(iface->found.find("needs 5 queue(s)"), std::string::npos) << iface->found;

  req.nic_spec = spec;
  auto prog = doctor::run_check("afxdp.xdp_program", env, req);
  EXPECT_EQ(prog->state, doctor::State::Pass) << prog->found;
  OPEN_OR_SKIP(b, ",queues=4");
  auto held = nlohmann::json::parse(caps::afxdp_interface_report(spec)->json);
  EXPECT_NE(held["xdp_prog_id"], 0);
  EXPECT_EQ(held["xdp_attached"], GetParam());
  prog = doctor::run_check("afxdp.xdp_program", env, req);
  EXPECT_EQ(prog->state, doctor::State::Fail) << prog->found;
  EXPECT_NE(prog->fix.find("xdp-loader unload"), std::string::npos) << prog->fix;
}

INSTANTIATE_TEST_SUITE_P(Modes, AfxdpNet, ::testing::Values("skb", "drv"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gnio::nettest
