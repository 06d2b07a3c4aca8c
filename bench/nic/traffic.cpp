// SPDX-License-Identifier: Apache-2.0
#include "traffic.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/if_packet.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace gnio::nicbench {

Status os_error(const std::string& what, int err, const std::string& fix) {
  return Status(Errc::IoError, Layer::App, what + ": " + std::strerror(err) + "; " + fix);
}

namespace {

uint16_t ipv4_checksum(const uint8_t* h) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += static_cast<uint32_t>(h[i] << 8 | h[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

// A packet socket bound to `ifname` in the calling thread's namespace.
Result<int> packet_socket(const std::string& ifname, uint16_t protocol) {
  const unsigned ifindex = if_nametoindex(ifname.c_str());
  if (ifindex == 0)
    return os_error("interface " + ifname + " not found in this namespace", errno, "the veth pair was not made");
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(protocol));
  if (fd < 0) return os_error("AF_PACKET socket", errno, "run as root (CAP_NET_RAW)");
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(protocol);
  addr.sll_ifindex = static_cast<int>(ifindex);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    close(fd);
    return os_error("cannot bind an AF_PACKET socket to " + ifname, err, "check that the interface is up");
  }
  return fd;
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<std::vector<uint8_t>> udp_frames(const Mac& src, const Mac& dst, uint32_t size, uint32_t flows) {
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t f = 0; f < flows; ++f) {
    std::array<uint8_t, 42> h{};  // Ethernet, IPv4, UDP
    std::copy(dst.begin(), dst.end(), h.begin());
    std::copy(src.begin(), src.end(), h.begin() + 6);
    put16(&h[12], 0x0800);
    uint8_t* ip = &h[14];
    ip[0] = 0x45;
    put16(ip + 2, static_cast<uint16_t>(size - 14));
    ip[8] = 64;
    ip[9] = 17;
    const std::array<uint8_t, 8> addrs{10, 78, 0, 2, 10, 78, 0, 1};  // source, destination
    std::copy(addrs.begin(), addrs.end(), ip + 12);
    put16(ip + 10, ipv4_checksum(ip));
    uint8_t* udp = ip + 20;
    put16(udp, static_cast<uint16_t>(10000 + f));
    put16(udp + 2, kPort);
    put16(udp + 4, static_cast<uint16_t>(size - 34));
    std::vector<uint8_t> b(h.begin(), h.end());
    b.resize(size);
    for (uint32_t i = 42; i < size; ++i) b[i] = static_cast<uint8_t>(i * 7 + f);
    out.push_back(std::move(b));
  }
  return out;
}

// ---- sender --------------------------------------------------------------------

Sender::~Sender() { (void)stop(); }

Status Sender::start(const std::string& ifname, std::vector<std::vector<uint8_t>> frames, uint32_t threads) {
  frames_ = std::move(frames);
  for (uint32_t t = 0; t < threads; ++t) {
    auto fd = packet_socket(ifname, 0);  // protocol 0: this socket receives nothing
    if (!fd) return fd.status();
    // Straight to the driver: no qdisc between the sender and the veth, so
    // a full veth queue comes back as ENOBUFS and the frame is retried.
    const int one = 1;
    if (setsockopt(*fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0) {
      const int err = errno;
      close(*fd);
      return os_error("PACKET_QDISC_BYPASS on " + ifname, err, "a kernel of 3.14 or later has it");
    }
    fds_.push_back(*fd);
  }
  started_ns_ = now_ns();
  for (uint32_t t = 0; t < threads; ++t)
    threads_.emplace_back([this, t] { run(fds_[t], t * 17); });
  return Status::ok();
}

void Sender::run(int fd, uint32_t first) {
  constexpr uint32_t kBatch = 64;
  std::vector<mmsghdr> msgs(kBatch);
  std::vector<iovec> iov(kBatch);
  for (uint32_t i = 0; i < kBatch; ++i) {
    auto& f = frames_[(first + i) % frames_.size()];
    iov[i] = {f.data(), f.size()};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  const uint64_t frame_bytes = frames_.front().size();
  uint64_t sent = 0, refused = 0;
  uint32_t at = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const int n = sendmmsg(fd, msgs.data() + at, kBatch - at, 0);
    if (n > 0) {
      // sendmmsg returns the frames taken before the first refusal: fewer
      // than asked means the next frame was refused (the veth counts it in
      // tx_dropped) and goes again in the next call.
      sent += static_cast<uint64_t>(n);
      refused += static_cast<uint32_t>(n) < kBatch - at;
      at = (at + static_cast<uint32_t>(n)) % kBatch;
      if (sent >= 4096) {
        sent_.fetch_add(sent, std::memory_order_relaxed);
        bytes_.fetch_add(sent * frame_bytes, std::memory_order_relaxed);
        sent = 0;
      }
      continue;
    }
    if (errno == ENOBUFS || errno == EAGAIN || errno == EBUSY) {
      ++refused;
      std::this_thread::yield();
      continue;
    }
    if (!failed_.exchange(true)) error_ = std::string("sendmmsg: ") + std::strerror(errno);
    break;
  }
  sent_.fetch_add(sent, std::memory_order_relaxed);
  bytes_.fetch_add(sent * frame_bytes, std::memory_order_relaxed);
  refused_.fetch_add(refused, std::memory_order_relaxed);
}

Result<SendTotals> Sender::stop() {
  stop_.store(true);
  for (std::thread& t : threads_) t.join();
  const int64_t ended = now_ns();
  const bool ran = !threads_.empty();
  threads_.clear();
  for (int fd : fds_) close(fd);
  fds_.clear();
  if (failed_.load())
    return Status(Errc::IoError, Layer::App, "the sender failed: " + error_ + "; its frames could not be sent");
  SendTotals t;
  t.sent = sent_.load();
  t.bytes = bytes_.load();
  t.refused = refused_.load();
  t.seconds = ran ? static_cast<double>(ended - started_ns_) * 1e-9 : 0;
  return t;
}

// ---- baseline sink ------------------------------------------------------------

PacketSink::~PacketSink() { (void)stop(); }

Status PacketSink::start(const std::string& ifname) {
  auto fd = packet_socket(ifname, ETH_P_ALL);
  if (!fd) return fd.status();
  fd_ = *fd;
  // Frames the socket did not read in time are dropped and counted; a large
  // queue keeps that to what the reader cannot follow.
  const int bytes = 64 << 20;
  (void)setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes);
  const timeval tv{0, 50000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  // Only frames that arrived, not ones this host sends.
  const int ignore_outgoing = 1;
  (void)setsockopt(fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &ignore_outgoing, sizeof ignore_outgoing);
  thread_ = std::thread([this] { run(); });
  return Status::ok();
}

void PacketSink::run() {
  constexpr uint32_t kBatch = 64, kSnap = 64;
  std::vector<uint8_t> buf(kBatch * kSnap);
  std::vector<mmsghdr> msgs(kBatch);
  std::vector<iovec> iov(kBatch);
  while (!stop_.load(std::memory_order_relaxed)) {
    for (uint32_t i = 0; i < kBatch; ++i) {
      iov[i] = {buf.data() + i * kSnap, kSnap};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    // MSG_TRUNC: the frame's whole length, though only its head is copied.
    const int n = recvmmsg(fd_, msgs.data(), kBatch, MSG_TRUNC, nullptr);
    if (n <= 0) continue;
    uint64_t bytes = 0;
    for (int i = 0; i < n; ++i) bytes += msgs[i].msg_len;
    packets_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
}

Result<SinkTotals> PacketSink::stop() {
  if (fd_ < 0) return SinkTotals{};
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  tpacket_stats st{};
  socklen_t len = sizeof st;
  const int rc = getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &len);
  const int err = errno;
  close(fd_);
  fd_ = -1;
  if (rc != 0) return os_error("PACKET_STATISTICS of the baseline socket", err, "a kernel with AF_PACKET has them");
  return SinkTotals{packets_.load(), bytes_.load(), st.tp_drops};
}

// ---- receive sockets' drop counters -------------------------------------------

namespace {

// Adds what socket `fd` dropped, if it is an AF_XDP or AF_PACKET socket.
void add_socket_drops(int fd, SocketDrops& d) {
  int domain = 0;
  socklen_t len = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) return;
  if (domain == AF_XDP) {
    xdp_statistics st{};
    len = sizeof st;
    if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0) return;
    d.xsk_no_fill_frame += st.rx_dropped;
    d.xsk_rx_ring_full += st.rx_ring_full;
    ++d.xsk_sockets;
  } else if (domain == AF_PACKET) {
    tpacket_stats_v3 st{};  // the longest form; the kernel writes the one of the socket's ring version
    len = sizeof st;
    if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) != 0) return;
    d.packet_ring_full += st.tp_drops;
    ++d.packet_sockets;
  }
}

}  // namespace

