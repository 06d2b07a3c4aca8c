// SPDX-License-Identifier: Apache-2.0
// libxdp and libbpf, loaded when the first afxdp spec opens rather than
// linked: the static libgnio then needs nothing more at link time, and a
// program without them installed fails only when it asks for afxdp.
#pragma once

#include <bpf/bpf.h>
#include <xdp/xsk.h>

#include <string>

namespace gnio::backend::afxdp {

// The functions of the two libraries the driver calls.
struct XdpLib {
  decltype(&::xsk_umem__create) umem_create = nullptr;
  decltype(&::xsk_umem__delete) umem_delete = nullptr;
  decltype(&::xsk_socket__create) socket_create = nullptr;
  decltype(&::xsk_socket__delete) socket_delete = nullptr;
  decltype(&::xsk_socket__fd) socket_fd = nullptr;
  decltype(&::xsk_socket__update_xskmap) update_xskmap = nullptr;
  decltype(&::bpf_map_create) map_create = nullptr;
  decltype(&::bpf_prog_load) prog_load = nullptr;
  decltype(&::bpf_link_create) link_create = nullptr;
  std::string error;  // why loading failed; empty when loaded
};

// Loads them at the first call; thread-safe.
const XdpLib& xdp_lib();

}  // namespace gnio::backend::afxdp
