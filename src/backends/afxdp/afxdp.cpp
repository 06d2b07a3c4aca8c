// afxdp:IFACE[,queue=Q][,queues=N][,mode=auto|skb|drv|zc][,frame=2048][,ring=2048][,busy_poll=1]
// — live traffic of a Linux network interface through AF_XDP sockets.
//
// One XSK socket per NIC queue Q..Q+N-1, each with its own UMEM: page-aligned
// memory gnio maps, of `ring` RX frames (lent to the kernel through the fill
// ring) and `ring` TX frames. The UMEM is the queue's rx_memory(): frames
// stay where the NIC (or the kernel, in copy mode) wrote them, rx_burst()
// points at them, and rx_release() hands them back to the fill ring.
//
// gnio attaches its own redirect program (queue index -> XSKMAP) through a
// BPF link: the kernel detaches it when the link's last descriptor closes,
// so also when the process dies, and it refuses to replace a program someone
// else attached (that is reported, never clobbered).
#include <dlfcn.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <xdp/xsk.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/afxdp/iface.hpp"
#include "backends/drivers.hpp"
#include "backends/spec.hpp"
#include "core/log.hpp"

namespace gnio::backend {

namespace {

using afxdp::IfaceFacts;

enum class Mode : uint8_t { Skb, Drv, Zc };
const char* mode_name(Mode m) { return m == Mode::Skb ? "skb" : m == Mode::Drv ? "drv" : "zc"; }

constexpr uint32_t kXdpPacketHeadroom = 256;  // the kernel's, in front of every RX frame
constexpr int kBusyPollUs = 20;

struct Options {
  std::string iface;
  uint32_t queue = 0;
  uint32_t queues = 1;
  std::string mode = "auto";
  uint32_t frame = 2048;
  uint32_t ring = 2048;
  bool busy_poll = false;
};

Status os_error(Errc code, const std::string& what, int err, const std::string& fix) {
  return Status(code, Layer::Backend, what + ": " + std::strerror(err) + "; " + fix);
}

bool is_permission(int err) { return err == EPERM || err == EACCES; }

std::string privilege_fix() {
  return "AF_XDP needs CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW: run as root or grant them "
         "(sudo setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep PROGRAM); `gnio doctor --nic afxdp:IFACE` checks";
}

// libxdp and libbpf are loaded when the first afxdp spec opens, not linked:
// the static libgnio then needs nothing more at link time, and a program
// without them installed fails only when it asks for afxdp.
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

template <class F>
void resolve(void* lib, const char* name, F& out, std::string& error) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out && error.empty()) error = std::string("symbol ") + name + " is missing";
}

const XdpLib& xdp_lib() {
  static const XdpLib lib = [] {
    XdpLib l;
    void* bpf = dlopen("libbpf.so.1", RTLD_NOW | RTLD_GLOBAL);
    void* xdp = bpf ? dlopen("libxdp.so.1", RTLD_NOW | RTLD_GLOBAL) : nullptr;
    if (!bpf || !xdp) {
      l.error = dlerror();
      return l;
    }
    resolve(xdp, "xsk_umem__create", l.umem_create, l.error);
    resolve(xdp, "xsk_umem__delete", l.umem_delete, l.error);
    resolve(xdp, "xsk_socket__create", l.socket_create, l.error);
    resolve(xdp, "xsk_socket__delete", l.socket_delete, l.error);
    resolve(xdp, "xsk_socket__fd", l.socket_fd, l.error);
    resolve(xdp, "xsk_socket__update_xskmap", l.update_xskmap, l.error);
    resolve(bpf, "bpf_map_create", l.map_create, l.error);
    resolve(bpf, "bpf_prog_load", l.prog_load, l.error);
    resolve(bpf, "bpf_link_create", l.link_create, l.error);
    return l;
  }();
  return lib;
}

// The redirect program, its XSKMAP and the BPF link that attaches it.
class XdpAttachment {
 public:
  XdpAttachment() = default;
  XdpAttachment(const XdpAttachment&) = delete;
  XdpAttachment& operator=(const XdpAttachment&) = delete;
  ~XdpAttachment() {
    for (int fd : {link_fd_, prog_fd_, map_fd_})
      if (fd >= 0) close(fd);
  }

