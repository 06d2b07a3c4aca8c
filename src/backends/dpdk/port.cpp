// SPDX-License-Identifier: Apache-2.0
// libgnio_dpdk.so: every DPDK call of the dpdk backend, behind the plain C
// table of port_api.h. One instance per process (the EAL is one per process).
//
// RX mbuf pools keep their frame data in external memory: page-aligned
// anonymous memory mapped here, registered with rte_extmem_register (and
// DMA-mapped for devices on a DMA-capable bus), one region per RX queue.
// The backend hands the region to the engine, which registers it with the
// GPU: frames stay where the PMD put them. For net_af_xdp, whose UMEM is the
// pool's own objects, the whole mbufs (not only their data) live in the
// region: the kernel writes frames into it and nothing is copied either.
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "port_api.h"

namespace {

constexpr uint16_t kChunk = 64;  // mbufs per inner burst (stack arrays)

void set_err(char* err, const char* fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(err, GNIO_DPDK_ERR_LEN, fmt, ap);
  va_end(ap);
}

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

std::mutex g_mu;
std::vector<PortState> g_ports(RTE_MAX_ETHPORTS);

// ---- EAL ---------------------------------------------------------------------

int eal_init(const char* args, int* already, char* err) {
  static std::mutex mu;
  static int state = 0;  // 0: not tried, 1: up, -1: failed (the EAL cannot be retried)
  static int was_up = 0;
  static std::string failure;
  std::lock_guard lock(mu);
  if (state == 1) {
    *already = was_up;
    return 0;
  }
  if (state == -1) {
    set_err(err, "%s", failure.c_str());
    return -1;
  }
  // The EAL keeps pointers into argv: the strings live as long as the process.
  static std::vector<std::string> words;
  static std::vector<char*> argv;
  words.assign(1, "gnio");
  std::istringstream in(args ? args : "");
  for (std::string w; in >> w;) words.push_back(w);
  argv.clear();
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  // rte_eal_init pins the calling thread to the main lcore; gnio's threads
  // (engines started later inherit the mask) keep the CPUs they had.
  cpu_set_t before;
  const bool have_mask = pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0;
  int rc = rte_eal_init(static_cast<int>(words.size()), argv.data());
  const int eal_errno = rte_errno;
  if (have_mask) pthread_setaffinity_np(pthread_self(), sizeof before, &before);
  if (rc < 0 && eal_errno == EALREADY) {
    state = 1;
    was_up = 1;
    *already = 1;
    return 0;
  }
  if (rc < 0) {
    state = -1;
    failure = std::string("rte_eal_init('") + (args ? args : "") + "') failed: " + rte_strerror(eal_errno);
    set_err(err, "%s", failure.c_str());
    return -1;
  }
  state = 1;
  *already = 0;
  return 0;
}

// ---- ports -------------------------------------------------------------------

bool all_digits(const char* s) {
  if (!*s) return false;
  for (; *s; ++s)
    if (!std::isdigit(static_cast<unsigned char>(*s))) return false;
  return true;
}

int find_by_device_name(const std::string& devname, uint16_t* port_id) {
  if (rte_eth_dev_get_port_by_name(devname.c_str(), port_id) == 0) return 0;
  // Some PMDs (mlx5 with representors, ...) name ports apart from their device.
  uint16_t p;
  RTE_ETH_FOREACH_DEV(p) {
    rte_eth_dev_info info;
    if (rte_eth_dev_info_get(p, &info) == 0 && info.device && devname == rte_dev_name(info.device)) {
      *port_id = p;
      return 0;
    }
  }
  return -1;
}

int port_find(const char* name, uint16_t* port_id, char* err) {
  std::lock_guard lock(g_mu);
  if (all_digits(name)) {
    unsigned long p = std::strtoul(name, nullptr, 10);
    if (p >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port(static_cast<uint16_t>(p))) {
      set_err(err, "no DPDK port %s (%u port(s) available)", name, rte_eth_dev_count_avail());
      return -1;
    }
    *port_id = static_cast<uint16_t>(p);
    return 0;
  }
  std::string devname(name);
  devname = devname.substr(0, devname.find(','));
  if (find_by_device_name(devname, port_id) == 0) return 0;
  int rc = rte_dev_probe(name);
  if (rc < 0) {
    set_err(err, "probing the device '%s' failed: %s", name, rte_strerror(-rc));
    return -1;
  }
  if (find_by_device_name(devname, port_id) != 0) {
    set_err(err, "the device '%s' was probed but made no ethdev port named '%s'", name, devname.c_str());
    return -1;
  }
  return 0;
}

struct RssName {
  uint64_t bit;
  const char* name;
};
const RssName kRssNames[] = {
    {RTE_ETH_RSS_IPV4, "ipv4"},
    {RTE_ETH_RSS_FRAG_IPV4, "ipv4-frag"},
    {RTE_ETH_RSS_NONFRAG_IPV4_TCP, "ipv4-tcp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_UDP, "ipv4-udp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_SCTP, "ipv4-sctp"},
    {RTE_ETH_RSS_NONFRAG_IPV4_OTHER, "ipv4-other"},
    {RTE_ETH_RSS_IPV6, "ipv6"},
    {RTE_ETH_RSS_FRAG_IPV6, "ipv6-frag"},
    {RTE_ETH_RSS_NONFRAG_IPV6_TCP, "ipv6-tcp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_UDP, "ipv6-udp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_SCTP, "ipv6-sctp"},
    {RTE_ETH_RSS_NONFRAG_IPV6_OTHER, "ipv6-other"},
    {RTE_ETH_RSS_L2_PAYLOAD, "l2-payload"},
    {RTE_ETH_RSS_IPV6_EX, "ipv6-ex"},
    {RTE_ETH_RSS_IPV6_TCP_EX, "ipv6-tcp-ex"},
    {RTE_ETH_RSS_IPV6_UDP_EX, "ipv6-udp-ex"},
    {RTE_ETH_RSS_PORT, "port"},
    {RTE_ETH_RSS_VXLAN, "vxlan"},
    {RTE_ETH_RSS_GENEVE, "geneve"},
    {RTE_ETH_RSS_NVGRE, "nvgre"},
    {RTE_ETH_RSS_GTPU, "gtpu"},
    {RTE_ETH_RSS_ETH, "eth"},
    {RTE_ETH_RSS_S_VLAN, "s-vlan"},
    {RTE_ETH_RSS_C_VLAN, "c-vlan"},
    {RTE_ETH_RSS_ESP, "esp"},
    {RTE_ETH_RSS_AH, "ah"},
    {RTE_ETH_RSS_L2TPV3, "l2tpv3"},
    {RTE_ETH_RSS_PFCP, "pfcp"},
    {RTE_ETH_RSS_PPPOE, "pppoe"},
    {RTE_ETH_RSS_ECPRI, "ecpri"},
    {RTE_ETH_RSS_MPLS, "mpls"},
    {RTE_ETH_RSS_IPV4_CHKSUM, "ipv4-chksum"},
    {RTE_ETH_RSS_L4_CHKSUM, "l4-chksum"},
};

template <class NameOf>
void bit_names(uint64_t bits, char* out, size_t cap, NameOf name_of) {
  std::string s;
  for (int b = 0; b < 64; ++b) {
    const uint64_t bit = uint64_t{1} << b;
    if (!(bits & bit)) continue;
    const char* n = name_of(bit);
    if (!s.empty()) s += ' ';
    s += n ? n : ("bit" + std::to_string(b)).c_str();
  }
  std::snprintf(out, cap, "%s", s.c_str());
}

int port_info(uint16_t port_id, gnio_dpdk_port_info* out, char* err) {
  *out = gnio_dpdk_port_info{};
  rte_eth_dev_info info;
  int rc = rte_eth_dev_info_get(port_id, &info);
  if (rc != 0) {
    set_err(err, "rte_eth_dev_info_get(port %u) failed: %s", port_id, rte_strerror(-rc));
    return -1;
  }
  out->port_id = port_id;
  rte_eth_dev_get_name_by_port(port_id, out->name);
  std::snprintf(out->driver, sizeof out->driver, "%s", info.driver_name ? info.driver_name : "");
  const rte_bus* bus = info.device ? rte_dev_bus(info.device) : nullptr;
  std::snprintf(out->bus, sizeof out->bus, "%s", bus ? rte_bus_name(bus) : "");
  out->can_dma_map = std::strcmp(out->bus, "pci") == 0 || std::strcmp(out->bus, "auxiliary") == 0;
  out->numa_node = rte_eth_dev_socket_id(port_id);
  out->max_rx_queues = info.max_rx_queues;
  out->max_tx_queues = info.max_tx_queues;
  out->rx_desc_min = info.rx_desc_lim.nb_min;
  out->rx_desc_max = info.rx_desc_lim.nb_max;
  out->rx_desc_align = info.rx_desc_lim.nb_align;
  out->tx_desc_min = info.tx_desc_lim.nb_min;
  out->tx_desc_max = info.tx_desc_lim.nb_max;
  out->tx_desc_align = info.tx_desc_lim.nb_align;
  out->max_rx_pktlen = info.max_rx_pktlen;
  out->min_mtu = info.min_mtu;
  out->max_mtu = info.max_mtu;
  uint16_t mtu = 0;
  if (rte_eth_dev_get_mtu(port_id, &mtu) == 0) out->mtu = mtu;
  out->rx_offload_capa = info.rx_offload_capa;
  out->tx_offload_capa = info.tx_offload_capa;
  out->flow_type_rss_offloads = info.flow_type_rss_offloads;
  out->hash_key_size = info.hash_key_size;
  out->reta_size = info.reta_size;
  rte_ether_addr mac{};
  if (rte_eth_macaddr_get(port_id, &mac) == 0) std::memcpy(out->mac, mac.addr_bytes, 6);
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_id, &link) == 0) {
    out->link_up = link.link_status == RTE_ETH_LINK_UP;
    out->link_speed_mbps = link.link_speed;
  }
  bit_names(info.rx_offload_capa, out->rx_offloads, sizeof out->rx_offloads,
            [](uint64_t b) { return rte_eth_dev_rx_offload_name(b); });
  bit_names(info.tx_offload_capa, out->tx_offloads, sizeof out->tx_offloads,
            [](uint64_t b) { return rte_eth_dev_tx_offload_name(b); });
  bit_names(info.flow_type_rss_offloads, out->rss_functions, sizeof out->rss_functions, [](uint64_t b) -> const char* {
    for (const auto& n : kRssNames)
      if (n.bit == b) return n.name;
    return nullptr;
  });
  return 0;
}

