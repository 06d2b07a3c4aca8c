// SPDX-License-Identifier: Apache-2.0
// dpdk:PORT[,queues=N][,eal=ARGS][,mbuf_mem=host|gpu][,rxd=N][,txd=N][,mbufs=N][,frame=BYTES]
// — a DPDK ethdev port: a PCI address ("0000:3b:00.0"), a virtual device
// with its arguments in quotes (dpdk:"net_af_packet0,iface=eth0"), or a port
// number. Every DPDK call is in libgnio_dpdk.so (port*.cpp), loaded when the
// first dpdk spec opens (module.cpp).
//
// RX frames stay in backend-owned memory (RxDelivery::InPlace or Dma): each RX queue's mbuf pool keeps its
// frame data in one page-aligned host region (rte_pktmbuf_pool_create_extbuf)
// that is the queue's rx_memory(); the engine registers it with the GPU and
// descriptors point at the frames where the PMD wrote them (net_af_xdp:
// the region holds the whole mbufs and is the XDP socket's UMEM). The cookie
// is the mbuf; rx_release() frees it once the kernel released the frame.
// TX copies each frame once into an mbuf of the queue's TX pool.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/dpdk/internal.hpp"
#include "backends/dpdk/port_api.h"
#include "backends/drivers.hpp"
#include "backends/port_registry.hpp"
#include "backends/spec.hpp"
#include "core/log.hpp"

namespace gnio::backend {

namespace {

using dpdk::Module;
using dpdk::Options;

constexpr uint32_t kXdpHeadroom = 256;  // XDP_PACKET_HEADROOM

bool same_options(const Options& a, const Options& b) {
  return a.queues == b.queues && a.gpu_mem == b.gpu_mem && a.rxd == b.rxd && a.txd == b.txd &&
         a.mbufs == b.mbufs && a.frame == b.frame;
}

// mbuf_mem=gpu: the checks that need no port, then the ones that need the PMD.
Status gpu_memory_refusal_by_name(const Options& o, const std::string& spec_text) {
  const std::string dev = o.port.substr(0, o.port.find(','));
  if (dev.rfind("net_", 0) == 0)
    return Status(Errc::NotSupported, Layer::Backend,
                  spec_text + ": mbuf_mem=gpu needs a PMD that DMAs into GPU memory (mlx5 with nvidia_peermem "
                              "or dma-buf); the virtual device " + dev +
                      " is driven by the CPU and cannot map GPU memory; use mbuf_mem=host (frames stay in pinned "
                      "host memory the GPU reads, no copy)",
                  Axis::Nic);
#if !GNIO_HAVE_CUDA
  return Status(Errc::NotSupported, Layer::Backend,
                spec_text + ": mbuf_mem=gpu needs GPUDirect RDMA, and this gnio is built without CUDA; "
                            "use mbuf_mem=host or build with -DGNIO_ENABLE_CUDA=ON",
                Axis::Cuda);
#else
  if (!std::filesystem::exists("/sys/module/nvidia_peermem"))
    return Status(Errc::NotSupported, Layer::Backend,
                  spec_text + ": mbuf_mem=gpu needs GPUDirect RDMA: the nvidia_peermem kernel module is not "
                              "loaded (modprobe nvidia_peermem); or use mbuf_mem=host",
                  Axis::Cuda);
  return Status::ok();
#endif
}

Status gpu_memory_refusal_by_pmd(const gnio_dpdk_port_info& info, const std::string& spec_text) {
  if (std::strncmp(info.driver, "mlx5", 4) != 0)
    return Status(Errc::NotSupported, Layer::Backend,
                  spec_text + ": mbuf_mem=gpu needs a PMD that DMAs into GPU memory (mlx5); port " + info.name +
                      " is driven by " + info.driver + "; use mbuf_mem=host",
                  Axis::Nic);
  return Status(Errc::NotSupported, Layer::Engine,
                spec_text + ": port " + info.name + " (" + info.driver +
                    ") could take mbufs in GPU memory, but gnio's RX engine maps backend frame memory as pinned "
                    "host memory only; use mbuf_mem=host");
}

// ---- the port ------------------------------------------------------------------

// One ethdev port, shared by the specs that name it (through SharedPort).
class DpdkPort {
 public:
  DpdkPort(const gnio_dpdk_api& api, Options o) : api_(api), o_(std::move(o)) {}
  ~DpdkPort() {
    if (!started_) return;
    log_counters();
    api_.port_close(info_.port_id);
  }
  DpdkPort(const DpdkPort&) = delete;
  DpdkPort& operator=(const DpdkPort&) = delete;