  // A program that sends frames of queue i to the XSK in map slot i and
  // passes the frames of queues without one to the kernel stack.
  Status load(const IfaceFacts& f, uint32_t entries) {
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

  // Attaches in native (drv) or generic (skb) mode; errno on failure.
  int attach(int ifindex, bool native) {
    LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
    int fd = xdp_lib().link_create(prog_fd_, ifindex, BPF_XDP, &opts);
    if (fd < 0) return -fd;
    link_fd_ = fd;
    return 0;
  }

  int map_fd() const { return map_fd_; }

 private:
  int map_fd_ = -1;
  int prog_fd_ = -1;
  int link_fd_ = -1;
};

// One NIC queue: its UMEM, XSK socket and rings. The RX engine thread owns
// the RX and fill rings, the TX engine thread the TX and completion rings;
// `mu` guards what both touch: RX frames sent without a copy.
struct XskQueue {
  uint32_t nic_queue = 0;
  uint8_t* area = nullptr;
  size_t area_bytes = 0;
  xsk_umem* umem = nullptr;
  xsk_socket* xsk = nullptr;
  int fd = -1;  // the XSK socket's
  xsk_ring_prod fill{};
  xsk_ring_cons comp{};
  xsk_ring_cons rx{};
  xsk_ring_prod tx{};

  // RX thread: frames waiting for room in the fill ring.
  std::vector<uint64_t> to_fill;
  // TX thread: free TX frames (UMEM addresses), descriptors not yet completed.
  std::vector<uint64_t> tx_free;
  uint32_t tx_outstanding = 0;

  // Shared: how many TX descriptors still read each RX frame, the frames
  // the RX side released meanwhile, and those completions freed again.
  std::mutex mu;
  std::vector<uint16_t> tx_readers;
  std::vector<uint8_t> released_while_read;
  std::vector<uint64_t> recycled;
  std::atomic<uint32_t> frames_read{0};    // RX frames with tx_readers > 0
  std::atomic<bool> have_recycled{false};

  ~XskQueue() {
    if (xsk) xdp_lib().socket_delete(xsk);
    if (umem) xdp_lib().umem_delete(umem);
    if (area) munmap(area, area_bytes);
  }
};

class AfxdpBackend final : public Backend {
 public:
  explicit AfxdpBackend(Options o) : o_(std::move(o)), frame_shift_(static_cast<uint32_t>(__builtin_ctz(o_.frame))) {}
  AfxdpBackend(const AfxdpBackend&) = delete;
  AfxdpBackend& operator=(const AfxdpBackend&) = delete;

  ~AfxdpBackend() override {
    for (const auto& q : queues_) log_statistics(*q);
    // Sockets first: the program must not redirect into closed sockets for long.
    queues_.clear();
  }