// net_af_xdp (22.11, with libxdp 1.3) leaves its UMEM's XDP socket open
// when the port closes: the socket stays bound to its queue, and a later
// port on that queue is refused (bind: EBUSY) until the process ends. The
// port notes the XDP sockets that appeared while its RX queues were set up
// and, once DPDK closed the port, closes the descriptors that still hold
// those sockets (same inode). Kernels without XDP sock_diag cannot say
// which queue a socket is bound to, so an XDP socket another thread opens
// during that setup would be counted as the port's: open afxdp: queues and
// net_af_xdp ports of one process one after the other.
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

// A frame whose data is not one segment inside the queue's region (net_ring
// hands over whatever mbufs were enqueued; a frame longer than the data
// room is chained) is copied once into an mbuf of the queue's pool, so that
// every frame the backend returns lies in its rx_memory(). nullptr: no mbuf
// free for the copy (the frame is dropped).
rte_mbuf* into_region(RxQueueState& q, rte_mbuf* m) {
  const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
  if (m->nb_segs == 1 && data >= q.base && data + m->data_len <= q.end) return m;
  rte_mbuf* copy = rte_pktmbuf_alloc(q.pool);
  if (!copy) {
    ++q.copy_dropped;
    rte_pktmbuf_free(m);
    return nullptr;
  }
  const uint32_t room = rte_pktmbuf_tailroom(copy);
  const uint32_t len = std::min<uint32_t>(m->pkt_len, room);
  char* dst = rte_pktmbuf_append(copy, static_cast<uint16_t>(len));
  const void* src = rte_pktmbuf_read(m, 0, len, dst);
  if (src != dst) std::memcpy(dst, src, len);
  copy->pkt_len = len;
  copy->hash = m->hash;
  copy->ol_flags |= m->ol_flags & RTE_MBUF_F_RX_RSS_HASH;
  copy->port = m->port;
  rte_pktmbuf_free(m);
  ++q.copied;
  return copy;
}

