// SPDX-License-Identifier: Apache-2.0
// The interface between the dpdk backend (in libgnio) and libgnio_dpdk.so,
// the module that holds every DPDK call. The module is loaded at run time,
// so that programs linking the static libgnio need no DPDK to link, and
// DPDK's inline fast path (rx/tx bursts, mbuf frees) stays inline inside it.
// Plain C types only: the two sides share no C++ runtime state.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GNIO_DPDK_API_VERSION 1
#define GNIO_DPDK_ERR_LEN 512

// What rte_eth_dev_info_get and the device say of one port.
struct gnio_dpdk_port_info {
  char name[128];       // ethdev name: a PCI address or the vdev's name
  char driver[64];      // the PMD ("net_ring", "mlx5_pci", ...)
  char bus[32];         // "pci", "vdev", "auxiliary"
  uint16_t port_id;
  int32_t numa_node;
  uint16_t max_rx_queues;
  uint16_t max_tx_queues;
  uint16_t rx_desc_min, rx_desc_max, rx_desc_align;
  uint16_t tx_desc_min, tx_desc_max, tx_desc_align;
  uint32_t max_rx_pktlen;
  uint16_t min_mtu, max_mtu;
  uint16_t mtu;
  uint64_t rx_offload_capa;         // RTE_ETH_RX_OFFLOAD_* bits
  uint64_t tx_offload_capa;         // RTE_ETH_TX_OFFLOAD_* bits
  uint64_t flow_type_rss_offloads;  // RTE_ETH_RSS_* bits the NIC can hash
  uint8_t hash_key_size;
  uint16_t reta_size;
  uint8_t mac[6];
  uint32_t link_speed_mbps;
  uint8_t link_up;
  uint8_t can_dma_map;  // the device's bus maps external memory for DMA (PCI, auxiliary)
  // Names of the set capability bits, space-separated.
  char rx_offloads[512];
  char tx_offloads[512];
  char rss_functions[512];
};

struct gnio_dpdk_setup {
  uint16_t port_id;
  uint16_t rx_queues;
  uint16_t tx_queues;
  uint16_t rx_desc;
  uint16_t tx_desc;
  uint32_t rx_mbufs;   // per RX queue, in its external memory region
  uint32_t tx_mbufs;   // per TX queue
  uint32_t data_room;  // bytes of frame data per mbuf (headroom not included)
  uint8_t rss;         // spread flows over the RX queues with the NIC's hash
};

// One received frame, always one segment inside its queue's region.
struct gnio_dpdk_rx {
  const uint8_t* data;
  uint32_t len;      // bytes at data
  uint32_t pkt_len;  // bytes of the frame on the wire (more than len: cut to the data room)
  uint32_t rss_hash;
  uint8_t has_rss_hash;
  void* mbuf;
};

struct gnio_dpdk_region {
  uint8_t* base;
  size_t bytes;
};

struct gnio_dpdk_stats {
  uint64_t ipackets, ibytes, imissed, ierrors, rx_nombuf;
  uint64_t opackets, obytes, oerrors;
  uint64_t rx_copied;        // frames copied into gnio's pool (PMD mbuf outside it, or chained)
  uint64_t rx_copy_dropped;  // ... dropped for want of a free mbuf in it
};

struct gnio_dpdk_api {
  uint32_t version;
  // Initialises the EAL once per process with `args` (whitespace-separated,
  // argv[0] not included). *already: 1 when it was up before (another user
  // in this process), the arguments were then not used. 0 on success.
  int (*eal_init)(const char* args, int* already, char* err);
  // The port named `name` ("net_ring0", "net_pcap0,iface=eth0",
  // "0000:3b:00.0" or a port number), probing the device when it is not yet.
  int (*port_find)(const char* name, uint16_t* port_id, char* err);
  int (*port_info)(uint16_t port_id, struct gnio_dpdk_port_info* out, char* err);
  // Configures and starts the port; regions[q] receives the memory of RX
  // queue q's mbuf pool (page-aligned host memory, registered with DPDK).
  int (*port_start)(const struct gnio_dpdk_setup* s, struct gnio_dpdk_region* regions, char* err);
  void (*port_close)(uint16_t port_id);
  uint16_t (*rx_burst)(uint16_t port_id, uint16_t queue, struct gnio_dpdk_rx* out, uint16_t n);
  void (*free_mbufs)(void* const* mbufs, uint32_t n);
  // Copies frames into mbufs of the queue's TX pool and sends them; returns
  // how many the PMD took (the rest are not sent). -1 with err: a frame does
  // not fit an mbuf.
  int (*tx_burst)(uint16_t port_id, uint16_t queue, const uint8_t* const* data, const uint32_t* len, uint16_t n,
                  char* err);
  int (*stats)(uint16_t port_id, struct gnio_dpdk_stats* out);
};

// The one symbol the module exports.
typedef const struct gnio_dpdk_api* (*gnio_dpdk_api_fn)(void);
const struct gnio_dpdk_api* gnio_dpdk_api_v1(void);

#ifdef __cplusplus
}
#endif