  Status open() {
    if (!xdp_lib().error.empty())
      return Status(Errc::NotSupported, Layer::Backend,
                    "afxdp:" + o_.iface + ": cannot load libxdp/libbpf (" + xdp_lib().error +
                        "); install them (Debian: libxdp1 libbpf1)");
    auto facts = afxdp::query_iface(o_.iface);
    if (!facts) return facts.status();
    facts_ = *facts;
    GNIO_TRY(check_interface());

    Mode want_first = Mode::Zc;
    if (o_.mode == "skb") want_first = Mode::Skb;
    else if (o_.mode == "drv") want_first = Mode::Drv;
    if (o_.mode == "zc" && facts_.xdp_features && !(*facts_.xdp_features & afxdp::XdpActXskZeroCopy))
      return not_available("zc", "its xdp-features lack xsk-zerocopy");
    if (o_.mode == "drv" && facts_.xdp_features && !(*facts_.xdp_features & afxdp::XdpActRedirect))
      return not_available("drv", "its xdp-features lack native redirect");

    GNIO_TRY(prog_.load(facts_, facts_.queues()));
    // The attach mode: native for zc and drv (auto: where the driver says it
    // can, or where nothing is said), generic otherwise.
    bool native = want_first != Mode::Skb;
    if (o_.mode == "auto" && facts_.xdp_features && !(*facts_.xdp_features & afxdp::XdpActRedirect)) native = false;
    int err = prog_.attach(facts_.ifindex, native);
    if (err != 0 && native && o_.mode == "auto") {
      log::info("afxdp", o_.iface + ": native XDP attach failed (" + std::strerror(err) + "); trying skb mode");
      native = false;
      err = prog_.attach(facts_.ifindex, false);
    }
    if (err != 0) return attach_error(err, native);

    // Zero copy where asked for (or, with auto, where the driver may do it).
    bool try_zc = o_.mode == "zc" ||
                  (o_.mode == "auto" && native &&
                   (!facts_.xdp_features || (*facts_.xdp_features & afxdp::XdpActXskZeroCopy)));
    mode_ = native ? (try_zc ? Mode::Zc : Mode::Drv) : Mode::Skb;
    for (uint32_t i = 0; i < o_.queues; ++i) {
      Status s = open_queue_waiting(o_.queue + i);
      if (!s && mode_ == Mode::Zc && o_.mode == "auto") {
        log::info("afxdp", o_.iface + ": zero copy refused (" + s.message() + "); using drv copy mode");
        queues_.clear();
        mode_ = Mode::Drv;
        i = static_cast<uint32_t>(-1);
        continue;
      }
      if (!s) return s;
    }
    log::info("afxdp", o_.iface + ": " + std::to_string(o_.queues) + " queue(s) from " + std::to_string(o_.queue) +
                           " in " + mode_name(mode_) + " mode (asked: " + o_.mode + "), driver " +
                           (facts_.driver.empty() ? "unknown" : facts_.driver) + ", MTU " +
                           std::to_string(facts_.mtu) + ", frame " + std::to_string(o_.frame) + ", ring " +
                           std::to_string(o_.ring));

    caps_.driver = "afxdp";
    caps_.max_rx_queues = static_cast<uint16_t>(o_.queues);
    caps_.max_tx_queues = static_cast<uint16_t>(o_.queues);
    // What the link takes, within a UMEM frame less the kernel's headroom: a
    // longer frame the kernel would drop after the engine counted it sent.
    const uint32_t umem_max = o_.frame - kXdpPacketHeadroom;
    caps_.max_packet_size =
        facts_.mtu != 0 ? std::min(umem_max, afxdp::max_frame_for_mtu(facts_.mtu)) : umem_max;
    caps_.drops_when_full = true;
    caps_.xdp_mode = mode_name(mode_);
    return Status::ok();
  }

  const char* mode() const { return mode_name(mode_); }

  const EthCaps& caps() const override { return caps_; }

