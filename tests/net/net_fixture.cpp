// SPDX-License-Identifier: Apache-2.0
#include "net_fixture.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace gnio::nettest {

namespace {

uint16_t ip_checksum(const uint8_t* p, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len & 1) sum += static_cast<uint32_t>(p[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

}  // namespace

Result<std::unique_ptr<VethPair>> make_veth_pair(uint32_t queues) {
  auto v = std::make_unique<VethPair>();
  auto dut = NetNs::create();
  if (!dut) return dut.status();
  auto peer = NetNs::create();
  if (!peer) return peer.status();
  v->dut = std::move(*dut);
  v->peer = std::move(*peer);
  // No IPv6 on the pair: router solicitations and MLD reports would be
  // traffic the tests did not send. Where IPv6 is absent there is none.
  for (const NetNs* ns : {&v->dut, &v->peer}) {
    GNIO_TRY(ns->run([] {
      for (const char* conf : {"/proc/sys/net/ipv6/conf/default/disable_ipv6", "/proc/sys/net/ipv6/conf/all/disable_ipv6"}) {
        int fd = open(conf, O_WRONLY | O_CLOEXEC);
        if (fd < 0) continue;
        (void)!write(fd, "1", 1);
        close(fd);
      }
      return Status::ok();
    }));
  }
  GNIO_TRY(v->dut.run([&]() -> Status {
    GNIO_TRY(add_veth(kDutIf, kPeerIf, v->peer, queues));
    GNIO_TRY(link_up(kDutIf));
    GNIO_TRY(add_ipv4(kDutIf, kDutIp, 24));
    auto mac = mac_of(kDutIf);
    if (!mac) return mac.status();
    v->dut_mac = *mac;
    return Status::ok();
  }));
  GNIO_TRY(v->peer.run([&]() -> Status {
    GNIO_TRY(link_up(kPeerIf));
    GNIO_TRY(add_ipv4(kPeerIf, kPeerIp, 24));
    // Frames leave the peer whole, as from a NIC: with their L4 checksum.
    GNIO_TRY(disable_tx_checksum(kPeerIf));
    // gnio takes every frame of the dut's queues, ARP included: the peer
    // learns the dut's MAC from a permanent entry instead.
    GNIO_TRY(add_neighbor(kPeerIf, kDutIp, v->dut_mac));
    auto mac = mac_of(kPeerIf);
    if (!mac) return mac.status();
    v->peer_mac = *mac;
    return Status::ok();
  }));
  return v;
}

std::optional<std::string> xdp_sockets_refused() {
  const int fd = socket(AF_XDP, SOCK_RAW, 0);
  const int err = errno;
  if (fd >= 0) {
    close(fd);
    return std::nullopt;
  }
  if (err != EAFNOSUPPORT && err != EPERM) return std::nullopt;
  return std::string("the kernel refuses XDP sockets here: ") + std::strerror(err);
}

std::vector<uint8_t> udp_frame(const VethPair& v, uint16_t sport, uint16_t dport, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> f(42 + payload.size());
  std::memcpy(f.data(), v.peer_mac.data(), 6);
  std::memcpy(f.data() + 6, v.dut_mac.data(), 6);
  put16(f.data() + 12, 0x0800);
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  put16(ip + 2, static_cast<uint16_t>(28 + payload.size()));
  put16(ip + 6, 0x4000);
  ip[8] = 64;
  ip[9] = IPPROTO_UDP;
  inet_pton(AF_INET, kDutIp, ip + 12);
  inet_pton(AF_INET, kPeerIp, ip + 16);
  put16(ip + 10, ip_checksum(ip, 20));
  uint8_t* udp = ip + 20;
  put16(udp, sport);
  put16(udp + 2, dport);
  put16(udp + 4, static_cast<uint16_t>(8 + payload.size()));
  put16(udp + 6, 0);  // no checksum (allowed for IPv4)
  std::memcpy(udp + 8, payload.data(), payload.size());
  return f;
}

std::optional<std::vector<uint8_t>> udp_payload(const uint8_t* f, uint32_t len, uint16_t dport, uint16_t* sport) {
  if (len < 42 || get16(f + 12) != 0x0800) return std::nullopt;
  const uint8_t* ip = f + 14;
  const uint32_t ihl = (ip[0] & 0x0F) * 4u;
  if (ip[9] != IPPROTO_UDP || len < 14 + ihl + 8) return std::nullopt;
  const uint8_t* udp = ip + ihl;
  if (get16(udp + 2) != dport) return std::nullopt;
  const uint32_t ulen = get16(udp + 4);
  if (ulen < 8 || 14 + ihl + ulen > len) return std::nullopt;
  if (sport) *sport = get16(udp);
  return std::vector<uint8_t>(udp + 8, udp + ulen);
}

bool icmp_echo_to_reply(uint8_t* f, uint32_t len) {
  if (len < 42 || get16(f + 12) != 0x0800) return false;
  uint8_t* ip = f + 14;
  const uint32_t ihl = (ip[0] & 0x0F) * 4u;
  const uint32_t total = get16(ip + 2);
  if (ip[9] != IPPROTO_ICMP || total < ihl + 8 || 14 + total > len || ip[ihl] != 8) return false;
  uint8_t mac[6];
  std::memcpy(mac, f, 6);
  std::memcpy(f, f + 6, 6);
  std::memcpy(f + 6, mac, 6);
  uint8_t addr[4];
  std::memcpy(addr, ip + 12, 4);
  std::memcpy(ip + 12, ip + 16, 4);
  std::memcpy(ip + 16, addr, 4);
  ip[8] = 64;
  put16(ip + 10, 0);
  put16(ip + 10, ip_checksum(ip, ihl));
  uint8_t* icmp = ip + ihl;
  icmp[0] = 0;  // echo reply
  put16(icmp + 2, 0);
  put16(icmp + 2, ip_checksum(icmp, total - ihl));
  return true;
}

std::vector<uint8_t> test_payload(uint32_t seq, uint32_t size) {
  std::vector<uint8_t> p(std::max<uint32_t>(size, 4));
  for (uint32_t i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
  for (uint32_t i = 4; i < p.size(); ++i) p[i] = static_cast<uint8_t>(seq * 7 + i);
  return p;
}

int open_netns_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  while (dirent* e = readdir(d)) {
    char target[64] = {};
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t len = readlink(path.c_str(), target, sizeof target - 1);
    if (len > 0 && std::strncmp(target, "net:[", 5) == 0) ++n;
  }
  closedir(d);
  return n;
}

Status send_peer_udp_paced(const VethPair& v, uint16_t port, uint32_t count, const EthRxq& rxq,
                           uint64_t& frame_bytes) {
  return v.peer.run([&]() -> Status {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return Status(Errc::IoError, Layer::App, std::string("socket: ") + std::strerror(errno));
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    inet_pton(AF_INET, kDutIp, &to.sin_addr);
    Status result = Status::ok();
    for (uint32_t i = 0; i < count && result.is_ok(); ++i) {
      auto p = test_payload(i, 18 + (i * 131) % 1450);
      if (sendto(fd, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) !=
          static_cast<ssize_t>(p.size())) {
        result = Status(Errc::IoError, Layer::App, std::string("sendto: ") + std::strerror(errno));
        break;
      }
      frame_bytes += 42 + p.size();
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (rxq.stats().released + 64 < i + 1) {
        if (std::chrono::steady_clock::now() > until) {
          result = Status(Errc::Timeout, Layer::App,
                          "the kernel released " + std::to_string(rxq.stats().released) + " of " +
                              std::to_string(i + 1) + " frames sent, and nothing more for 2 s (rx_missed " +
                              std::to_string(rxq.stats().rx_missed) + ")");
          break;
        }
        usleep(50);
      }
    }
    close(fd);
    return result;
  });
}

Status echo_peer_udp(const VethPair& v, uint16_t port, uint32_t count, uint32_t window, uint32_t& echoed,
                     uint32_t& wrong) {
  return v.peer.run([&]() -> Status {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    inet_pton(AF_INET, kDutIp, &to.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      close(fd);
      return Status(Errc::IoError, Layer::App, std::string("connect: ") + std::strerror(errno));
    }
    timeval tv{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::vector<uint8_t> buf(2048);
    uint32_t sent = 0;
    while (echoed < count) {
      while (sent < count && sent < echoed + window) {
        auto p = test_payload(sent, 18 + (sent * 131) % 1450);
        if (send(fd, p.data(), p.size(), 0) != static_cast<ssize_t>(p.size())) {
          close(fd);
          return Status(Errc::IoError, Layer::App, std::string("send: ") + std::strerror(errno));
        }
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
}

}  // namespace gnio::nettest