  Status open(const std::string& spec_text) {
    char err[GNIO_DPDK_ERR_LEN] = {};
    uint16_t port_id = 0;
    if (api_.port_find(o_.port.c_str(), &port_id, err) != 0)
      return Status(Errc::NotFound, Layer::Backend,
                    spec_text + ": " + err +
                        "; name a PCI address bound to a DPDK-capable driver, a virtual device (net_null0, "
                        "\"net_pcap0,iface=eth0\", \"net_af_packet0,iface=eth0\", net_ring0, ...) or a port number");
    if (api_.port_info(port_id, &info_, err) != 0) return Status(Errc::Driver, Layer::Backend, spec_text + ": " + err);
    if (o_.gpu_mem) return gpu_memory_refusal_by_pmd(info_, spec_text);
    const uint32_t max_q = std::min(info_.max_rx_queues, info_.max_tx_queues);
    if (o_.queues > max_q)
      return Status(Errc::InvalidValue, Layer::Backend,
                    spec_text + ": option queues=" + std::to_string(o_.queues) + " is more than port " + info_.name +
                        " (" + info_.driver + ") has (" + std::to_string(info_.max_rx_queues) + " RX, " +
                        std::to_string(info_.max_tx_queues) + " TX); use queues=1.." + std::to_string(max_q),
                    Axis::Nic);
    if (info_.max_rx_pktlen != 0 && o_.frame > info_.max_rx_pktlen)
      log::info("dpdk", spec_text + ": frame=" + std::to_string(o_.frame) + " is more than the port takes (" +
                            std::to_string(info_.max_rx_pktlen) + " bytes); frames stay within that");

    gnio_dpdk_setup s{};
    s.port_id = port_id;
    s.rx_queues = static_cast<uint16_t>(o_.queues);
    s.tx_queues = static_cast<uint16_t>(o_.queues);
    s.rx_desc = static_cast<uint16_t>(o_.rxd);
    s.tx_desc = static_cast<uint16_t>(o_.txd);
    s.rx_mbufs = o_.mbufs;
    s.tx_mbufs = std::max<uint32_t>(2 * o_.txd, 1024);
    s.data_room = o_.frame;
    s.rss = o_.queues > 1 && info_.flow_type_rss_offloads != 0;
    if (o_.queues > 1 && !s.rss)
      log::warn("dpdk", spec_text + ": port " + info_.name + " (" + info_.driver +
                            ") has no RSS; its " + std::to_string(o_.queues) +
                            " queues receive what the PMD puts on each");
    regions_.resize(o_.queues);
    if (api_.port_start(&s, regions_.data(), err) != 0)
      return Status(Errc::Driver, Layer::Backend, spec_text + ": " + err);
    started_ = true;
    queues_.resize(o_.queues);
    for (auto& q : queues_) q = std::make_unique<QueueScratch>();

    caps_.driver = "dpdk";
    caps_.max_rx_queues = static_cast<uint16_t>(o_.queues);
    caps_.max_tx_queues = static_cast<uint16_t>(o_.queues);
    caps_.max_packet_size = info_.max_rx_pktlen != 0 ? std::min(o_.frame, info_.max_rx_pktlen) : o_.frame;
    // net_af_xdp: the kernel leaves XDP's 256 bytes of headroom in front of
    // each frame inside the mbuf's data room.
    if (std::strcmp(info_.driver, "net_af_xdp") == 0) caps_.max_packet_size = o_.frame - kXdpHeadroom;
    caps_.drops_when_full = true;  // a wire: the PMD drops when its pool or ring is empty
    log::info("dpdk", spec_text + ": port " + std::to_string(port_id) + " " + info_.name + " (" + info_.driver +
                          ", " + info_.bus + "), " + std::to_string(o_.queues) + " queue(s)" +
                          (s.rss ? " spread by the NIC's RSS hash" : "") + ", " + std::to_string(o_.mbufs) +
                          " RX mbufs of " + std::to_string(o_.frame) + " bytes per queue in gnio's memory" +
                          (std::strcmp(info_.driver, "net_af_xdp") == 0
                               ? " (whole mbufs: the region is the XDP socket's UMEM, the kernel writes frames "
                                 "into it)"
                               : ""));
    return Status::ok();
  }

