// SPDX-License-Identifier: Apache-2.0
// IPFIX over UDP (RFC 7011 §10.3): one message per datagram on a connected
// socket, sent without waiting. A full socket buffer loses the message; so
// does a collector that is not there, which a connected socket learns from
// the ICMP port unreachable the previous datagram drew (ECONNREFUSED).
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "export/transport.hpp"

namespace gnio::ipfix {

Result<SocketAddress> resolve(const Collector& c) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = c.transport == Collector::Transport::Udp ? SOCK_DGRAM : SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(c.port);
  if (int rc = getaddrinfo(c.host.c_str(), port.c_str(), &hints, &found); rc != 0 || found == nullptr)
    return Status(Errc::IoError, Layer::App,
                  "cannot resolve the IPFIX collector " + c.text() + ": " + gai_strerror(rc) +
                      "; check the host name or give an address");
  SocketAddress a;
  a.family = found->ai_family;
  a.length = static_cast<socklen_t>(found->ai_addrlen);
  std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  return a;
}

namespace {

class UdpTransport final : public Transport {
 public:
  UdpTransport(int fd, size_t max_message) : fd_(fd), max_message_(max_message) {}
  ~UdpTransport() override { ::close(fd_); }

  bool send(std::span<const uint8_t> message, uint64_t records, ExporterStats& stats) override {
    if (::send(fd_, message.data(), message.size(), MSG_DONTWAIT) == static_cast<ssize_t>(message.size())) {
      stats.messages_sent += 1;
      stats.bytes_sent += message.size();
      stats.records_sent += records;
      return true;
    }
    const bool full = errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS;
    if (!full) refused_ = true;
    stats.lost[static_cast<size_t>(full ? LossReason::SocketBufferFull : LossReason::CollectorDown)] += records;
    return false;
  }
  void poll(ExporterStats&) override {}
  bool up() const override { return true; }
  bool take_refused() override {
    const bool r = refused_;
    refused_ = false;
    return r;
  }
  size_t max_message() const override { return max_message_; }

 private:
  int fd_;
  size_t max_message_;
  bool refused_ = false;
};

}  // namespace

Result<std::unique_ptr<Transport>> open_udp(const Collector& c, const ExporterOptions& o) {
  auto addr = resolve(c);
  if (!addr) return addr.status();
  const int fd = ::socket(addr->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return Status(Errc::IoError, Layer::App, "cannot make a UDP socket for the IPFIX collector " + c.text() + ": " +
                                                 std::strerror(errno));
  if (o.send_buffer > 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o.send_buffer, sizeof o.send_buffer);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr->storage), addr->length) != 0) {
    const int e = errno;
    ::close(fd);
    return Status(Errc::IoError, Layer::App,
                  "cannot address the IPFIX collector " + c.text() + ": " + std::strerror(e) +
                      "; check that the host is reachable");
  }
  return std::unique_ptr<Transport>(new UdpTransport(fd, o.max_message_udp));
}

}  // namespace gnio::ipfix