uint16_t rx_burst(uint16_t port_id, uint16_t queue, gnio_dpdk_rx* out, uint16_t n) {
  RxQueueState& q = g_ports[port_id].rxq[queue];
  uint16_t got = 0;
  rte_mbuf* m[kChunk];
  while (got < n) {
    const uint16_t want = static_cast<uint16_t>(std::min<int>(kChunk, n - got));
    const uint16_t k = rte_eth_rx_burst(port_id, queue, m, want);
    for (uint16_t i = 0; i < k; ++i) {
      const uint32_t wire_len = m[i]->pkt_len;
      rte_mbuf* f_m = into_region(q, m[i]);
      if (!f_m) continue;
      gnio_dpdk_rx& f = out[got++];
      f.data = rte_pktmbuf_mtod(f_m, const uint8_t*);
      f.len = f_m->data_len;
      f.pkt_len = wire_len;
      f.has_rss_hash = (f_m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0;
      f.rss_hash = f.has_rss_hash ? f_m->hash.rss : 0;
      f.mbuf = f_m;
    }
    if (k < want) break;
  }
  return got;
}

void free_mbufs(void* const* mbufs, uint32_t n) {
  rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(const_cast<void**>(mbufs)), n);
}

int tx_burst(uint16_t port_id, uint16_t queue, const uint8_t* const* data, const uint32_t* len, uint16_t n,
             char* err) {
  PortState& st = g_ports[port_id];
  if (queue >= st.tx_alloc.size()) {
    set_err(err, "port %u has no TX queue %u", port_id, queue);
    return -1;
  }
  rte_mempool* pool = st.tx_alloc[queue];
  int sent = 0;
  rte_mbuf* m[kChunk];
  while (sent < n) {
    const uint16_t want = static_cast<uint16_t>(std::min<int>(kChunk, n - sent));
    for (uint16_t i = 0; i < want; ++i)
      if (len[sent + i] > st.data_room) {
        set_err(err, "a frame of %u bytes does not fit the %u-byte mbufs of port %u", len[sent + i], st.data_room,
                port_id);
        return -1;
      }
    if (rte_pktmbuf_alloc_bulk(pool, m, want) != 0) {
      // Mbufs wait in the NIC's ring for completions: collect them, once.
      rte_eth_tx_done_cleanup(port_id, queue, 0);
      if (rte_pktmbuf_alloc_bulk(pool, m, want) != 0) break;
    }
    for (uint16_t i = 0; i < want; ++i) {
      char* dst = rte_pktmbuf_append(m[i], static_cast<uint16_t>(len[sent + i]));
      std::memcpy(dst, data[sent + i], len[sent + i]);
    }
    const uint16_t k = rte_eth_tx_burst(port_id, queue, m, want);
    if (k < want) rte_pktmbuf_free_bulk(m + k, want - k);
    sent += k;
    if (k < want) break;
  }
  return sent;
}

int stats(uint16_t port_id, gnio_dpdk_stats* out) {
  rte_eth_stats s{};
  if (rte_eth_stats_get(port_id, &s) != 0) return -1;
  *out = gnio_dpdk_stats{s.ipackets, s.ibytes, s.imissed, s.ierrors, s.rx_nombuf, s.opackets, s.obytes, s.oerrors,
                         0, 0};
  for (const RxQueueState& q : g_ports[port_id].rxq) {
    out->rx_copied += q.copied;
    out->rx_copy_dropped += q.copy_dropped;
  }
  return 0;
}

const gnio_dpdk_api kApi = {
    GNIO_DPDK_API_VERSION, eal_init, port_find, port_info, port_start, port_close, rx_burst, free_mbufs, tx_burst,
    stats,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const gnio_dpdk_api* gnio_dpdk_api_v1(void) { return &kApi; }