  const EthCaps& caps() const { return caps_; }
  const gnio_dpdk_port_info& info() const { return info_; }
  const Options& options() const { return o_; }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) {
    if (queue >= queues_.size()) return bad_queue("RX", queue);
    QueueScratch& qs = *queues_[queue];
    const uint16_t want = static_cast<uint16_t>(std::min<size_t>(out.size(), 0xffff));
    if (qs.rx.size() < want) qs.rx.resize(want);
    const uint16_t got = api_.rx_burst(info_.port_id, queue, qs.rx.data(), want);
    const uint64_t now = got ? realtime_ns() : 0;
    for (uint16_t i = 0; i < got; ++i) {
      const gnio_dpdk_rx& r = qs.rx[i];
      RxFrame& f = out[i];
      f.data = r.data;
      f.len = r.len;
      f.flags = 0;
      f.wire_len = 0;
      if (r.len < r.pkt_len) {  // longer than the data room (frame=): cut
        f.flags |= RxFrameTruncated;
        f.wire_len = r.pkt_len;
      }
      if (r.has_rss_hash) f.flags |= RxFrameRssHash;
      f.rss_hash = r.rss_hash;
      f.timestamp_ns = now;
      f.cookie = reinterpret_cast<uintptr_t>(r.mbuf);
    }
    return static_cast<size_t>(got);
  }

  void rx_release(uint16_t queue, std::span<const RxFrame> frames) {
    if (queue >= queues_.size() || frames.empty()) return;
    QueueScratch& qs = *queues_[queue];
    qs.release.resize(frames.size());
    for (size_t i = 0; i < frames.size(); ++i) qs.release[i] = reinterpret_cast<void*>(frames[i].cookie);
    api_.free_mbufs(qs.release.data(), static_cast<uint32_t>(frames.size()));
  }

  std::optional<RxMemory> rx_memory(uint16_t queue) const {
    if (queue >= regions_.size()) return std::nullopt;
    return RxMemory{regions_[queue].base, regions_[queue].bytes};
  }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) {
    if (queue >= queues_.size()) return bad_queue("TX", queue);
    if (frames.empty()) return size_t{0};
    QueueScratch& qs = *queues_[queue];
    std::lock_guard lock(qs.tx_mu);  // the same TX queue from two threads would corrupt the PMD's ring
    const uint16_t n = static_cast<uint16_t>(std::min<size_t>(frames.size(), 0xffff));
    qs.tx_data.resize(n);
    qs.tx_len.resize(n);
    for (uint16_t i = 0; i < n; ++i) {
      qs.tx_data[i] = frames[i].data;
      qs.tx_len[i] = frames[i].len;
    }
    char err[GNIO_DPDK_ERR_LEN] = {};
    const int sent = api_.tx_burst(info_.port_id, queue, qs.tx_data.data(), qs.tx_len.data(), n, err);
    if (sent < 0)
      return Status(Errc::InvalidValue, Layer::Backend,
                    std::string("dpdk:") + o_.port + " TX queue " + std::to_string(queue) + ": " + err +
                        "; send frames up to the port's max packet size or open it with a larger frame=");
    return static_cast<size_t>(sent);
  }

 private:
  struct QueueScratch {
    std::vector<gnio_dpdk_rx> rx;
    std::vector<void*> release;
    std::mutex tx_mu;
    std::vector<const uint8_t*> tx_data;
    std::vector<uint32_t> tx_len;
  };

  // What the port did, once, as it closes: how many frames the module had
  // to copy into gnio's pool (0 where every PMD mbuf was already in it).
  void log_counters() const {
    gnio_dpdk_stats c{};
    if (api_.stats(info_.port_id, &c) != 0) return;
    log::info("dpdk", "port " + std::to_string(info_.port_id) + " " + info_.name + " (" + info_.driver +
                          ") closes: RX " + std::to_string(c.ipackets) + " frames " + std::to_string(c.ibytes) +
                          " bytes, " + std::to_string(c.rx_copied) + " copied into gnio's pool, " +
                          std::to_string(c.rx_copy_dropped) + " dropped for want of an mbuf to copy into, " +
                          std::to_string(c.imissed) + " missed, " + std::to_string(c.rx_nombuf) +
                          " without an mbuf; TX " + std::to_string(c.opackets) + " frames " +
                          std::to_string(c.obytes) + " bytes, " + std::to_string(c.oerrors) + " errors");
  }

