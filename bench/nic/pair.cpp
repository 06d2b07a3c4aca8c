// SPDX-License-Identifier: Apache-2.0
// The veth pair of nic_bench: two network namespaces made over rtnetlink,
// held only by descriptors of this process, so the kernel removes them, and
// the pair with them, however the process ends (SIGKILL included).
#include <fcntl.h>
#include <unistd.h>

#include "bench.hpp"

using namespace gnio;

namespace nic_bench {

Status Bench::make_pair() {
  auto d = nettest::NetNs::create();
  if (!d) return d.status();
  auto p = nettest::NetNs::create();
  if (!p) return p.status();
  dut = std::move(*d);
  peer = std::move(*p);
  // Without IPv6 neither end sends router solicitations or MLD reports:
  // the only frames on the pair are the sender's.
  for (const auto* ns : {&dut, &peer})
    GNIO_TRY(ns->run([] {
      for (const char* conf :
           {"/proc/sys/net/ipv6/conf/default/disable_ipv6", "/proc/sys/net/ipv6/conf/all/disable_ipv6"}) {
        const int fd = open(conf, O_WRONLY | O_CLOEXEC);
        if (fd < 0) continue;
        (void)!write(fd, "1", 1);
        close(fd);
      }
      return Status::ok();
    }));
  GNIO_TRY(dut.run([&]() -> Status {
    GNIO_TRY(nettest::add_veth(kDutIf, kPeerIf, peer, 1));
    GNIO_TRY(nettest::link_up(kDutIf));
    auto mac = nettest::mac_of(kDutIf);
    if (!mac) return mac.status();
    dut_mac = *mac;
    return Status::ok();
  }));
  return peer.run([&]() -> Status {
    GNIO_TRY(nettest::link_up(kPeerIf));
    auto mac = nettest::mac_of(kPeerIf);
    if (!mac) return mac.status();
    peer_mac = *mac;
    return Status::ok();
  });
}

}  // namespace nic_bench