  std::optional<RxMemory> rx_memory(uint16_t queue) const override {
    if (queue >= queues_.size()) return std::nullopt;
    return RxMemory{queues_[queue]->area, queues_[queue]->area_bytes, rx_frames()};
  }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override {
    if (queue >= queues_.size()) return bad_queue("RX", queue);
    XskQueue& q = *queues_[queue];
    take_recycled(q);
    refill(q);
    uint32_t idx = 0;
    uint32_t n = xsk_ring_cons__peek(&q.rx, static_cast<uint32_t>(out.size()), &idx);
    if (n == 0) {
      // The kernel waits for a wakeup (need_wakeup), or busy polling drives
      // the NIC's NAPI from here.
      if (o_.busy_poll || xsk_ring_prod__needs_wakeup(&q.fill))
        recvfrom(q.fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
      return size_t{0};
    }
    const uint64_t now = realtime_ns();
    for (uint32_t i = 0; i < n; ++i) {
      const xdp_desc* d = xsk_ring_cons__rx_desc(&q.rx, idx + i);
      const uint64_t addr = xsk_umem__add_offset_to_addr(d->addr);
      RxFrame& f = out[i];
      f = RxFrame{};
      f.data = q.area + addr;
      f.len = d->len;
      f.timestamp_ns = now;
      f.cookie = addr & ~(static_cast<uint64_t>(o_.frame) - 1);
    }
    xsk_ring_cons__release(&q.rx, n);
    return size_t{n};
  }

  void rx_release(uint16_t queue, std::span<const RxFrame> frames) override {
    if (queue >= queues_.size()) return;
    XskQueue& q = *queues_[queue];
    if (q.frames_read.load(std::memory_order_acquire) == 0) {
      for (const RxFrame& f : frames) q.to_fill.push_back(f.cookie);
    } else {
      std::lock_guard lock(q.mu);
      for (const RxFrame& f : frames) {
        const uint64_t i = f.cookie >> frame_shift_;
        if (q.tx_readers[i] > 0) q.released_while_read[i] = 1;
        else q.to_fill.push_back(f.cookie);
      }
    }
    refill(q);
  }

  bool at_end(uint16_t) const override { return false; }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    if (queue >= queues_.size()) return bad_queue("TX", queue);
    XskQueue& q = *queues_[queue];
    for (size_t i = 0; i < frames.size(); ++i) {
      if (frames[i].len > caps_.max_packet_size)
        return Status(Errc::InvalidValue, Layer::Backend,
                      "afxdp:" + o_.iface + " TX queue " + std::to_string(queue) + ": frame " + std::to_string(i) +
                          " of the burst has " + std::to_string(frames[i].len) + " bytes, more than the " +
                          std::to_string(caps_.max_packet_size) + " it sends (MTU " + std::to_string(facts_.mtu) +
                          ", UMEM frame " + std::to_string(o_.frame) +
                          "); nothing of this burst was sent (raise the MTU, and frame=4096 beyond " +
                          std::to_string(afxdp::max_mtu_for_frame(o_.frame)) + ")");
    }
    complete(q);
    const uint8_t* rx_end = q.area + rx_frames() * static_cast<size_t>(o_.frame);
    uint32_t idx = 0;
    const uint32_t want = static_cast<uint32_t>(std::min<size_t>(frames.size(), q.tx_free.size()));
    const uint32_t n = want ? xsk_ring_prod__reserve(&q.tx, want, &idx) : 0;
    for (uint32_t i = 0; i < n; ++i) {
      const TxFrame& f = frames[i];
      uint64_t addr;
      if (f.data >= q.area && f.data + f.len <= rx_end &&
          (static_cast<uint64_t>(f.data - q.area) >> frame_shift_) ==
              (static_cast<uint64_t>(f.data + f.len - 1 - q.area) >> frame_shift_)) {
        // Already in an RX frame of this UMEM: send it from there, and keep
        // the frame from the fill ring until the send completed.
        addr = static_cast<uint64_t>(f.data - q.area);
        std::lock_guard lock(q.mu);
        if (q.tx_readers[addr >> frame_shift_]++ == 0) q.frames_read.fetch_add(1, std::memory_order_release);
      } else {
        addr = q.tx_free.back();
        q.tx_free.pop_back();
        std::memcpy(q.area + addr, f.data, f.len);
      }
      xdp_desc* d = xsk_ring_prod__tx_desc(&q.tx, idx + i);
      d->addr = addr;
      d->len = f.len;
      d->options = 0;
    }
    if (n > 0) {
      xsk_ring_prod__submit(&q.tx, n);
      q.tx_outstanding += n;
    }
    kick(q);
    return size_t{n};
  }

  Status flush() override {
    // Everything submitted leaves the socket (a generic-mode send moves at
    // most a batch per kick).
    for (auto& qp : queues_) {
      XskQueue& q = *qp;
      for (int tries = 0; tries < 1000 && q.tx_outstanding > 0; ++tries) {
        kick(q);
        complete(q);
        if (q.tx_outstanding > 0) usleep(100);
      }
    }
    return Status::ok();
  }

 private:
  uint32_t rx_frames() const { return o_.ring; }

