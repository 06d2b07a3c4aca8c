// SPDX-License-Identifier: Apache-2.0
#include "backends/afxdp/iface.hpp"

#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

namespace gnio::backend::afxdp {

namespace {

// The netdev generic-netlink family (include/uapi/linux/netdev.h, Linux 6.3);
// spelled out here because older kernel headers lack it.
constexpr uint8_t kNetdevCmdDevGet = 1;
constexpr uint16_t kNetdevAttrIfindex = 1;
constexpr uint16_t kNetdevAttrXdpFeatures = 3;
constexpr uint16_t kNetdevAttrXdpZcMaxSegs = 4;

// Ethernet header and one VLAN tag: what a frame holds on top of the MTU.
constexpr uint32_t kL2Overhead = 18;
// The kernel keeps this much of every UMEM frame in front of the packet.
constexpr uint32_t kXdpPacketHeadroom = 256;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A netlink request of one message, built attribute by attribute.
class NlRequest {
 public:
  NlRequest(uint16_t type, uint16_t flags, const void* header, size_t header_len) {
    buf_.resize(NLMSG_HDRLEN);
    append(header, header_len);
    auto* nh = reinterpret_cast<nlmsghdr*>(buf_.data());
    nh->nlmsg_type = type;
    nh->nlmsg_flags = static_cast<uint16_t>(NLM_F_REQUEST | flags);
    nh->nlmsg_seq = 1;
  }
  void attr(uint16_t type, const void* data, size_t len) {
    nlattr a{static_cast<uint16_t>(NLA_HDRLEN + len), type};
    append(&a, sizeof a);
    append(data, len);
  }
  std::vector<uint8_t>& finish() {
    reinterpret_cast<nlmsghdr*>(buf_.data())->nlmsg_len = static_cast<uint32_t>(buf_.size());
    return buf_;
  }

 private:
  void append(const void* p, size_t len) {
    const auto* b = static_cast<const uint8_t*>(p);
    buf_.insert(buf_.end(), b, b + len);
    buf_.resize(NLMSG_ALIGN(buf_.size()));
  }
  std::vector<uint8_t> buf_;
};

// Sends one request and hands every answer message to `on_msg`; returns 0
// or the negative errno the kernel answered.
int nl_transact(int protocol, std::vector<uint8_t>& req, const std::function<void(const nlmsghdr*)>& on_msg) {
  Fd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol));
  if (fd.get() < 0) return -errno;
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  if (sendto(fd.get(), req.data(), req.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) return -errno;
  std::vector<uint8_t> buf(32768);
  for (;;) {
    ssize_t n = recv(fd.get(), buf.data(), buf.size(), 0);
    if (n < 0) return -errno;
    for (auto* nh = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(nh, static_cast<uint32_t>(n));
         nh = NLMSG_NEXT(nh, n)) {
      if (nh->nlmsg_type == NLMSG_DONE) return 0;
      if (nh->nlmsg_type == NLMSG_ERROR) {
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(nh));
        return e->error;  // 0 is the acknowledgement
      }
      on_msg(nh);
      if (!(nh->nlmsg_flags & NLM_F_MULTI)) return 0;
    }
  }
}

// Calls `on_attr` for every attribute in [p, p + len).
void for_attrs(const uint8_t* p, size_t len, const std::function<void(const nlattr*)>& on_attr) {
  while (len >= NLA_HDRLEN) {
    const auto* a = reinterpret_cast<const nlattr*>(p);
    if (a->nla_len < NLA_HDRLEN || a->nla_len > len) return;
    on_attr(a);
    size_t step = NLA_ALIGN(a->nla_len);
    if (step >= len) return;
    p += step;
    len -= step;
  }
}

const uint8_t* attr_data(const nlattr* a) { return reinterpret_cast<const uint8_t*>(a) + NLA_HDRLEN; }
template <class T>
T attr_value(const nlattr* a) {
  T v{};
  std::memcpy(&v, attr_data(a), std::min<size_t>(sizeof v, a->nla_len - NLA_HDRLEN));
  return v;
}

int query_link(IfaceFacts& f) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = f.ifindex;
  NlRequest req(RTM_GETLINK, 0, &ifi, sizeof ifi);
  return nl_transact(NETLINK_ROUTE, req.finish(), [&](const nlmsghdr* nh) {
    if (nh->nlmsg_type != RTM_NEWLINK) return;
    const uint8_t* p = static_cast<const uint8_t*>(NLMSG_DATA(nh)) + NLMSG_ALIGN(sizeof(ifinfomsg));
    size_t len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(ifinfomsg));
    for_attrs(p, len, [&](const nlattr* a) {
      switch (a->nla_type & NLA_TYPE_MASK) {
        case IFLA_MTU: f.mtu = attr_value<uint32_t>(a); break;
        case IFLA_NUM_RX_QUEUES: f.num_rx_queues = attr_value<uint32_t>(a); break;
        case IFLA_NUM_TX_QUEUES: f.num_tx_queues = attr_value<uint32_t>(a); break;
        case IFLA_XDP:
          for_attrs(attr_data(a), a->nla_len - NLA_HDRLEN, [&](const nlattr* x) {
            if (x->nla_type == IFLA_XDP_ATTACHED) f.xdp_attached = static_cast<XdpAttached>(attr_value<uint8_t>(x));
            if (x->nla_type == IFLA_XDP_PROG_ID) f.xdp_prog_id = attr_value<uint32_t>(x);
            // Several programs (MULTI): report the native one, then the generic one.
            if (x->nla_type == IFLA_XDP_DRV_PROG_ID && f.xdp_prog_id == 0) f.xdp_prog_id = attr_value<uint32_t>(x);
            if (x->nla_type == IFLA_XDP_SKB_PROG_ID && f.xdp_prog_id == 0) f.xdp_prog_id = attr_value<uint32_t>(x);
          });
          break;
        default: break;
      }
    });
  });
}

