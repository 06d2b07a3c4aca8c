// SPDX-License-Identifier: Apache-2.0
#include "netns_util.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace gnio::nettest {

namespace {

Status fail(const std::string& what, int err) {
  return Status(Errc::IoError, Layer::App, what + ": " + std::strerror(err) + "; the net tests need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)");
}

// One rtnetlink request with nested attributes.
class Msg {
 public:
  Msg(uint16_t type, uint16_t flags, const void* header, size_t len) {
    buf_.resize(NLMSG_HDRLEN);
    put(header, len);
    auto* nh = reinterpret_cast<nlmsghdr*>(buf_.data());
    nh->nlmsg_type = type;
    nh->nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags);
  }
  void attr(uint16_t type, const void* data, size_t len) {
    nlattr a{static_cast<uint16_t>(NLA_HDRLEN + len), type};
    put(&a, sizeof a);
    put(data, len);
  }
  void attr_u32(uint16_t type, uint32_t v) { attr(type, &v, sizeof v); }
  void attr_str(uint16_t type, const std::string& s) { attr(type, s.c_str(), s.size() + 1); }
  size_t begin(uint16_t type) {
    size_t at = buf_.size();
    nlattr a{NLA_HDRLEN, type};
    put(&a, sizeof a);
    return at;
  }
  void raw(const void* data, size_t len) { put(data, len); }
  void end(size_t at) { reinterpret_cast<nlattr*>(buf_.data() + at)->nla_len = static_cast<uint16_t>(buf_.size() - at); }

  // Sends and waits for the acknowledgement; the kernel's errno otherwise.
  int send() {
    reinterpret_cast<nlmsghdr*>(buf_.data())->nlmsg_len = static_cast<uint32_t>(buf_.size());
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return errno;
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    int err = 0;
    if (sendto(fd, buf_.data(), buf_.size(), 0, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
      err = errno;
    } else {
      std::vector<uint8_t> in(8192);
      ssize_t n = recv(fd, in.data(), in.size(), 0);
      if (n < 0) err = errno;
      else {
        auto* nh = reinterpret_cast<nlmsghdr*>(in.data());
        if (NLMSG_OK(nh, static_cast<uint32_t>(n)) && nh->nlmsg_type == NLMSG_ERROR)
          err = -static_cast<const nlmsgerr*>(NLMSG_DATA(nh))->error;
      }
    }
    close(fd);
    return err;
  }

 private:
  void put(const void* p, size_t len) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + len);
    buf_.resize(NLMSG_ALIGN(buf_.size()));
  }
  std::vector<uint8_t> buf_;
};

Result<int> ifindex(const std::string& name) {
  unsigned idx = if_nametoindex(name.c_str());
  if (idx == 0) return fail("no interface " + name + " in this namespace", errno);
  return static_cast<int>(idx);
}

}  // namespace

Result<NetNs> NetNs::create() {
  int fd = -1, err = 0;
  // unshare() moves the calling thread only: a short-lived thread makes
  // the namespace and hands back a descriptor of it.
  std::thread t([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      err = errno;
      return;
    }
    fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (fd < 0) err = errno;
  });
  t.join();
  if (fd < 0) return fail("cannot create a network namespace (unshare CLONE_NEWNET)", err);
  return NetNs(fd);
}

NetNs& NetNs::operator=(NetNs&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

NetNs::~NetNs() {
  if (fd_ >= 0) close(fd_);
}

Status NetNs::run(const std::function<Status()>& fn) const {
  Status s;
  std::thread t([&] {
    if (setns(fd_, CLONE_NEWNET) != 0) {
      s = fail("cannot enter the test namespace", errno);
      return;
    }
    s = fn();
  });
  t.join();
  return s;
}

EnterNs::EnterNs(const NetNs& ns) {
  home_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home_ < 0 || setns(ns.fd(), CLONE_NEWNET) != 0) status_ = fail("cannot enter the test namespace", errno);
}

EnterNs::~EnterNs() {
  if (home_ >= 0) {
    (void)setns(home_, CLONE_NEWNET);
    close(home_);
  }
}