  Status check_interface() const {
    const uint32_t have = facts_.queues();
    if (o_.queue + o_.queues > have)
      return Status(Errc::InvalidValue, Layer::Backend,
                    "afxdp:" + o_.iface + ": queue=" + std::to_string(o_.queue) + ",queues=" + std::to_string(o_.queues) +
                        " needs NIC queues " + std::to_string(o_.queue) + ".." + std::to_string(o_.queue + o_.queues - 1) +
                        " but the interface has " + std::to_string(have) +
                        " (ethtool channels); use queue+queues <= " + std::to_string(have) +
                        ", or add channels: ethtool -L " + o_.iface + " combined N");
    const uint32_t max_mtu = afxdp::max_mtu_for_frame(o_.frame);
    if (facts_.mtu > max_mtu)
      return Status(Errc::InvalidValue, Layer::Backend,
                    "afxdp:" + o_.iface + ": MTU " + std::to_string(facts_.mtu) + " is larger than a UMEM frame of " +
                        std::to_string(o_.frame) + " bytes carries (MTU <= " + std::to_string(max_mtu) + "); " +
                        (o_.frame < 4096 ? "use frame=4096, or " : std::string()) + "lower the MTU: ip link set dev " +
                        o_.iface + " mtu " + std::to_string(max_mtu));
    if (facts_.xdp_prog_id != 0)
      return Status(Errc::BadState, Layer::Backend,
                    "afxdp:" + o_.iface + ": XDP program id " + std::to_string(facts_.xdp_prog_id) +
                        " is already attached (" + std::string(afxdp::attached_name(facts_.xdp_attached)) +
                        " mode) by another program; gnio does not replace it. See it with `bpftool net show dev " +
                        o_.iface + "`; detach it with `xdp-loader unload " + o_.iface +
                        " --all` or `ip link set dev " + o_.iface + " xdp off` if it is not needed");
    return Status::ok();
  }

  Status not_available(const std::string& mode, const std::string& why) const {
    return Status(Errc::NotSupported, Layer::Backend,
                  "afxdp:" + o_.iface + ": mode=" + mode + " is not available: driver " +
                      (facts_.driver.empty() ? std::string("(unknown)") : facts_.driver) + " " + why +
                      "; use mode=auto (zc, then drv, then skb) or mode=skb, which every interface has",
                  Axis::Nic);
  }

  Status attach_error(int err, bool native) const {
    if (is_permission(err))
      return os_error(Errc::IoError, "afxdp:" + o_.iface + ": cannot attach the XDP program", err, privilege_fix());
    if (err == EBUSY || err == EEXIST)
      return os_error(Errc::BadState, "afxdp:" + o_.iface + ": another XDP program took the interface", err,
                      "see it with `bpftool net show dev " + o_.iface + "` and detach it if it is not needed");
    if (native && (err == EOPNOTSUPP || err == EINVAL))
      return not_available(o_.mode, std::string("has no native XDP (attach: ") + std::strerror(err) + ")");
    return os_error(Errc::Driver, "afxdp:" + o_.iface + ": cannot attach the XDP program in " +
                                      (native ? "native" : "generic") + " mode", err,
                    "check `dmesg` for the driver's reason");
  }

  // A socket closed a moment ago (by this process or one that just ended)
  // holds its queue until the kernel's deferred release: the bind says
  // EBUSY meanwhile, and a fresh UMEM and socket are tried again.
  Status open_queue_waiting(uint32_t nic_queue) {
    constexpr int kTries = 100;
    constexpr useconds_t kPauseUs = 20000;
    for (int attempt = 1;; ++attempt) {
      queues_.push_back(std::make_unique<XskQueue>());
      Status s = open_queue(*queues_.back(), nic_queue);
      if (s.code() != Errc::Again) return s;
      queues_.pop_back();
      if (attempt == kTries)
        return Status(Errc::BadState, Layer::Backend,
                      "afxdp:" + o_.iface + ": NIC queue " + std::to_string(nic_queue) +
                          " stayed bound to another AF_XDP socket for " +
                          std::to_string(kTries * kPauseUs / 1000) +
                          " ms; stop the program that holds it (`ss -a -f xdp` lists XDP sockets) or use another queue=");
      usleep(kPauseUs);
    }
  }