int genl_family_id(const char* name, uint16_t* id) {
  genlmsghdr g{};
  g.cmd = CTRL_CMD_GETFAMILY;
  g.version = 1;
  NlRequest req(GENL_ID_CTRL, 0, &g, sizeof g);
  req.attr(CTRL_ATTR_FAMILY_NAME, name, std::strlen(name) + 1);
  *id = 0;
  return nl_transact(NETLINK_GENERIC, req.finish(), [&](const nlmsghdr* nh) {
    const uint8_t* p = static_cast<const uint8_t*>(NLMSG_DATA(nh)) + GENL_HDRLEN;
    for_attrs(p, nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), [&](const nlattr* a) {
      if (a->nla_type == CTRL_ATTR_FAMILY_ID) *id = attr_value<uint16_t>(a);
    });
  });
}

void query_xdp_features(IfaceFacts& f) {
  uint16_t family = 0;
  if (genl_family_id("netdev", &family) != 0 || family == 0) return;  // kernel before 6.3
  genlmsghdr g{};
  g.cmd = kNetdevCmdDevGet;
  g.version = 1;
  NlRequest req(family, 0, &g, sizeof g);
  uint32_t ifindex = static_cast<uint32_t>(f.ifindex);
  req.attr(kNetdevAttrIfindex, &ifindex, sizeof ifindex);
  nl_transact(NETLINK_GENERIC, req.finish(), [&](const nlmsghdr* nh) {
    const uint8_t* p = static_cast<const uint8_t*>(NLMSG_DATA(nh)) + GENL_HDRLEN;
    for_attrs(p, nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), [&](const nlattr* a) {
      if (a->nla_type == kNetdevAttrXdpFeatures) f.xdp_features = attr_value<uint64_t>(a);
      if (a->nla_type == kNetdevAttrXdpZcMaxSegs) f.xdp_zc_max_segs = attr_value<uint32_t>(a);
    });
  });
}

void query_ethtool(IfaceFacts& f) {
  Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, f.name.c_str(), IFNAMSIZ - 1);
  ethtool_channels ch{};
  ch.cmd = ETHTOOL_GCHANNELS;
  ifr.ifr_data = reinterpret_cast<char*>(&ch);
  if (ioctl(fd.get(), SIOCETHTOOL, &ifr) == 0) {
    f.have_channels = true;
    f.rx_channels = ch.rx_count;
    f.tx_channels = ch.tx_count;
    f.combined_channels = ch.combined_count;
    f.max_rx_channels = ch.max_rx;
    f.max_tx_channels = ch.max_tx;
    f.max_combined_channels = ch.max_combined;
  }
  ethtool_drvinfo info{};
  info.cmd = ETHTOOL_GDRVINFO;
  ifr.ifr_data = reinterpret_cast<char*>(&info);
  if (ioctl(fd.get(), SIOCETHTOOL, &ifr) == 0) {
    f.driver = std::string(info.driver, strnlen(info.driver, sizeof info.driver));
    f.bus_info = std::string(info.bus_info, strnlen(info.bus_info, sizeof info.bus_info));
  }
}

}  // namespace

std::string_view attached_name(XdpAttached a) noexcept {
  switch (a) {
    case XdpAttached::None: return "none";
    case XdpAttached::Drv: return "drv";
    case XdpAttached::Skb: return "skb";
    case XdpAttached::Hw: return "hw";
    case XdpAttached::Multi: return "multi";
  }
  return "none";
}

uint32_t IfaceFacts::queues() const noexcept {
  if (have_channels && rx_channels + combined_channels > 0 && tx_channels + combined_channels > 0)
    return std::min(rx_channels, tx_channels) + combined_channels;
  return std::min(num_rx_queues, num_tx_queues);
}

uint32_t max_frame_for_mtu(uint32_t mtu) noexcept { return mtu + kL2Overhead; }

uint32_t max_mtu_for_frame(uint32_t frame) noexcept {
  return frame > kXdpPacketHeadroom + kL2Overhead ? frame - kXdpPacketHeadroom - kL2Overhead : 0;
}

Result<IfaceFacts> query_iface(std::string_view name) {
  IfaceFacts f;
  f.name = name;
  if (name.empty() || name.size() >= IFNAMSIZ)
    return Status(Errc::InvalidValue, Layer::Backend,
                  "interface name '" + f.name + "' must have 1 to " + std::to_string(IFNAMSIZ - 1) +
                      " characters; `ip link` lists the interfaces");
  f.ifindex = static_cast<int>(if_nametoindex(f.name.c_str()));
  if (f.ifindex == 0)
    return Status(Errc::NotFound, Layer::Backend,
                  "interface '" + f.name + "' does not exist in this network namespace (" + std::strerror(errno) +
                      "); `ip link` lists the interfaces, `ip netns exec NS ...` runs in another namespace");
  if (int rc = query_link(f); rc != 0)
    return Status(Errc::IoError, Layer::Backend,
                  "interface '" + f.name + "': rtnetlink RTM_GETLINK failed: " + std::strerror(-rc) +
                      "; check that netlink sockets are allowed here");
  query_ethtool(f);
  query_xdp_features(f);
  return f;
}

}  // namespace gnio::backend::afxdp
