// SPDX-License-Identifier: Apache-2.0
// What the files of the afxdp driver share, as libxdp_internal.h serves
// libxdp.c and xsk.c: the spec's options, the XDP modes and the errors
// that name the fix.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "gnio/status.hpp"

namespace gnio::backend::afxdp {

// skb: generic XDP, frames copied by the kernel; drv: native XDP, frames
// copied into the UMEM by the driver; zc: native XDP, the NIC writes the UMEM.
enum class Mode : uint8_t { Skb, Drv, Zc };
inline const char* mode_name(Mode m) { return m == Mode::Skb ? "skb" : m == Mode::Drv ? "drv" : "zc"; }

// The kernel's headroom in front of every RX frame of a UMEM.
inline constexpr uint32_t kXdpPacketHeadroom = 256;

// afxdp:IFACE[,queue=Q][,queues=N][,mode=auto|skb|drv|zc][,frame=2048][,ring=2048][,busy_poll=1]
struct Options {
  std::string iface;
  uint32_t queue = 0;
  uint32_t queues = 1;
  std::string mode = "auto";
  uint32_t frame = 2048;
  uint32_t ring = 2048;
  bool busy_poll = false;
};

inline Status os_error(Errc code, const std::string& what, int err, const std::string& fix) {
  return Status(code, Layer::Backend, what + ": " + std::strerror(err) + "; " + fix);
}

inline bool is_permission(int err) { return err == EPERM || err == EACCES; }

inline std::string privilege_fix() {
  return "AF_XDP needs CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW: run as root or grant them "
         "(sudo setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep PROGRAM); `gnio doctor --nic afxdp:IFACE` checks";
}

// A mode= the interface's driver (named `driver`, empty when unknown) does not have.
inline Status mode_not_available(const std::string& iface, const std::string& driver, const std::string& mode,
                                 const std::string& why) {
  return Status(Errc::NotSupported, Layer::Backend,
                "afxdp:" + iface + ": mode=" + mode + " is not available: driver " +
                    (driver.empty() ? std::string("(unknown)") : driver) + " " + why +
                    "; use mode=auto (zc, then drv, then skb) or mode=skb, which every interface has",
                Axis::Nic);
}

}  // namespace gnio::backend::afxdp