SocketDrops socket_drops() {
  SocketDrops d;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return d;
  while (const dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd <= 2 || fd == dirfd(dir)) continue;
    add_socket_drops(fd, d);
  }
  closedir(dir);
  return d;
}

Result<SocketDrops> socket_drops_of(pid_t pid) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return os_error("pidfd_open of process " + std::to_string(pid), errno, "a kernel of 5.3 or later has it");
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = opendir(fds.c_str());
  if (!dir) {
    const int err = errno;
    close(pidfd);
    return os_error("opendir " + fds, err, "the process has ended");
  }
  SocketDrops d;
  Status failed = Status::ok();
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    // Only sockets are worth a copy of the descriptor.
    char target[64] = {};
    const std::string link = fds + "/" + e->d_name;
    if (readlink(link.c_str(), target, sizeof target - 1) <= 0 || std::strncmp(target, "socket:", 7) != 0) continue;
    const int fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, std::atoi(e->d_name), 0));
    if (fd < 0) {
      failed = os_error("pidfd_getfd of descriptor " + std::string(e->d_name) + " of process " + std::to_string(pid),
                        errno, "run as root; a kernel of 5.6 or later has it");
      break;
    }
    add_socket_drops(fd, d);
    close(fd);
  }
  closedir(dir);
  close(pidfd);
  if (!failed) return failed;
  return d;
}

