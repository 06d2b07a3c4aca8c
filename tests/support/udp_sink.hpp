// SPDX-License-Identifier: Apache-2.0
// A UDP socket on a free loopback port (the collector side of the export
// tests and benchmarks), and a thread that drains one and counts datagrams.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace gnio::test {

// Bound to 127.0.0.1 on a port the kernel picks; closed with the object.
struct LoopbackUdp {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  uint16_t port = 0;

  // receive_buffer: SO_RCVBUFFORCE bytes (root only; ignored where refused), 0 keeps the default.
  explicit LoopbackUdp(int receive_buffer = 0) {
    if (receive_buffer > 0) (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &receive_buffer, sizeof receive_buffer);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    (void)getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  LoopbackUdp(const LoopbackUdp&) = delete;
  LoopbackUdp& operator=(const LoopbackUdp&) = delete;
  ~LoopbackUdp() { ::close(fd); }

  // "udp://127.0.0.1:PORT", as --ipfix takes it.
  std::string url() const { return "udp://127.0.0.1:" + std::to_string(port); }

  // Every datagram that arrives until none came for quiet_ms.
  std::vector<std::vector<uint8_t>> receive_all(int quiet_ms = 200) {
    std::vector<std::vector<uint8_t>> out;
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, quiet_ms) <= 0) return out;
      std::vector<uint8_t> b(65536);
      const ssize_t n = recv(fd, b.data(), b.size(), 0);
      if (n < 0) return out;
      b.resize(static_cast<size_t>(n));
      out.push_back(std::move(b));
    }
  }
};

// Drains a LoopbackUdp on a thread of its own until stop(), counting datagrams.
class UdpDrain {
 public:
  explicit UdpDrain(int receive_buffer = 32 << 20) : sock_(receive_buffer), thread_([this] { run(); }) {}
  UdpDrain(const UdpDrain&) = delete;
  UdpDrain& operator=(const UdpDrain&) = delete;
  ~UdpDrain() { stop(); }

  std::string url() const { return sock_.url(); }
  // Stops after the datagrams already queued are read; returns how many arrived.
  uint64_t stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return datagrams_.load();
  }

 private:
  void run() {
    std::vector<uint8_t> b(65536);
    for (;;) {
      pollfd p{sock_.fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) {
        if (done_) return;
        continue;
      }
      if (recv(sock_.fd, b.data(), b.size(), 0) > 0) datagrams_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  LoopbackUdp sock_;
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> datagrams_{0};
  std::thread thread_;
};

}  // namespace gnio::test
