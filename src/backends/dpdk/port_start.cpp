// SPDX-License-Identifier: Apache-2.0
// Configuring and starting a port with its RX and TX queues and their mbuf
// pools (port_start), and releasing all of it again (port_close).
//
// RX mbuf pools keep their frame data in external memory: page-aligned
// anonymous memory mapped here, registered with rte_extmem_register (and
// DMA-mapped for devices on a DMA-capable bus), one region per RX queue.
// The backend hands the region to the engine, which registers it with the
// GPU: frames stay where the PMD put them. For net_af_xdp, whose UMEM is the
// pool's own objects, the whole mbufs (not only their data) live in the
// region: the kernel writes frames into it and nothing is copied either.
#include <sys/mman.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memory.h>
#include <rte_mempool.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "port_module.hpp"

namespace gnio::dpdk_module {

namespace {

void release_port(uint16_t port_id, PortState& st) {
  rte_eth_dev_info info{};
  const bool have_info = rte_eth_dev_info_get(port_id, &info) == 0;
  rte_device* dev = have_info ? info.device : nullptr;
  if (st.open) {
    rte_eth_dev_stop(port_id);
    // Removing the device closes the port and lets the same spec probe it
    // again later in this process (a closed port's device cannot be).
    if (!dev || rte_dev_remove(dev) != 0) rte_eth_dev_close(port_id);
    close_left_open(st.xdp_sockets);
  }
  for (rte_mempool* p : st.rx_pools) rte_mempool_free(p);
  for (rte_mempool* p : st.tx_pools) rte_mempool_free(p);
  for (RxRegion& r : st.regions) {
    if (r.dma_mapped && dev) rte_dev_dma_unmap(dev, r.base, reinterpret_cast<uintptr_t>(r.base), r.bytes);
    if (r.registered) rte_extmem_unregister(r.base, r.bytes);
    if (r.base) munmap(r.base, r.bytes);
  }
  st = PortState{};
}

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Objects packed back to back, none skipped at page ends and none padded
// to spread them over memory channels: AF_XDP computes each chunk's offset
// as (object - region base) over populated_size chunks, and a chunk must
// not be larger than it has to.
constexpr unsigned kPoolFlags = RTE_MEMPOOL_F_NO_IOVA_CONTIG | RTE_MEMPOOL_F_NO_SPREAD;

// An mbuf pool whose objects (mbuf header, headroom and data) all lie in
// `reg`, from its first byte on: net_af_xdp makes that memory its UMEM.
rte_mempool* pool_in_region(const char* name, const RxRegion& reg, uint64_t iova, uint32_t n, uint16_t data_room,
                            int socket, char* err) {
  rte_mempool* mp = rte_mempool_create_empty(name, n, sizeof(rte_mbuf) + data_room, 0,
                                             sizeof(rte_pktmbuf_pool_private), socket, kPoolFlags);
  if (!mp) {
    set_err(err, "creating the mbuf pool %s of %u mbufs failed: %s", name, n, rte_strerror(rte_errno));
    return nullptr;
  }
  int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr);
  if (rc != 0) {
    set_err(err, "setting the ops '%s' of mbuf pool %s failed: %s", rte_mbuf_best_mempool_ops(), name,
            rte_strerror(-rc));
    rte_mempool_free(mp);
    return nullptr;
  }
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = data_room;
  priv.mbuf_priv_size = 0;
  rte_pktmbuf_pool_init(mp, &priv);
  rc = rte_mempool_populate_iova(mp, reinterpret_cast<char*>(reg.base), iova, reg.bytes, nullptr, nullptr);
  if (rc < 0 || static_cast<uint32_t>(rc) != n) {
    set_err(err, "placing the %u mbufs of pool %s in its %zu-byte region failed (%d placed): %s", n, name, reg.bytes,
            rc, rc < 0 ? rte_strerror(-rc) : "the region is too small");
    rte_mempool_free(mp);
    return nullptr;
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

}  // namespace

int port_start(const gnio_dpdk_setup* s, gnio_dpdk_region* regions, char* err) {
  std::lock_guard lock(g_mu);
  const uint16_t port = s->port_id;
  PortState& st = g_ports[port];
  if (st.open) {
    set_err(err, "DPDK port %u is already open in this process", port);
    return -1;
  }
  auto fail = [&](int rc) {
    release_port(port, st);
    return rc;
  };
  rte_eth_dev_info info;
  int rc = rte_eth_dev_info_get(port, &info);
  if (rc != 0) {
    set_err(err, "rte_eth_dev_info_get(port %u) failed: %s", port, rte_strerror(-rc));
    return -1;
  }
  const rte_bus* bus = info.device ? rte_dev_bus(info.device) : nullptr;
  const bool dma_bus = bus && (std::strcmp(rte_bus_name(bus), "pci") == 0 || std::strcmp(rte_bus_name(bus), "auxiliary") == 0);
  if (dma_bus && rte_eal_iova_mode() != RTE_IOVA_VA) {
    set_err(err,
            "port %u (%s) would DMA into gnio's external mbuf memory, which needs IOVA-as-VA; "
            "the EAL chose physical addresses: bind the device to vfio-pci with an IOMMU or pass eal=\"--iova-mode=va ...\"",
            port, info.driver_name);
    return -1;
  }

  rte_eth_conf conf{};
  if (s->rss) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_key = nullptr;  // the NIC's default key
    conf.rx_adv_conf.rss_conf.rss_hf =
        (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
    if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH) conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
  }
  if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
  rc = rte_eth_dev_configure(port, s->rx_queues, s->tx_queues, &conf);
  if (rc != 0) {
    set_err(err, "rte_eth_dev_configure(port %u, %u RX, %u TX queues) failed: %s", port, s->rx_queues, s->tx_queues,
            rte_strerror(-rc));
    return -1;
  }
  st.open = true;  // configured: stop/close from here on
  st.data_room = s->data_room;
  uint16_t rxd = s->rx_desc, txd = s->tx_desc;
  rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
  const int socket = rte_eth_dev_socket_id(port) >= 0 ? rte_eth_dev_socket_id(port) : SOCKET_ID_ANY;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uint16_t elt_size = static_cast<uint16_t>(round_up(RTE_PKTMBUF_HEADROOM + s->data_room, RTE_CACHE_LINE_SIZE));

