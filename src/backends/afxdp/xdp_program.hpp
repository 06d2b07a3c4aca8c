// SPDX-License-Identifier: Apache-2.0
// gnio's XDP program on an interface: a redirect program (queue index ->
// XSKMAP slot), its XSKMAP, and the BPF link that attaches it. The kernel
// detaches the program when the link's last descriptor closes, so also when
// the process dies, and it refuses to replace a program someone else
// attached.
#pragma once

#include <cstdint>

#include "backends/afxdp/iface.hpp"
#include "gnio/status.hpp"

namespace gnio::backend::afxdp {

class XdpRedirectProgram {
 public:
  XdpRedirectProgram() = default;
  XdpRedirectProgram(const XdpRedirectProgram&) = delete;
  XdpRedirectProgram& operator=(const XdpRedirectProgram&) = delete;
  // Detaches the program (closing the link) and frees it and its map.
  ~XdpRedirectProgram();

  // Loads a program that sends frames of queue i to the XSK in map slot i
  // and passes the frames of queues without one to the kernel stack.
  Status load(const IfaceFacts& f, uint32_t entries);

  // Attaches in native (drv) or generic (skb) mode; errno on failure, 0 on success.
  int attach(int ifindex, bool native);

  // The XSKMAP, which each queue's socket enters itself into.
  int map_fd() const { return map_fd_; }

 private:
  int map_fd_ = -1;
  int prog_fd_ = -1;
  int link_fd_ = -1;
};

}  // namespace gnio::backend::afxdp
