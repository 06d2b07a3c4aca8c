// dpdk:PORT[,queues=N][,eal=ARGS][,mbuf_mem=host|gpu][,rxd=N][,txd=N][,mbufs=N][,frame=BYTES]
// — a DPDK ethdev port: a PCI address ("0000:3b:00.0"), a virtual device
// with its arguments in quotes (dpdk:"net_af_packet0,iface=eth0"), or a port
// number. Every DPDK call is in libgnio_dpdk.so (port.cpp), loaded when the
// first dpdk spec opens.
//
// RX frames stay in backend-owned memory (RxDelivery::InPlace or Dma): each RX queue's mbuf pool keeps its
// frame data in one page-aligned host region (rte_pktmbuf_pool_create_extbuf)
// that is the queue's rx_memory(); the engine registers it with the GPU and
// descriptors point at the frames where the PMD wrote them (net_af_xdp:
// the region holds the whole mbufs and is the XDP socket's UMEM). The cookie
// is the mbuf; rx_release() frees it once the kernel released the frame.
// TX copies each frame once into an mbuf of the queue's TX pool.
#include <dlfcn.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/dpdk/port_api.h"
#include "backends/dpdk/caps.hpp"
#include "backends/drivers.hpp"
#include "backends/spec.hpp"
#include "core/log.hpp"
#include "core/text_escape.hpp"

namespace gnio::backend {

namespace {

struct Options {
  std::string port;  // as written: device name with its arguments, or a port number
  uint32_t queues = 1;
  std::string eal;  // empty: gnio's defaults
  bool eal_given = false;
  bool gpu_mem = false;
  uint32_t rxd = 1024;
  uint32_t txd = 1024;
  uint32_t mbufs = 8192;
  uint32_t frame = 2048;
};

constexpr uint32_t kXdpHeadroom = 256;  // XDP_PACKET_HEADROOM

bool same_options(const Options& a, const Options& b) {
  return a.queues == b.queues && a.gpu_mem == b.gpu_mem && a.rxd == b.rxd && a.txd == b.txd &&
         a.mbufs == b.mbufs && a.frame == b.frame;
}

// ---- the module ----------------------------------------------------------------

struct Module {
  const gnio_dpdk_api* api = nullptr;
  std::string error;  // why loading failed
};

const Module& module() {
  static const Module m = [] {
    Module out;
    std::vector<std::string> tried;
    if (const char* env = std::getenv("GNIO_DPDK_MODULE"); env && *env) tried.emplace_back(env);
    tried.emplace_back(GNIO_DPDK_MODULE_BUILD_PATH);
    tried.emplace_back(GNIO_DPDK_MODULE_INSTALL_PATH);
    tried.emplace_back("libgnio_dpdk.so");  // the loader's search path
    std::string why;
    for (const std::string& path : tried) {
      if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) continue;
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (!h) {
        why += std::string(why.empty() ? "" : "; ") + dlerror();
        continue;
      }
      auto fn = reinterpret_cast<gnio_dpdk_api_fn>(dlsym(h, "gnio_dpdk_api_v1"));
      const gnio_dpdk_api* api = fn ? fn() : nullptr;
      if (!api || api->version != GNIO_DPDK_API_VERSION) {
        why += (why.empty() ? "" : "; ") + path + " is not a gnio " + std::to_string(GNIO_DPDK_API_VERSION) +
               " DPDK module";
        continue;
      }
      out.api = api;
      return out;
    }
    out.error = "cannot load libgnio_dpdk.so (looked for $GNIO_DPDK_MODULE, " GNIO_DPDK_MODULE_BUILD_PATH
                ", " GNIO_DPDK_MODULE_INSTALL_PATH " and the loader's path" +
                (why.empty() ? std::string(")") : "): " + why) +
                "; install gnio's library directory with it, or point GNIO_DPDK_MODULE at the file";
    return out;
  }();
  return m;
}

uint64_t hugepages_total() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "HugePages_Total:") return value;
    in.ignore(256, '\n');
  }
  return 0;
}

bool is_pci_address(const std::string& port) {
  // DDDD:BB:DD.F or BB:DD.F
  const std::string dev = port.substr(0, port.find(','));
  const size_t dot = dev.rfind('.');
  return dot != std::string::npos && dev.find(':') != std::string::npos && dot + 2 == dev.size() &&
         std::isxdigit(static_cast<unsigned char>(dev.back()));
}

