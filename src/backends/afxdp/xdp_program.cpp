// SPDX-License-Identifier: Apache-2.0
#include "backends/afxdp/xdp_program.hpp"

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <unistd.h>

#include <cstddef>
#include <iterator>
#include <string>

#include "backends/afxdp/internal.hpp"
#include "backends/afxdp/xdp_lib.hpp"

namespace gnio::backend::afxdp {

XdpRedirectProgram::~XdpRedirectProgram() {
  for (int fd : {link_fd_, prog_fd_, map_fd_})
    if (fd >= 0) close(fd);
}

Status XdpRedirectProgram::load(const IfaceFacts& f, uint32_t entries) {
  map_fd_ = xdp_lib().map_create(BPF_MAP_TYPE_XSKMAP, "gnio_xsks", sizeof(uint32_t), sizeof(int), entries, nullptr);
  if (map_fd_ < 0) {
    int err = -map_fd_;
    return os_error(is_permission(err) ? Errc::IoError : Errc::Driver,
                    "afxdp:" + f.name + ": cannot create the XSKMAP of " + std::to_string(entries) + " entries", err,
                    is_permission(err) ? privilege_fix() : "check that the kernel has AF_XDP (CONFIG_XDP_SOCKETS)");
  }
  const bpf_insn insns[] = {
      // r2 = ctx->rx_queue_index
      {BPF_LDX | BPF_MEM | BPF_W, 2, 1, static_cast<int16_t>(offsetof(xdp_md, rx_queue_index)), 0},
      // r1 = the XSKMAP (a 16-byte load of the map's descriptor)
      {BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd_},
      {0, 0, 0, 0, 0},
      // r3 = XDP_PASS: what happens to a frame whose slot is empty
      {BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  prog_fd_ = xdp_lib().prog_load(BPF_PROG_TYPE_XDP, "gnio_xsk_redir", "Dual MIT/GPL", insns, std::size(insns), nullptr);
  if (prog_fd_ < 0) {
    int err = -prog_fd_;
    return os_error(is_permission(err) ? Errc::IoError : Errc::Driver,
                    "afxdp:" + f.name + ": the kernel refused gnio's XDP redirect program", err,
                    is_permission(err) ? privilege_fix() : "a kernel >= 5.9 with BPF and XDP is needed");
  }
  return Status::ok();
}

int XdpRedirectProgram::attach(int ifindex, bool native) {
  LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
  int fd = xdp_lib().link_create(prog_fd_, ifindex, BPF_XDP, &opts);
  if (fd < 0) return -fd;
  link_fd_ = fd;
  return 0;
}

}  // namespace gnio::backend::afxdp
