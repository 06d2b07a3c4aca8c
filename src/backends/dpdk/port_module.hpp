// SPDX-License-Identifier: Apache-2.0
// What the files of libgnio_dpdk.so share: the state of each port the
// module opened, the error text of a failed call, and the functions of the
// API table (port.cpp) that port_api.h describes.
#pragma once

#include <sys/types.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "port_api.h"

namespace gnio::dpdk_module {

// Writes the message of a failed call into err (GNIO_DPDK_ERR_LEN bytes), if given.
void set_err(char* err, const char* fmt, ...);

// An XDP socket's descriptor, known by the socket's inode.
struct XdpSocketFd {
  int fd = -1;
  ino_t inode = 0;
};

struct RxRegion {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  bool registered = false;
  bool dma_mapped = false;
};

// Counters of frames the module copied into the queue's own pool.
struct RxQueueState {
  rte_mempool* pool = nullptr;
  const uint8_t* base = nullptr;
  const uint8_t* end = nullptr;
  uint64_t copied = 0;        // the PMD's mbuf was outside the region or chained
  uint64_t copy_dropped = 0;  // ... and the pool had no mbuf for the copy
};

struct PortState {
  bool open = false;
  std::vector<XdpSocketFd> xdp_sockets;  // net_af_xdp: its queues' sockets, closed after the PMD's close
  std::vector<rte_mempool*> rx_pools, tx_pools;  // owned
  std::vector<rte_mempool*> tx_alloc;            // per TX queue: the pool its frames are copied into
  std::vector<RxQueueState> rxq;
  std::vector<RxRegion> regions;
  uint32_t data_room = 0;
};

// Held while a port is looked up, set up or torn down; the bursts and
// stats run without it.
extern std::mutex g_mu;
extern std::vector<PortState> g_ports;  // by port id, RTE_MAX_ETHPORTS of them

// net_af_xdp's XDP sockets (port_xdp_sockets.cpp).
std::vector<XdpSocketFd> xdp_socket_fds();
std::vector<XdpSocketFd> appeared(const std::vector<XdpSocketFd>& before, const std::vector<XdpSocketFd>& after);
void close_left_open(const std::vector<XdpSocketFd>& fds);

// The API table's entries, as port_api.h describes them.
int eal_init(const char* args, int* already, char* err);
int port_find(const char* name, uint16_t* port_id, char* err);
int port_info(uint16_t port_id, gnio_dpdk_port_info* out, char* err);
int port_start(const gnio_dpdk_setup* s, gnio_dpdk_region* regions, char* err);
void port_close(uint16_t port_id);
uint16_t rx_burst(uint16_t port_id, uint16_t queue, gnio_dpdk_rx* out, uint16_t n);
void free_mbufs(void* const* mbufs, uint32_t n);
int tx_burst(uint16_t port_id, uint16_t queue, const uint8_t* const* data, const uint32_t* len, uint16_t n,
             char* err);
int stats(uint16_t port_id, gnio_dpdk_stats* out);

}  // namespace gnio::dpdk_module