  // net_af_xdp registers its pool's memory as the XDP socket's UMEM, one
  // chunk per mempool object: the objects themselves go into the region.
  const bool umem_pmd = info.driver_name && std::strcmp(info.driver_name, "net_af_xdp") == 0;
  const size_t obj_bytes = umem_pmd ? rte_mempool_calc_obj_size(sizeof(rte_mbuf) + elt_size, kPoolFlags, nullptr)
                                    : elt_size;
  if (umem_pmd && obj_bytes > page) {
    const size_t around = obj_bytes - sizeof(rte_mbuf) - elt_size;  // the mempool's object header
    const size_t max_frame =
        (page - around - sizeof(rte_mbuf)) / RTE_CACHE_LINE_SIZE * RTE_CACHE_LINE_SIZE - RTE_PKTMBUF_HEADROOM;
    set_err(err,
            "port %u (net_af_xdp): an mbuf of %zu bytes (frame=%u plus headers) is more than the %zu-byte page an "
            "AF_XDP UMEM chunk may span; use frame=%zu or less",
            port, obj_bytes, s->data_room, page, max_frame);
    return fail(-1);
  }

  const std::vector<XdpSocketFd> xdp_before = umem_pmd ? xdp_socket_fds() : std::vector<XdpSocketFd>{};
  for (uint16_t q = 0; q < s->rx_queues; ++q) {
    RxRegion r;
    r.bytes = round_up(static_cast<size_t>(s->rx_mbufs) * obj_bytes, page);
    void* mem = mmap(nullptr, r.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) {
      set_err(err, "mapping %zu bytes of mbuf memory for RX queue %u failed: %s", r.bytes, q, std::strerror(errno));
      return fail(-1);
    }
    r.base = static_cast<uint8_t*>(mem);
    st.regions.push_back(r);
    RxRegion& reg = st.regions.back();
    if (rte_extmem_register(reg.base, reg.bytes, nullptr, 0, page) != 0) {
      set_err(err, "rte_extmem_register(%zu bytes) for RX queue %u failed: %s", reg.bytes, q, rte_strerror(rte_errno));
      return fail(-1);
    }
    reg.registered = true;
    const uint64_t iova = reinterpret_cast<uintptr_t>(reg.base);  // IOVA as VA (checked above for DMA buses)
    if (dma_bus) {
      if (rte_dev_dma_map(info.device, reg.base, iova, reg.bytes) != 0) {
        set_err(err, "rte_dev_dma_map of RX queue %u's mbuf memory (%zu bytes) for port %u (%s) failed: %s", q,
                reg.bytes, port, info.driver_name, rte_strerror(rte_errno));
        return fail(-1);
      }
      reg.dma_mapped = true;
    }
    char name[RTE_MEMPOOL_NAMESIZE];
    std::snprintf(name, sizeof name, "gnio_rx%u_%u", port, q);
    rte_mempool* pool = nullptr;
    if (umem_pmd) {
      pool = pool_in_region(name, reg, iova, s->rx_mbufs, elt_size, socket, err);
      if (!pool) return fail(-1);
    } else {
      rte_pktmbuf_extmem ext{reg.base, iova, reg.bytes, elt_size};
      pool = rte_pktmbuf_pool_create_extbuf(name, s->rx_mbufs, 0, 0, elt_size, socket, &ext, 1);
      if (!pool) {
        set_err(err, "creating the RX mbuf pool of %u mbufs in external memory for port %u queue %u failed: %s",
                s->rx_mbufs, port, q, rte_strerror(rte_errno));
        return fail(-1);
      }
    }
    st.rx_pools.push_back(pool);
    rc = rte_eth_rx_queue_setup(port, q, rxd, socket, nullptr, pool);
    if (umem_pmd) st.xdp_sockets = appeared(xdp_before, xdp_socket_fds());  // a failed setup leaves one too
    if (rc != 0) {
      set_err(err, "rte_eth_rx_queue_setup(port %u, queue %u, %u descriptors) failed: %s%s", port, q, rxd,
              rte_strerror(-rc),
              umem_pmd ? " (net_af_xdp: the kernel refused the XDP socket or its UMEM; check that the interface "
                         "exists in this network namespace, takes an XDP program, and that start_queue/queue_count "
                         "name queues it has; DPDK's log says which step failed)"
                       : "");
      return fail(-1);
    }
    regions[q] = gnio_dpdk_region{reg.base, reg.bytes};
    st.rxq.push_back(RxQueueState{pool, reg.base, reg.base + reg.bytes, 0, 0});
  }
  for (uint16_t q = 0; q < s->tx_queues; ++q) {
    if (umem_pmd && q < st.rx_pools.size()) {
      // TX queue q shares RX queue q's XDP socket and UMEM: an mbuf of that
      // pool is sent in place, one of another pool the PMD would copy again.
      st.tx_alloc.push_back(st.rx_pools[q]);
    } else {
      char name[RTE_MEMPOOL_NAMESIZE];
      std::snprintf(name, sizeof name, "gnio_tx%u_%u", port, q);
      rte_mempool* pool = rte_pktmbuf_pool_create(name, s->tx_mbufs, 0, 0, elt_size, socket);
      if (!pool) {
        set_err(err, "creating the TX mbuf pool of %u mbufs for port %u queue %u failed: %s", s->tx_mbufs, port, q,
                rte_strerror(rte_errno));
        return fail(-1);
      }
      st.tx_pools.push_back(pool);
      st.tx_alloc.push_back(pool);
    }
    rc = rte_eth_tx_queue_setup(port, q, txd, socket, nullptr);
    if (rc != 0) {
      set_err(err, "rte_eth_tx_queue_setup(port %u, queue %u, %u descriptors) failed: %s", port, q, txd,
              rte_strerror(-rc));
      return fail(-1);
    }
  }
  rc = rte_eth_dev_start(port);
  if (rc != 0) {
    set_err(err, "rte_eth_dev_start(port %u) failed: %s", port, rte_strerror(-rc));
    return fail(-1);
  }
  rte_eth_promiscuous_enable(port);  // a PMD without it (-ENOTSUP) receives what it receives
  return 0;
}

void port_close(uint16_t port_id) {
  std::lock_guard lock(g_mu);
  if (port_id < RTE_MAX_ETHPORTS) release_port(port_id, g_ports[port_id]);
}

}  // namespace gnio::dpdk_module