  Status bad_queue(const char* dir, uint16_t queue) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  std::string("dpdk:") + o_.port + ": " + dir + " queue " + std::to_string(queue) +
                      " does not exist; the port is open with queues=" + std::to_string(o_.queues));
  }

  const gnio_dpdk_api& api_;
  Options o_;
  gnio_dpdk_port_info info_{};
  bool started_ = false;
  std::vector<gnio_dpdk_region> regions_;
  std::vector<std::unique_ptr<QueueScratch>> queues_;
  EthCaps caps_;
};

// The ports of this process, one per ethdev port (port_registry.hpp).
PortRegistry<DpdkPort>& ports() {
  static PortRegistry<DpdkPort> registry;
  return registry;
}

}  // namespace

Result<std::unique_ptr<Backend>> open_dpdk(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::Required, {"queues", "eal", "mbuf_mem", "rxd", "txd", "mbufs", "frame"});
  if (!spec) return spec.status();
  const std::string spec_text(text);
  Options o;
  o.port = spec->arg();
  auto queues = spec->u64("queues", 1, 1, 1024);
  if (!queues) return queues.status();
  auto mem = spec->choice("mbuf_mem", "host", {"host", "gpu"});
  if (!mem) return mem.status();
  auto rxd = spec->u64("rxd", 1024, 32, 32768);
  if (!rxd) return rxd.status();
  auto txd = spec->u64("txd", 1024, 32, 32768);
  if (!txd) return txd.status();
  auto frame = spec->u64("frame", 2048, 256, 9216);
  if (!frame) return frame.status();
  auto mbufs = spec->u64("mbufs", 8192, 64, 1u << 20);
  if (!mbufs) return mbufs.status();
  if (*mbufs < *rxd)
    return spec->invalid("mbufs", "is fewer than the rxd=" + std::to_string(*rxd) + " descriptors it must fill",
                         "use mbufs >= rxd (the default 8192 also covers frames the GPU still holds)");
  o.queues = static_cast<uint32_t>(*queues);
  o.gpu_mem = *mem == "gpu";
  o.rxd = static_cast<uint32_t>(*rxd);
  o.txd = static_cast<uint32_t>(*txd);
  o.frame = static_cast<uint32_t>(*frame);
  o.mbufs = static_cast<uint32_t>(*mbufs);
  if (const std::string* eal = spec->find("eal")) {
    o.eal = *eal;
    o.eal_given = true;
  }
  if (o.gpu_mem) GNIO_TRY(gpu_memory_refusal_by_name(o, spec_text));

  const Module& m = dpdk::module();
  if (!m.api) return Status(Errc::NotSupported, Layer::Backend, spec_text + ": " + m.error);
  GNIO_TRY(dpdk::init_eal(*m.api, o, spec_text));

  const std::string devname = o.port.substr(0, o.port.find(','));
  return ports().share_or_open(
      // The ethdev name, or the spec's text where the PMD renames the port.
      [&](const DpdkPort& port) { return port.info().name == devname || port.options().port == o.port; },
      [&](const DpdkPort& port) {
        const Options& p = port.options();
        if (same_options(p, o)) return Status::ok();
        return Status(Errc::BadState, Layer::Backend,
                      spec_text + ": port " + port.info().name + " is already open in this process with queues=" +
                          std::to_string(p.queues) + ",rxd=" + std::to_string(p.rxd) + ",txd=" +
                          std::to_string(p.txd) + ",mbufs=" + std::to_string(p.mbufs) + ",frame=" +
                          std::to_string(p.frame) +
                          "; give the same options to share it (RX and TX of one port), or close it first");
      },
      [&]() -> Result<std::shared_ptr<DpdkPort>> {
        auto port = std::make_shared<DpdkPort>(*m.api, o);
        GNIO_TRY(port->open(spec_text));
        return port;
      });
}

}  // namespace gnio::backend