  Status open_queue(XskQueue& q, uint32_t nic_queue) {
    q.nic_queue = nic_queue;
    const uint32_t nframes = 2 * o_.ring;
    q.area_bytes = static_cast<size_t>(nframes) * o_.frame;
    void* p = mmap(nullptr, q.area_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
      return os_error(Errc::NoMemory, "afxdp:" + o_.iface + " queue " + std::to_string(nic_queue) + ": cannot map " +
                                          std::to_string(q.area_bytes) + " bytes of UMEM", errno,
                      "lower ring= or frame=");
    q.area = static_cast<uint8_t*>(p);

    xsk_umem_config ucfg{};
    ucfg.fill_size = o_.ring;
    ucfg.comp_size = o_.ring;
    ucfg.frame_size = o_.frame;
    ucfg.frame_headroom = 0;
    int rc = xdp_lib().umem_create(&q.umem, q.area, q.area_bytes, &q.fill, &q.comp, &ucfg);
    if (rc != 0) {
      const int err = -rc;
      return os_error(is_permission(err) ? Errc::IoError : err == ENOMEM || err == ENOBUFS ? Errc::NoMemory : Errc::Driver,
                      "afxdp:" + o_.iface + " queue " + std::to_string(nic_queue) + ": cannot register " +
                          std::to_string(q.area_bytes) + " bytes of UMEM",
                      err,
                      is_permission(err) || err == ENOMEM || err == ENOBUFS
                          ? "the UMEM is locked memory: raise `ulimit -l` (or grant CAP_IPC_LOCK), or lower ring="
                          : "check that the kernel has AF_XDP (CONFIG_XDP_SOCKETS)");
    }
    xsk_socket_config scfg{};
    scfg.rx_size = o_.ring;
    scfg.tx_size = o_.ring;
    scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
    scfg.bind_flags = static_cast<uint16_t>(XDP_USE_NEED_WAKEUP | (mode_ == Mode::Zc ? XDP_ZEROCOPY : XDP_COPY));
    rc = xdp_lib().socket_create(&q.xsk, o_.iface.c_str(), nic_queue, q.umem, &q.rx, &q.tx, &scfg);
    if (rc != 0) {
      const int err = -rc;
      if (err == EBUSY) return Status(Errc::Again, Layer::Backend, "queue busy");
      if (mode_ == Mode::Zc && (err == EOPNOTSUPP || err == EINVAL || err == EPROTONOSUPPORT))
        return not_available("zc", std::string("refused an AF_XDP zero-copy bind (") + std::strerror(err) + ")");
      return os_error(is_permission(err) ? Errc::IoError : Errc::Driver,
                      "afxdp:" + o_.iface + ": cannot bind an XSK socket to queue " + std::to_string(nic_queue), err,
                      is_permission(err) ? privilege_fix() : "check `dmesg`; another AF_XDP socket may hold the queue");
    }
    q.fd = xdp_lib().socket_fd(q.xsk);
    rc = xdp_lib().update_xskmap(q.xsk, prog_.map_fd());
    if (rc != 0)
      return os_error(Errc::Driver, "afxdp:" + o_.iface + ": cannot enter the socket of queue " +
                                        std::to_string(nic_queue) + " into the XSKMAP", -rc,
                      "check `dmesg`");
    if (o_.busy_poll) set_busy_poll(q);

    for (uint32_t i = 0; i < o_.ring; ++i) q.to_fill.push_back(static_cast<uint64_t>(i) << frame_shift_);
    refill(q);
    for (uint32_t i = o_.ring; i < nframes; ++i) q.tx_free.push_back(static_cast<uint64_t>(i) << frame_shift_);
    q.tx_readers.assign(o_.ring, 0);
    q.released_while_read.assign(o_.ring, 0);
    return Status::ok();
  }

  // What the kernel dropped before the socket: a full RX ring (gnio did not
  // release frames fast enough), an empty fill ring, invalid descriptors.
  void log_statistics(const XskQueue& q) const {
    if (!q.xsk) return;
    xdp_statistics st{};
    socklen_t len = sizeof st;
    if (getsockopt(q.fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0) return;
    if (st.rx_dropped + st.rx_ring_full + st.rx_fill_ring_empty_descs + st.rx_invalid_descs + st.tx_invalid_descs == 0)
      return;
    log::warn("afxdp", o_.iface + " queue " + std::to_string(q.nic_queue) + ": the kernel dropped " +
                           std::to_string(st.rx_dropped) + " frame(s), RX ring full " + std::to_string(st.rx_ring_full) +
                           " time(s), fill ring empty " + std::to_string(st.rx_fill_ring_empty_descs) +
                           " time(s), invalid RX/TX descriptors " + std::to_string(st.rx_invalid_descs) + "/" +
                           std::to_string(st.tx_invalid_descs) + "; a larger ring= or faster release avoids drops");
  }

  void set_busy_poll(XskQueue& q) const {
    // Where the kernel has them (5.11+); without, the socket still works.
    const int fd = q.fd;
    int one = 1, us = kBusyPollUs, budget = 64;
    bool ok = setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof one) == 0 &&
              setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof us) == 0 &&
              setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof budget) == 0;
    if (!ok)
      log::warn("afxdp", o_.iface + " queue " + std::to_string(q.nic_queue) + ": busy polling is not available (" +
                             std::strerror(errno) + "); the socket works without it");
  }

