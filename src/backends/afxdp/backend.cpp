// SPDX-License-Identifier: Apache-2.0
// afxdp:IFACE[,queue=Q][,queues=N][,mode=auto|skb|drv|zc][,frame=2048][,ring=2048][,busy_poll=1]
// — live traffic of a Linux network interface through AF_XDP sockets.
//
// One XSK socket per NIC queue Q..Q+N-1, each with its own UMEM
// (xsk_queue.hpp), fed by gnio's own redirect program (xdp_program.hpp).
// The UMEM is the queue's rx_memory(): frames stay where the NIC (or the
// kernel, in copy mode) wrote them, rx_burst() points at them, and
// rx_release() hands them back to the fill ring. This file settles the
// mode (zc, drv or skb) and the limits of the spec, and opens the queues.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/afxdp/iface.hpp"
#include "backends/afxdp/internal.hpp"
#include "backends/afxdp/xdp_lib.hpp"
#include "backends/afxdp/xdp_program.hpp"
#include "backends/afxdp/xsk_queue.hpp"
#include "backends/drivers.hpp"
#include "backends/port_registry.hpp"
#include "backends/spec.hpp"
#include "core/log.hpp"

namespace gnio::backend {

namespace {

using afxdp::IfaceFacts;
using afxdp::is_permission;
using afxdp::Mode;
using afxdp::Options;
using afxdp::os_error;
using afxdp::privilege_fix;
using afxdp::XskQueue;

// One interface's queues Q..Q+N-1 and the program that feeds them, shared
// by the specs that name the interface (through SharedPort).
class AfxdpPort {
 public:
  explicit AfxdpPort(Options o) : o_(std::move(o)) {}
  AfxdpPort(const AfxdpPort&) = delete;
  AfxdpPort& operator=(const AfxdpPort&) = delete;

  ~AfxdpPort() {
    for (const auto& q : queues_) q->log_statistics();
    // Sockets first: the program must not redirect into closed sockets for long.
    queues_.clear();
  }

  Status open() {
    if (!afxdp::xdp_lib().error.empty())
      return Status(Errc::NotSupported, Layer::Backend,
                    "afxdp:" + o_.iface + ": cannot load libxdp/libbpf (" + afxdp::xdp_lib().error +
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
                           " in " + afxdp::mode_name(mode_) + " mode (asked: " + o_.mode + "), driver " +
                           (facts_.driver.empty() ? "unknown" : facts_.driver) + ", MTU " +
                           std::to_string(facts_.mtu) + ", frame " + std::to_string(o_.frame) + ", ring " +
                           std::to_string(o_.ring));

    caps_.driver = "afxdp";
    caps_.max_rx_queues = static_cast<uint16_t>(o_.queues);
    caps_.max_tx_queues = static_cast<uint16_t>(o_.queues);
    // What the link takes, within a UMEM frame less the kernel's headroom: a
    // longer frame the kernel would drop after the engine counted it sent.
    const uint32_t umem_max = o_.frame - afxdp::kXdpPacketHeadroom;
    caps_.max_packet_size =
        facts_.mtu != 0 ? std::min(umem_max, afxdp::max_frame_for_mtu(facts_.mtu)) : umem_max;
    caps_.drops_when_full = true;
    caps_.xdp_mode = afxdp::mode_name(mode_);
    return Status::ok();
  }

  const Options& options() const { return o_; }
  const EthCaps& caps() const { return caps_; }

  std::optional<RxMemory> rx_memory(uint16_t queue) const {
    if (queue >= queues_.size()) return std::nullopt;
    return queues_[queue]->rx_memory();
  }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) {
    if (queue >= queues_.size()) return bad_queue("RX", queue);
    return queues_[queue]->rx_burst(out);
  }

  void rx_release(uint16_t queue, std::span<const RxFrame> frames) {
    if (queue >= queues_.size()) return;
    queues_[queue]->rx_release(frames);
  }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) {
    if (queue >= queues_.size()) return bad_queue("TX", queue);
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
    return queues_[queue]->tx_burst(frames);
  }

  Status flush() {
    // Everything submitted leaves the socket.
    for (auto& q : queues_) q->flush();
    return Status::ok();
  }

 private:
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
    return afxdp::mode_not_available(o_.iface, facts_.driver, mode, why);
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
      queues_.push_back(std::make_unique<XskQueue>(o_, nic_queue));
      Status s = queues_.back()->open(mode_ == Mode::Zc, prog_.map_fd(), facts_.driver);
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

  Status bad_queue(const char* dir, uint16_t queue) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  "afxdp:" + o_.iface + ": " + dir + " queue " + std::to_string(queue) + " does not exist; the spec opened " +
                      std::to_string(queues_.size()) + " queue(s) (set queues=N)");
  }

  Options o_;
  IfaceFacts facts_;
  EthCaps caps_;
  Mode mode_ = Mode::Skb;
  afxdp::XdpRedirectProgram prog_;
  std::vector<std::unique_ptr<XskQueue>> queues_;
};

// The ports of this process, one per interface (port_registry.hpp).
PortRegistry<AfxdpPort>& ports() {
  static PortRegistry<AfxdpPort> registry;
  return registry;
}

// Whether a spec of options `b` may share the port opened with `a`.
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
  return ports().share_or_open(
      [&o](const AfxdpPort& port) { return port.options().iface == o.iface; },
      [&o, text](const AfxdpPort& port) {
        const Options& p = port.options();
        if (same_queues(p, o)) return Status::ok();
        return Status(Errc::BadState, Layer::Backend,
                      "queue spec '" + std::string(text) + "': afxdp:" + o.iface +
                          " is already open in this process with queue=" + std::to_string(p.queue) +
                          ",queues=" + std::to_string(p.queues) + ",mode=" + p.mode +
                          ",frame=" + std::to_string(p.frame) + ",ring=" + std::to_string(p.ring) +
                          "; give the same options to share it (RX and TX of one interface), or close it first");
      },
      [&o]() -> Result<std::shared_ptr<AfxdpPort>> {
        auto port = std::make_shared<AfxdpPort>(o);
        GNIO_TRY(port->open());
        return port;
      });
}

}  // namespace gnio::backend
