// SPDX-License-Identifier: Apache-2.0
// net_af_xdp (22.11, with libxdp 1.3) leaves its UMEM's XDP socket open
// when the port closes: the socket stays bound to its queue, and a later
// port on that queue is refused (bind: EBUSY) until the process ends. The
// port notes the XDP sockets that appeared while its RX queues were set up
// and, once DPDK closed the port, closes the descriptors that still hold
// those sockets (same inode). Kernels without XDP sock_diag cannot say
// which queue a socket is bound to, so an XDP socket another thread opens
// during that setup would be counted as the port's: open afxdp: queues and
// net_af_xdp ports of one process one after the other.
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "port_module.hpp"

namespace gnio::dpdk_module {

std::vector<XdpSocketFd> xdp_socket_fds() {
  std::vector<XdpSocketFd> out;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const int fd = std::atoi(e->d_name);
    struct stat st{};
    int domain = 0;
    socklen_t len = sizeof domain;
    if (fd > 2 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
        getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_XDP)
      out.push_back({fd, st.st_ino});
  }
  closedir(d);
  return out;
}

std::vector<XdpSocketFd> appeared(const std::vector<XdpSocketFd>& before, const std::vector<XdpSocketFd>& after) {
  std::vector<XdpSocketFd> out;
  for (const XdpSocketFd& a : after) {
    bool old = false;
    for (const XdpSocketFd& b : before) old |= a.inode == b.inode;
    if (!old) out.push_back(a);
  }
  return out;
}

// The kernel frees the socket's queue in deferred work after the last
// close (about 20 ms here); a port opened on that queue before then is
// refused, so closing waits for it, with margin.
void close_left_open(const std::vector<XdpSocketFd>& fds) {
  if (fds.empty()) return;
  for (const XdpSocketFd& s : fds) {
    struct stat st{};
    if (fstat(s.fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == s.inode) close(s.fd);
  }
  usleep(100 * 1000);
}

}  // namespace gnio::dpdk_module