  // RX thread: frames whose last TX reader completed go back to the fill ring.
  void take_recycled(XskQueue& q) {
    if (!q.have_recycled.load(std::memory_order_acquire)) return;
    std::lock_guard lock(q.mu);
    q.to_fill.insert(q.to_fill.end(), q.recycled.begin(), q.recycled.end());
    q.recycled.clear();
    q.have_recycled.store(false, std::memory_order_relaxed);
  }

  void refill(XskQueue& q) {
    if (q.to_fill.empty()) return;
    uint32_t idx = 0;
    const uint32_t n = xsk_ring_prod__reserve(&q.fill, static_cast<uint32_t>(q.to_fill.size()), &idx);
    for (uint32_t i = 0; i < n; ++i) *xsk_ring_prod__fill_addr(&q.fill, idx + i) = q.to_fill[i];
    xsk_ring_prod__submit(&q.fill, n);
    q.to_fill.erase(q.to_fill.begin(), q.to_fill.begin() + n);
  }

  // TX thread: completed descriptors free their frames.
  void complete(XskQueue& q) {
    uint32_t idx = 0;
    const uint32_t n = xsk_ring_cons__peek(&q.comp, o_.ring, &idx);
    if (n == 0) return;
    const uint64_t rx_bytes = static_cast<uint64_t>(rx_frames()) << frame_shift_;
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t addr = *xsk_ring_cons__comp_addr(&q.comp, idx + i);
      if (addr >= rx_bytes) {
        q.tx_free.push_back(addr & ~(static_cast<uint64_t>(o_.frame) - 1));
        continue;
      }
      const uint64_t f = addr >> frame_shift_;
      std::lock_guard lock(q.mu);
      if (--q.tx_readers[f] == 0) {
        q.frames_read.fetch_sub(1, std::memory_order_release);
        if (q.released_while_read[f]) {
          q.released_while_read[f] = 0;
          q.recycled.push_back(f << frame_shift_);
          q.have_recycled.store(true, std::memory_order_release);
        }
      }
    }
    xsk_ring_cons__release(&q.comp, n);
    q.tx_outstanding -= n;
  }

  void kick(XskQueue& q) {
    if (q.tx_outstanding == 0 || !xsk_ring_prod__needs_wakeup(&q.tx)) return;
    // A generic-mode send moves a batch per call and says EAGAIN while more wait.
    for (int tries = 0; tries < 64; ++tries) {
      if (sendto(q.fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) >= 0 || errno != EAGAIN) break;
    }
  }

  Status bad_queue(const char* dir, uint16_t queue) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  "afxdp:" + o_.iface + ": " + dir + " queue " + std::to_string(queue) + " does not exist; the spec opened " +
                      std::to_string(queues_.size()) + " queue(s) (set queues=N)");
  }

  Options o_;
  uint32_t frame_shift_;
  IfaceFacts facts_;
  EthCaps caps_;
  Mode mode_ = Mode::Skb;
  XdpAttachment prog_;
  std::vector<std::unique_ptr<XskQueue>> queues_;
};