Status add_veth(const std::string& name, const std::string& peer, const NetNs& peer_ns, uint32_t queues) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  Msg m(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof ifi);
  m.attr_str(IFLA_IFNAME, name);
  m.attr_u32(IFLA_NUM_TX_QUEUES, queues);
  m.attr_u32(IFLA_NUM_RX_QUEUES, queues);
  size_t info = m.begin(IFLA_LINKINFO);
  m.attr_str(IFLA_INFO_KIND, "veth");
  size_t data = m.begin(IFLA_INFO_DATA);
  size_t p = m.begin(VETH_INFO_PEER);
  ifinfomsg peer_ifi{};
  peer_ifi.ifi_family = AF_UNSPEC;
  m.raw(&peer_ifi, sizeof peer_ifi);
  m.attr_str(IFLA_IFNAME, peer);
  m.attr_u32(IFLA_NET_NS_FD, static_cast<uint32_t>(peer_ns.fd()));
  m.attr_u32(IFLA_NUM_TX_QUEUES, queues);
  m.attr_u32(IFLA_NUM_RX_QUEUES, queues);
  m.end(p);
  m.end(data);
  m.end(info);
  if (int err = m.send()) return fail("cannot create veth pair " + name + "/" + peer, err);
  return Status::ok();
}

Status link_up(const std::string& name) {
  auto idx = ifindex(name);
  if (!idx) return idx.status();
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = *idx;
  ifi.ifi_flags = IFF_UP;
  ifi.ifi_change = IFF_UP;
  Msg m(RTM_NEWLINK, 0, &ifi, sizeof ifi);
  if (int err = m.send()) return fail("cannot set " + name + " up", err);
  return Status::ok();
}

Status set_mtu(const std::string& name, uint32_t mtu) {
  auto idx = ifindex(name);
  if (!idx) return idx.status();
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = *idx;
  Msg m(RTM_NEWLINK, 0, &ifi, sizeof ifi);
  m.attr_u32(IFLA_MTU, mtu);
  if (int err = m.send()) return fail("cannot set the MTU of " + name + " to " + std::to_string(mtu), err);
  return Status::ok();
}

Status add_ipv4(const std::string& name, const std::string& addr, uint8_t prefix) {
  auto idx = ifindex(name);
  if (!idx) return idx.status();
  in_addr a{};
  if (inet_pton(AF_INET, addr.c_str(), &a) != 1) return fail("bad IPv4 address " + addr, EINVAL);
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET;
  ifa.ifa_prefixlen = prefix;
  ifa.ifa_index = static_cast<uint32_t>(*idx);
  Msg m(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof ifa);
  m.attr(IFA_LOCAL, &a, sizeof a);
  m.attr(IFA_ADDRESS, &a, sizeof a);
  if (int err = m.send()) return fail("cannot add " + addr + " to " + name, err);
  return Status::ok();
}

Status add_neighbor(const std::string& name, const std::string& addr, const Mac& mac) {
  auto idx = ifindex(name);
  if (!idx) return idx.status();
  in_addr a{};
  if (inet_pton(AF_INET, addr.c_str(), &a) != 1) return fail("bad IPv4 address " + addr, EINVAL);
  ndmsg nd{};
  nd.ndm_family = AF_INET;
  nd.ndm_ifindex = *idx;
  nd.ndm_state = NUD_PERMANENT;
  Msg m(RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, &nd, sizeof nd);
  m.attr(NDA_DST, &a, sizeof a);
  m.attr(NDA_LLADDR, mac.data(), mac.size());
  if (int err = m.send()) return fail("cannot add neighbour " + addr + " on " + name, err);
  return Status::ok();
}

Result<Mac> mac_of(const std::string& name) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket", errno);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  int rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
  int err = errno;
  close(fd);
  if (rc != 0) return fail("cannot read the MAC of " + name, err);
  Mac mac;
  std::memcpy(mac.data(), ifr.ifr_hwaddr.sa_data, mac.size());
  return mac;
}

Status disable_tx_checksum(const std::string& name) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail("socket", errno);
  ethtool_value v{};
  v.cmd = ETHTOOL_STXCSUM;
  v.data = 0;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(&v);
  int rc = ioctl(fd, SIOCETHTOOL, &ifr);
  int err = errno;
  close(fd);
  if (rc != 0) return fail("cannot turn TX checksum offload of " + name + " off", err);
  return Status::ok();
}

bool link_exists(const std::string& name) { return if_nametoindex(name.c_str()) != 0; }

}  // namespace gnio::nettest
