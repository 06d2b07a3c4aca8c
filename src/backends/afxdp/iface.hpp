// SPDX-License-Identifier: Apache-2.0
// What the kernel says of a network interface, for AF_XDP: its queues
// (ETHTOOL_GCHANNELS), driver (ETHTOOL_GDRVINFO), MTU and attached XDP
// program (rtnetlink RTM_GETLINK), and the XDP features of its driver
// (the netdev generic-netlink family, Linux >= 6.3). Needs no privileges
// and no library: everything is asked in the caller's network namespace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gnio/status.hpp"

namespace gnio::backend::afxdp {

// NETDEV_XDP_ACT_* bits of the netdev family's xdp-features attribute.
enum XdpFeature : uint64_t {
  XdpActBasic = 1u << 0,        // native XDP (drv mode): PASS, DROP, TX
  XdpActRedirect = 1u << 1,     // native XDP_REDIRECT, what an XSK needs in drv mode
  XdpActNdoXmit = 1u << 2,
  XdpActXskZeroCopy = 1u << 3,  // AF_XDP zero copy (zc mode)
  XdpActHwOffload = 1u << 4,
  XdpActRxSg = 1u << 5,
  XdpActNdoXmitSg = 1u << 6,
};

// XDP_ATTACHED_* of IFLA_XDP_ATTACHED.
enum class XdpAttached : uint8_t { None = 0, Drv = 1, Skb = 2, Hw = 3, Multi = 4 };
std::string_view attached_name(XdpAttached a) noexcept;  // "none", "drv", "skb", "hw", "multi"

struct IfaceFacts {
  std::string name;
  int ifindex = 0;
  uint32_t mtu = 0;
  // Queues: ethtool channels where the driver reports them, else the
  // device's queue counts from rtnetlink.
  bool have_channels = false;
  uint32_t rx_channels = 0, tx_channels = 0, combined_channels = 0;
  uint32_t max_rx_channels = 0, max_tx_channels = 0, max_combined_channels = 0;
  uint32_t num_rx_queues = 0, num_tx_queues = 0;  // IFLA_NUM_RX/TX_QUEUES
  std::string driver;    // ETHTOOL_GDRVINFO ("veth", "mlx5_core"); empty when unknown
  std::string bus_info;  // "0000:3b:00.0"; empty for virtual devices
  uint32_t xdp_prog_id = 0;  // the program attached now (0: none)
  XdpAttached xdp_attached = XdpAttached::None;
  std::optional<uint64_t> xdp_features;  // XdpFeature bits; nullopt on kernels without the netdev family
  uint32_t xdp_zc_max_segs = 0;

  // Queues an XSK can bind to: both an RX and a TX queue of that index.
  uint32_t queues() const noexcept;
};

// NotFound when no interface of that name exists in this namespace.
Result<IfaceFacts> query_iface(std::string_view name);

// Frame sizes the UMEM takes: a frame holds the whole packet (no multi-buffer).
// The largest MTU a frame of `frame` bytes carries (Ethernet header and one
// VLAN tag on top of the MTU; XDP headroom is in the frame too).
uint32_t max_mtu_for_frame(uint32_t frame) noexcept;
// The longest frame a link of `mtu` takes: the MTU, an Ethernet header and
// one VLAN tag.
uint32_t max_frame_for_mtu(uint32_t mtu) noexcept;

}  // namespace gnio::backend::afxdp