// One process opens an interface once: a second open of the same
// interface (an RX spec and a TX spec naming it, as `gnio run` does) shares
// the sockets; RX and TX of a queue already run on different threads.
class SharedAfxdp final : public Backend {
 public:
  explicit SharedAfxdp(std::shared_ptr<AfxdpBackend> port) : port_(std::move(port)) {}
  const EthCaps& caps() const override { return port_->caps(); }
  std::optional<RxMemory> rx_memory(uint16_t queue) const override { return port_->rx_memory(queue); }
  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override { return port_->rx_burst(queue, out); }
  void rx_release(uint16_t queue, std::span<const RxFrame> frames) override { port_->rx_release(queue, frames); }
  bool at_end(uint16_t queue) const override { return port_->at_end(queue); }
  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    return port_->tx_burst(queue, frames);
  }
  Status flush() override { return port_->flush(); }

 private:
  std::shared_ptr<AfxdpBackend> port_;
};

struct OpenPort {
  Options options;
  std::weak_ptr<AfxdpBackend> port;
};

std::mutex& ports_mu() {
  static std::mutex mu;
  return mu;
}
std::vector<OpenPort>& open_ports() {
  static std::vector<OpenPort> ports;
  return ports;
}

bool same_queues(const Options& a, const Options& b) {
  return a.queue == b.queue && a.queues == b.queues && a.frame == b.frame && a.ring == b.ring &&
         a.busy_poll == b.busy_poll && (a.mode == b.mode || b.mode == "auto");
}

}  // namespace

Result<std::unique_ptr<Backend>> open_afxdp(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::Required, {"queue", "queues", "mode", "frame", "ring", "busy_poll"});
  if (!spec) return spec.status();
  Options o;
  o.iface = spec->arg();
  auto queue = spec->u64("queue", 0, 0, 1023);
  if (!queue) return queue.status();
  auto queues = spec->u64("queues", 1, 1, 64);
  if (!queues) return queues.status();
  auto mode = spec->choice("mode", "auto", {"auto", "skb", "drv", "zc"});
  if (!mode) return mode.status();
  auto frame = spec->choice("frame", "2048", {"2048", "4096"});
  if (!frame) return frame.status();
  auto ring = spec->u64("ring", 2048, 64, 32768);
  if (!ring) return ring.status();
  if ((*ring & (*ring - 1)) != 0) return spec->invalid("ring", "is not a power of two", "use ring=64, 128, ..., 32768");
  auto busy = spec->u64("busy_poll", 0, 0, 1);
  if (!busy) return busy.status();
  o.queue = static_cast<uint32_t>(*queue);
  o.queues = static_cast<uint32_t>(*queues);
  o.mode = *mode;
  o.frame = *frame == "4096" ? 4096u : 2048u;
  o.ring = static_cast<uint32_t>(*ring);
  o.busy_poll = *busy != 0;
  std::lock_guard lock(ports_mu());
  auto& ports = open_ports();
  std::erase_if(ports, [](const OpenPort& p) { return p.port.expired(); });
  for (const OpenPort& p : ports) {
    if (p.options.iface != o.iface) continue;
    if (!same_queues(p.options, o))
      return Status(Errc::BadState, Layer::Backend,
                    "queue spec '" + std::string(text) + "': afxdp:" + o.iface +
                        " is already open in this process with queue=" + std::to_string(p.options.queue) +
                        ",queues=" + std::to_string(p.options.queues) + ",mode=" + p.options.mode +
                        ",frame=" + std::to_string(p.options.frame) + ",ring=" + std::to_string(p.options.ring) +
                        "; give the same options to share it (RX and TX of one interface), or close it first");
    auto alive = p.port.lock();
    if (!alive) continue;  // closing right now
    return std::unique_ptr<Backend>(std::make_unique<SharedAfxdp>(std::move(alive)));
  }
  auto b = std::make_shared<AfxdpBackend>(o);
  GNIO_TRY(b->open());
  ports.push_back({std::move(o), b});
  return std::unique_ptr<Backend>(std::make_unique<SharedAfxdp>(std::move(b)));
}

}  // namespace gnio::backend