// The EAL, once per process: the first dpdk spec's eal= (or gnio's
// defaults) wins; later eal= options are ignored, with a log line.
Status init_eal(const gnio_dpdk_api& api, const Options& o, const std::string& spec_text) {
  static std::mutex mu;
  static bool up = false;
  static std::string used;
  std::lock_guard lock(mu);
  if (up) {
    if (o.eal_given && o.eal != used)
      log::warn("dpdk", spec_text + ": the EAL is already up with '" + used + "'; eal='" + o.eal + "' is not used");
    return Status::ok();
  }
  std::string args = o.eal;
  if (!o.eal_given) {
    // One main lcore, no runtime files or telemetry socket: gnio's engine
    // threads are not EAL lcores, and two gnio processes must not collide.
    args = "-l 0 --no-telemetry --log-level=warning";
    // Only the PCI device the spec names is probed (a virtual device: none),
    // so the EAL never touches the machine's other NICs; a later spec's
    // PCI device is probed when it opens (hotplug).
    args += " -a " + (is_pci_address(o.port) ? o.port.substr(0, o.port.find(',')) : std::string("0000:00:00.0"));
    if (hugepages_total() > 0) {
      args += " --in-memory";
    } else {
      // 22.11 refuses --in-memory with --no-huge (which implies legacy
      // memory); --no-shconf keeps the same promise of no runtime files.
      args += " --no-huge --no-shconf -m 512";
      log::info("dpdk", "no hugepages are reserved (HugePages_Total 0 in /proc/meminfo): the EAL runs with "
                        "--no-huge --no-shconf on 512 MiB of ordinary memory; RX frame data lives in gnio's own "
                        "page-aligned regions either way (reserve hugepages for NICs at line rate)");
    }
  }
  int already = 0;
  char err[GNIO_DPDK_ERR_LEN] = {};
  if (api.eal_init(args.c_str(), &already, err) != 0)
    return Status(Errc::Driver, Layer::Backend,
                  spec_text + ": " + err +
                      "; check the eal= arguments (the EAL can be initialised once per process: restart the program)");
  up = true;
  used = args;
  if (already)
    log::info("dpdk", "the EAL was already initialised in this process; gnio uses it as it is (eal arguments '" +
                          args + "' not applied)");
  else
    log::info("dpdk", "EAL up with '" + args + "'; PMDs come from the EAL's plugin directory (Debian: "
                      "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0); eal=\"... -d PMD.so\" loads others");
  return Status::ok();
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

// A spec's view of a port: an RX and a TX spec naming one port share it.
class DpdkBackend final : public Backend {
 public:
  explicit DpdkBackend(std::shared_ptr<DpdkPort> port) : port_(std::move(port)) {}
  const EthCaps& caps() const override { return port_->caps(); }
  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override { return port_->rx_burst(queue, out); }
  std::optional<RxMemory> rx_memory(uint16_t queue) const override { return port_->rx_memory(queue); }
  void rx_release(uint16_t queue, std::span<const RxFrame> frames) override { port_->rx_release(queue, frames); }
  bool at_end(uint16_t) const override { return false; }
  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    return port_->tx_burst(queue, frames);
  }

 private:
  std::shared_ptr<DpdkPort> port_;
};

struct OpenPort {
  std::string name;  // the ethdev name
  std::weak_ptr<DpdkPort> port;
};

std::mutex& ports_mu() {
  static std::mutex mu;
  return mu;
}
std::vector<OpenPort>& open_ports() {
  static std::vector<OpenPort> ports;
  return ports;
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

  const Module& m = module();
  if (!m.api) return Status(Errc::NotSupported, Layer::Backend, spec_text + ": " + m.error);
  GNIO_TRY(init_eal(*m.api, o, spec_text));

  std::lock_guard lock(ports_mu());
  auto& ports = open_ports();
  std::erase_if(ports, [](const OpenPort& p) { return p.port.expired(); });
  const std::string devname = o.port.substr(0, o.port.find(','));
  for (const OpenPort& p : ports) {
    auto alive = p.port.lock();
    if (!alive || (p.name != devname && alive->options().port != o.port)) continue;
    if (!same_options(alive->options(), o))
      return Status(Errc::BadState, Layer::Backend,
                    spec_text + ": port " + p.name + " is already open in this process with queues=" +
                        std::to_string(alive->options().queues) + ",rxd=" + std::to_string(alive->options().rxd) +
                        ",txd=" + std::to_string(alive->options().txd) + ",mbufs=" +
                        std::to_string(alive->options().mbufs) + ",frame=" + std::to_string(alive->options().frame) +
                        "; give the same options to share it (RX and TX of one port), or close it first");
    return std::unique_ptr<Backend>(std::make_unique<DpdkBackend>(std::move(alive)));
  }
  auto port = std::make_shared<DpdkPort>(*m.api, o);
  GNIO_TRY(port->open(spec_text));
  ports.push_back({port->info().name, port});
  return std::unique_ptr<Backend>(std::make_unique<DpdkBackend>(std::move(port)));
}

}  // namespace gnio::backend