// ---- veth transmit drops ---------------------------------------------------------

Result<uint64_t> tx_dropped(const std::string& ifname) {
  const unsigned ifindex = if_nametoindex(ifname.c_str());
  if (ifindex == 0)
    return os_error("interface " + ifname + " not found in this namespace", errno, "the veth pair was not made");
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return os_error("rtnetlink socket", errno, "a kernel with rtnetlink has it");
  struct {
    nlmsghdr h;
    ifinfomsg i;
  } req{};
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = RTM_GETLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST;
  req.h.nlmsg_seq = 1;
  req.i.ifi_family = AF_UNSPEC;
  req.i.ifi_index = static_cast<int>(ifindex);
  std::vector<uint8_t> buf(65536);
  ssize_t n = -1;
  if (send(fd, &req, sizeof req, 0) == static_cast<ssize_t>(sizeof req)) n = recv(fd, buf.data(), buf.size(), 0);
  const int err = errno;
  close(fd);
  if (n < 0) return os_error("RTM_GETLINK of " + ifname, err, "check that rtnetlink answers in this namespace");
  size_t at = 0;
  while (at + sizeof(nlmsghdr) <= static_cast<size_t>(n)) {
    nlmsghdr h;
    std::memcpy(&h, buf.data() + at, sizeof h);
    if (h.nlmsg_len < sizeof h || at + h.nlmsg_len > static_cast<size_t>(n)) break;
    if (h.nlmsg_type == RTM_NEWLINK) {
      // Attributes follow the aligned link header, each aligned to 4 bytes.
      size_t a = at + NLMSG_LENGTH(sizeof(ifinfomsg));
      a = (a + 3) & ~size_t{3};
      while (a + sizeof(rtattr) <= at + h.nlmsg_len) {
        rtattr attr;
        std::memcpy(&attr, buf.data() + a, sizeof attr);
        if (attr.rta_len < sizeof attr) break;
        if (attr.rta_type == IFLA_STATS64 && attr.rta_len >= sizeof attr + sizeof(rtnl_link_stats64)) {
          rtnl_link_stats64 st;
          std::memcpy(&st, buf.data() + a + RTA_LENGTH(0), sizeof st);
          return static_cast<uint64_t>(st.tx_dropped);
        }
        a += (attr.rta_len + 3u) & ~3u;
      }
    }
    at += (h.nlmsg_len + 3u) & ~3u;
  }
  return Status(Errc::IoError, Layer::App,
                "RTM_GETLINK of " + ifname + " had no IFLA_STATS64; a kernel of 2.6.35 or later reports it");
}

}  // namespace gnio::nicbench