namespace gnio::caps {

namespace {

std::vector<std::string> words(const char* s) {
  std::vector<std::string> out;
  std::string w;
  for (const char* p = s;; ++p) {
    if (*p == ' ' || *p == '\0') {
      if (!w.empty()) out.push_back(w);
      w.clear();
      if (*p == '\0') break;
    } else {
      w += *p;
    }
  }
  return out;
}

std::string joined(const char* s) { return *s ? s : "none"; }

}  // namespace

std::optional<DriverReport> dpdk_port_report(std::string_view text) {
  using backend::ArgMode;
  using backend::Spec;
  if (backend::spec_driver(text) != "dpdk") return std::nullopt;
  // The port is the user's text and the errors quote it: written by
  // escape_text()'s rule, and a dump that cannot throw.
  auto json_text = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  auto fail = [&](const std::string& why) {
    return DriverReport{"DPDK port", "dpdk_port", "  " + why + "\n", json_text({{"error", escape_text(why)}})};
  };
  auto spec = Spec::parse(text, ArgMode::Required, {"queues", "eal", "mbuf_mem", "rxd", "txd", "mbufs", "frame"});
  if (!spec) return fail(spec.status().to_string());
  backend::Options o;
  o.port = spec->arg();
  if (const std::string* eal = spec->find("eal")) {
    o.eal = *eal;
    o.eal_given = true;
  }
  const backend::Module& m = backend::module();
  if (!m.api) return fail(m.error);
  if (Status s = backend::init_eal(*m.api, o, std::string(text)); !s) return fail(s.to_string());
  char err[GNIO_DPDK_ERR_LEN] = {};
  uint16_t port_id = 0;
  gnio_dpdk_port_info i{};
  if (m.api->port_find(o.port.c_str(), &port_id, err) != 0 || m.api->port_info(port_id, &i, err) != 0)
    return fail(err);
  char mac[18];
  std::snprintf(mac, sizeof mac, "%02x:%02x:%02x:%02x:%02x:%02x", i.mac[0], i.mac[1], i.mac[2], i.mac[3], i.mac[4],
                i.mac[5]);
  nlohmann::json j{
      {"port_id", i.port_id},
      {"name", escape_text(i.name)},
      {"pmd", i.driver},
      {"bus", i.bus},
      {"numa_node", i.numa_node},
      {"max_rx_queues", i.max_rx_queues},
      {"max_tx_queues", i.max_tx_queues},
      {"rx_desc", {{"min", i.rx_desc_min}, {"max", i.rx_desc_max}, {"align", i.rx_desc_align}}},
      {"tx_desc", {{"min", i.tx_desc_min}, {"max", i.tx_desc_max}, {"align", i.tx_desc_align}}},
      {"max_rx_pktlen", i.max_rx_pktlen},
      {"mtu", {{"now", i.mtu}, {"min", i.min_mtu}, {"max", i.max_mtu}}},
      {"rx_offloads", words(i.rx_offloads)},
      {"tx_offloads", words(i.tx_offloads)},
      {"rss_functions", words(i.rss_functions)},
      {"rss_key_bytes", i.hash_key_size},
      {"reta_size", i.reta_size},
      {"mac", mac},
      {"link", {{"up", i.link_up != 0}, {"speed_mbps", i.link_speed_mbps}}},
      {"dma_into_external_memory", i.can_dma_map != 0},
  };
  std::string t;
  t += "  port " + std::to_string(i.port_id) + " " + i.name + ": PMD " + i.driver + " on bus " + i.bus +
       ", NUMA node " + std::to_string(i.numa_node) + ", MAC " + mac + "\n";
  t += "  queues: " + std::to_string(i.max_rx_queues) + " RX, " + std::to_string(i.max_tx_queues) + " TX\n";
  t += "  descriptors: RX " + std::to_string(i.rx_desc_min) + ".." + std::to_string(i.rx_desc_max) + " (align " +
       std::to_string(i.rx_desc_align) + "), TX " + std::to_string(i.tx_desc_min) + ".." +
       std::to_string(i.tx_desc_max) + " (align " + std::to_string(i.tx_desc_align) + ")\n";
  t += "  max RX packet " + std::to_string(i.max_rx_pktlen) + " bytes; MTU " + std::to_string(i.mtu) + " (" +
       std::to_string(i.min_mtu) + ".." + std::to_string(i.max_mtu) + ")\n";
  t += "  RX offloads: " + joined(i.rx_offloads) + "\n";
  t += "  TX offloads: " + joined(i.tx_offloads) + "\n";
  t += "  RSS functions: " + joined(i.rss_functions) + " (key " + std::to_string(i.hash_key_size) +
       " bytes, RETA " + std::to_string(i.reta_size) + ")\n";
  t += std::string("  link ") + (i.link_up ? "up" : "down") + ", " + std::to_string(i.link_speed_mbps) + " Mb/s\n";
  t += std::string("  RX frames in gnio's memory: ") +
       (i.can_dma_map ? "DMA-mapped (rte_dev_dma_map, IOVA as VA)" : "written by the CPU (virtual device)") + "\n";
  return DriverReport{"DPDK port", "dpdk_port", t, json_text(j)};
}

}  // namespace gnio::caps
