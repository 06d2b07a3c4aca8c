// SPDX-License-Identifier: Apache-2.0
// nic_bench: live traffic on a veth pair into a persistent kernel, one row
// per receiver, against a baseline receiver fed by the same sender.
//
// The bench makes two network namespaces over rtnetlink ("dut" with gnx0,
// "peer" with gnx1): they are held only by descriptors of this process, so
// the kernel removes them, and the veth pair with them, however the process
// ends (SIGINT, SIGKILL included). The sender is an AF_PACKET socket per
// thread in the peer namespace sending straight to the driver; every row
// counts what the driver took (sent) and what it refused (a full veth
// queue; those frames are retried). Receivers run in the dut namespace:
//   baseline  an AF_PACKET socket that only counts (recvmmsg), and where
//             they are installed the tools: xdp-bench drop and xdp-filter
//             (an XDP program that drops every frame, xdp-tools; native
//             and skb mode) and
//             dpdk-testpmd in rxonly mode on net_af_packet and net_af_xdp,
//             run as child processes (bench/nic/tools.hpp)
//   gnio      afxdp:gnx0,mode=skb and mode=drv, and the DPDK PMDs
//             net_af_xdp and net_af_packet on the same veth, each into the
//             persistent kernel of gnio_bench (bench_kernels.hpp) on the
//             GPU (--gpu auto) or the emulated device (--gpu cpu)
// Each row checks its accounting: received == sent - drops, the drops
// counted by reason (gnio's RX queue, the kernel's AF_XDP socket
// statistics, the baseline socket's tp_drops, testpmd's RX-missed and its
// AF_PACKET sockets' tp_drops). The ratio column is against the fastest
// tool that ran, the AF_PACKET socket where none did.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "nic_bench_options.hpp"
#include "gpu_choice.hpp"
#include "bench_kernels.hpp"
#include "common/machine.hpp"
#include "common/table.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "netns_util.hpp"
#include "nic/tools.hpp"
#include "nic/traffic.hpp"

using namespace gnio;
using bench::fmt;
using nicbench::now_ns;

namespace {

using nic_bench::kDutIf;
using nic_bench::Options;
constexpr const char* kPeerIf = "gnx1";

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }


struct Row {
  std::string receiver;
  std::string spec;
  uint32_t size = 0;
  std::string status = "ok";  // ok | not built | not available: ... | failed: ...
  nicbench::SendTotals send;
  uint64_t received = 0, received_bytes = 0;  // everything, after the drain
  uint64_t window_received = 0;               // while the sender ran
  DropCounts gnio_dropped{};
  nicbench::SocketDrops kernel;  // the kernel's drops before gnio's sockets
  uint64_t socket_dropped = 0;  // baseline: the socket's queue was full
  // The veth dropped on transmit without telling the sender (kernels that
  // drop on a full queue and return success): its tx_dropped beyond the
  // sends it refused.
  uint64_t veth_silent_drops = 0;
  // A tool's own count of frames it lost (testpmd's RX-missed and RX-nombuf).
  uint64_t tool_dropped = 0;
  bool is_baseline = false;
  std::string tool;  // the program that received, for a tool's baseline row; "" for this bench's own receivers

  uint64_t drops() const {
    uint64_t d = kernel.xsk_no_fill_frame + kernel.xsk_rx_ring_full + kernel.packet_ring_full + socket_dropped +
                 veth_silent_drops + tool_dropped;
    for (uint64_t v : gnio_dropped) d += v;
    return d;
  }
  bool measured() const { return status == "ok"; }
  bool accounted() const { return received + drops() == send.sent; }
  double mpps() const { return send.seconds > 0 ? window_received / send.seconds / 1e6 : 0; }
  double gbps() const { return mpps() * size * 8 / 1e3; }
  double sender_mpps() const { return send.seconds > 0 ? send.sent / send.seconds / 1e6 : 0; }
};

// The row the others of its size are compared with: the tool that received
// the most, else this bench's own AF_PACKET socket.
const Row* ratio_base(const std::vector<Row>& rows, uint32_t size) {
  const Row* best = nullptr;
  for (const Row& b : rows)
    if (b.is_baseline && !b.tool.empty() && b.size == size && b.measured() && (!best || b.mpps() > best->mpps()))
      best = &b;
  if (best) return best;
  for (const Row& b : rows)
    if (b.is_baseline && b.size == size && b.measured()) return &b;
  return nullptr;
}

// Which side bounds the row: a receiver that got (almost) all that was sent
// without pushing back did not limit it; refusals and drops say it did. On
// veth the sending CPU also runs the receiver's kernel path, and the
// receiver's threads share the cores: a sender that sent clearly less here
// than into the ratio base was slowed by this receiver.
std::string limited_by(const Row& r, const std::vector<Row>& rows) {
  if (!r.measured() || r.send.sent == 0) return "";
  const double got = 100.0 * r.received / r.send.sent;
  const double refused = 100.0 * r.send.refused / (r.send.sent + r.send.refused);
  if (got >= 99.0 && refused < 1.0) {
    const Row* base = ratio_base(rows, r.size);
    if (base && base != &r && r.sender_mpps() < 0.9 * base->sender_mpps())
      return "sender, slowed by this receiver (got " + fmt("%.1f", got) + " % of sent; " +
             fmt("%.3f", base->sender_mpps()) + " Mpps sent into the base)";
    return "sender (receiver got " + fmt("%.1f", got) + " % of sent)";
  }
  std::string why = "receiver (got " + fmt("%.1f", got) + " % of sent";
  if (refused >= 1.0) why += ", " + fmt("%.1f", refused) + " % of sends refused by the full veth queue";
  return why + ")";
}

std::string drops_text(const Row& r) {
  std::string s;
  auto add = [&](const std::string& what, uint64_t n) {
    if (n) s += (s.empty() ? "" : ", ") + what + " " + std::to_string(n);
  };
  for (size_t i = 0; i < kDropReasons; ++i)
    add(std::string("gnio ") + std::string(drop_reason_name(static_cast<DropReason>(i))), r.gnio_dropped[i]);
  add("xsk no fill frame", r.kernel.xsk_no_fill_frame);
  add("xsk rx ring full", r.kernel.xsk_rx_ring_full);
  add("af_packet ring full", r.kernel.packet_ring_full);
  add("socket queue full", r.socket_dropped);
  add("veth dropped on transmit", r.veth_silent_drops);
  add(r.tool + " missed", r.tool_dropped);
  return s.empty() ? "0" : s;
}

bool hugepages_reserved() {
  std::ifstream f("/proc/meminfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("HugePages_Total:", 0) == 0) return std::strtoull(line.c_str() + 16, nullptr, 10) > 0;
  return false;
}

// Sleeps `seconds`, or less after SIGINT/SIGTERM.
void sleep_for(double seconds) {
  const int64_t until = now_ns() + static_cast<int64_t>(seconds * 1e9);
  while (!g_interrupted && now_ns() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// Waits until `count` stops moving (the frames in flight arrived) or reaches `goal`.
void drain(const std::function<uint64_t()>& count, uint64_t goal) {
  const int64_t give_up = now_ns() + 3'000'000'000;
  uint64_t last = count();
  int64_t since = now_ns();
  while (now_ns() < give_up && last < goal) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const uint64_t c = count();
    if (c != last) {
      last = c;
      since = now_ns();
    } else if (now_ns() - since > 300'000'000) {
      break;
    }
  }
}

struct Bench {
  Options o;
  Gpu gpu;
  gnio::nettest::NetNs dut, peer;
  nicbench::Mac dut_mac{}, peer_mac{};
  uint32_t senders = 1;

  Status make_pair() {
    auto d = gnio::nettest::NetNs::create();
    if (!d) return d.status();
    auto p = gnio::nettest::NetNs::create();
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
      GNIO_TRY(gnio::nettest::add_veth(kDutIf, kPeerIf, peer, 1));
      GNIO_TRY(gnio::nettest::link_up(kDutIf));
      auto mac = gnio::nettest::mac_of(kDutIf);
      if (!mac) return mac.status();
      dut_mac = *mac;
      return Status::ok();
    }));
    return peer.run([&]() -> Status {
      GNIO_TRY(gnio::nettest::link_up(kPeerIf));
      auto mac = gnio::nettest::mac_of(kPeerIf);
      if (!mac) return mac.status();
      peer_mac = *mac;
      return Status::ok();
    });
  }

  // Runs the sender for the window around a started receiver whose live
  // count is `count`, then waits for the frames in flight.
  Status send_window(Row& r, const std::function<uint64_t()>& count) {
    nicbench::Sender sender;
    // The receive sockets' drops from here on: reading AF_PACKET statistics
    // resets them, AF_XDP ones are subtracted (sockets a PMD keeps open from
    // an earlier row count only what they dropped in this one).
    const nicbench::SocketDrops sockets_before = nicbench::socket_drops();
    const uint64_t before = count();
    uint64_t veth_dropped = 0;
    {
      gnio::nettest::EnterNs in_peer(peer);
      GNIO_TRY(in_peer.status());
      auto d = nicbench::tx_dropped(kPeerIf);
      if (!d) return d.status();
      veth_dropped = *d;
      GNIO_TRY(sender.start(kPeerIf, nicbench::udp_frames(peer_mac, dut_mac, r.size, 64), senders));
    }
    sleep_for(o.seconds);
    auto sent = sender.stop();
    r.window_received = count() - before;
    if (!sent) return sent.status();
    r.send = *sent;
    {
      gnio::nettest::EnterNs in_peer(peer);
      GNIO_TRY(in_peer.status());
      auto d = nicbench::tx_dropped(kPeerIf);
      if (!d) return d.status();
      veth_dropped = *d - veth_dropped;
    }
    drain(count, r.send.sent);
    r.kernel = nicbench::socket_drops();
    r.kernel.xsk_no_fill_frame -= sockets_before.xsk_no_fill_frame;
    r.kernel.xsk_rx_ring_full -= sockets_before.xsk_rx_ring_full;
    // A drop the sender was told of (ENOBUFS) is a refusal, not a loss.
    r.veth_silent_drops = veth_dropped > r.send.refused ? veth_dropped - r.send.refused : 0;
    return Status::ok();
  }

  Row baseline(uint32_t size) {
    Row r;
    r.receiver = "baseline: AF_PACKET socket, counts only";
    r.spec = std::string("AF_PACKET:") + kDutIf;
    r.size = size;
    r.is_baseline = true;
    nicbench::PacketSink sink;
    if (Status s = sink.start(kDutIf); !s) {
      r.status = "failed: " + s.to_string();
      return r;
    }
    Status s = send_window(r, [&] { return sink.packets(); });
    auto t = sink.stop();
    if (!s || !t) {
      r.status = "failed: " + (!s ? s : t.status()).to_string();
      return r;
    }
    r.received = t->packets;
    r.received_bytes = t->bytes;
    // The sink is an AF_PACKET socket of this process too: what the row's
    // socket reading took from its statistics is its own drops.
    r.socket_dropped = r.kernel.packet_ring_full + t->dropped;
    r.kernel.packet_ring_full = 0;
    return r;
  }

  Row gnio_row(const std::string& receiver, const std::string& spec, uint32_t size) {
    Row r;
    r.receiver = receiver;
    r.spec = spec;
    r.size = size;
    // DPDK's EAL pins the thread that starts it to its main lcore: the
    // threads this one starts later (senders, engines) must not inherit that.
    cpu_set_t affinity;
    const bool have_affinity = sched_getaffinity(0, sizeof affinity, &affinity) == 0;
    auto dev = EthDevice::open(spec);
    if (have_affinity) sched_setaffinity(0, sizeof affinity, &affinity);
    if (!dev) {
      const std::string m = dev.status().message();
      r.status = m.find("not built") != std::string::npos ? "not built"
                 : dev.status().code() == Errc::NotSupported ? "not available: " + m
                                                              : "failed: " + dev.status().to_string();
      return r;
    }
    const RingMem mem = o.mem == "host" ? RingMem::Host : RingMem::Gpu;
    auto q = dev->create_rxq(0);
    if (!q) {
      r.status = "failed: " + q.status().to_string();
      return r;
    }
    for (Status s : {q->set_num_strides(o.ring), q->set_stride_size(2048), q->set_burst_size(bench::kBurst),
                     q->set_ring_mem(mem), q->set_gpu(gpu), q->start()})
      if (!s) {
        r.status = "failed: " + s.to_string();
        return r;
      }
    auto h = GpuRxq::create(gpu, *q);
    auto totals = gpu.alloc(sizeof(bench::TouchTotals), MemKind::GpuCpu);
    if (!h || !totals) {
      r.status = "failed: " + (!h ? h.status() : totals.status()).to_string();
      return r;
    }
    bench::QueueSet set;
    set.rxq[0] = h->handle();
    set.count = 1;
    LaunchConfig cfg;
    cfg.grid = 1;
    cfg.block = gpu.emulated() ? 1u : 256u;
    cfg.name = "nic-bench-rx";
    auto k = PersistentKernel::launch(
        gpu, cfg, bench::TouchKernel{set, static_cast<bench::TouchTotals*>(totals->device_ptr()), bench::kBurst});
    if (!k) {
      r.status = "failed: " + k.status().to_string();
      return r;
    }
    Status s = send_window(r, [&] { return k->totals().packets; });
    Status stopped = k->stop();
    const RxqStats st = q->stats();
    const auto* t = static_cast<const bench::TouchTotals*>(totals->host_ptr());
    r.received = t->packets;
    r.received_bytes = t->bytes;
    r.gnio_dropped = st.dropped;
    if (!s || !stopped) r.status = "failed: " + (!s ? s : stopped).to_string();
    else if (t->bad_release) r.status = "failed: " + std::to_string(t->bad_release) + " bursts released out of order";
    else if (st.errors) r.status = "failed: " + std::to_string(st.errors) + " backend errors";
    h->destroy();
    q->destroy();
    return r;
  }

  // ---- the tools' baselines ------------------------------------------------------

  nicbench::BpfFsNamespace tools_ns;
  bool tools_ns_tried = false;
  Status tools_ns_status;

  // The mount namespace the tools run in (made once: sysfs of the dut
  // namespace, a bpffs of their own), or why there is none.
  Result<int> tools_mount_ns() {
    if (!tools_ns_tried) {
      tools_ns_tried = true;
      auto ns = nicbench::BpfFsNamespace::create();
      if (ns) tools_ns = std::move(*ns);
      else tools_ns_status = ns.status();
    }
    if (!tools_ns_status) return tools_ns_status;
    return tools_ns.fd();
  }

  // A tool's row with what every tool's row shares; status set when the tool cannot run here.
  Row tool_row(const std::string& receiver, const std::string& tool, const std::string& spec, uint32_t size,
               const char* package, nicbench::ChildOptions& child) {
    Row r;
    r.receiver = receiver;
    r.tool = tool;
    r.spec = spec;
    r.size = size;
    r.is_baseline = true;
    if (nicbench::find_tool(tool).empty()) {
      r.status = "not available: " + tool + " not found (Debian package " + package + ")";
      return r;
    }
    auto ns = tools_mount_ns();
    if (!ns) r.status = "failed: " + ns.status().to_string();
    else child.mount_ns = *ns;
    return r;
  }

  // xdp-bench drop: an XDP program that counts and drops every frame. It
  // prints its total only when it ends, so its window count is that total,
  // taken after the drain (what was still in flight at the window's end,
  // at most the veth's queue, counts in its rate).
  Row xdp_bench(uint32_t size, const char* mode) {
    nicbench::ChildOptions child;
    child.terminal = true;  // its output line by line
    Row r = tool_row(std::string("baseline: xdp-bench drop, XDP ") + mode, "xdp-bench",
                     std::string("xdp-bench drop -m ") + mode + " " + kDutIf, size, "xdp-tools", child);
    if (r.status != "ok") return r;
    auto c = nicbench::Child::start({"xdp-bench", "drop", "-m", mode, "-i", "1", kDutIf}, child);
    if (!c) {
      r.status = "failed: " + c.status().to_string();
      return r;
    }
    nicbench::Child& bench = **c;
    // It says which interface it drops on once the program is attached.
    if (!bench.wait_for([](const std::string& out) { return out.find("packets on") != std::string::npos; }, 10)) {
      const int rc = bench.interrupt(2);
      // libbpf says why: a type missing from the kernel's BTF (xdp-tools
      // 1.3.1 on kernel 6.18: a tracepoint its object also carries is gone),
      // else its first complaint.
      const std::string out = bench.output();
      std::string reason = nicbench::last_lines(out, 1);
      size_t why = out.find("kernel BTF");
      why = why == std::string::npos ? out.find("libbpf: ") : out.rfind("libbpf: ", why);
      if (why != std::string::npos)
        reason = nicbench::last_lines(out.substr(why, out.find('\n', why) - why), 1) + " / " + reason;
      r.status = "not available: xdp-bench could not attach its program here (exit status " + std::to_string(rc) +
                 "): " + reason;
      return r;
    }
    Status s = send_window(r, [] { return uint64_t{0}; });
    const int rc = bench.interrupt(5);
    const std::string out = bench.output();
    uint64_t received = 0;
    if (!s) r.status = "failed: " + s.to_string();
    else if (!nicbench::number_after(out, "Packets received", received))
      r.status = "failed: xdp-bench ended (exit status " + std::to_string(rc) +
                 ") without its 'Packets received' total: " + nicbench::last_lines(out, 3);
    r.received = received;
    r.window_received = received;
    return r;
  }

  // xdp-filter with a deny-all policy on Ethernet headers: an XDP program
  // that drops every frame and counts it by action ('xdp-filter status'
  // prints the counts at any time).
  Row xdp_filter(uint32_t size, const char* mode) {
    nicbench::ChildOptions child;
    Row r = tool_row(std::string("baseline: xdp-filter deny all, XDP ") + mode, "xdp-filter",
                     std::string("xdp-filter load -m ") + mode + " -p deny -f ethernet " + kDutIf, size, "xdp-tools",
                     child);
    if (r.status != "ok") return r;
    auto load = nicbench::run_tool({"xdp-filter", "load", "-m", mode, "-p", "deny", "-f", "ethernet", kDutIf}, child, 20);
    if (!load) {
      r.status = "failed: " + load.status().to_string();
      return r;
    }
    if (load->status != 0) {
      r.status = "not available: xdp-filter could not load its program here (exit status " +
                 std::to_string(load->status) + "): " + nicbench::last_lines(load->output, 3);
      return r;
    }
    std::string failure;
    // Every frame the program saw, whatever its action (deny-all: XDP_DROP).
    auto seen = [&]() -> uint64_t {
      auto st = nicbench::run_tool({"xdp-filter", "status"}, child, 10);
      uint64_t total = 0;
      for (const char* action : {"XDP_ABORTED", "XDP_DROP", "XDP_PASS"}) {
        uint64_t n = 0;
        if (st && nicbench::number_after(st->output, action, n)) total += n;
        else if (failure.empty())
          failure = "'xdp-filter status' printed no " + std::string(action) + " count: " +
                    (st ? nicbench::last_lines(st->output, 3) : st.status().to_string());
      }
      return total;
    };
    Status s = send_window(r, seen);
    r.received = seen();
    auto unload = nicbench::run_tool({"xdp-filter", "unload", kDutIf}, child, 20);
    if (!s) r.status = "failed: " + s.to_string();
    else if (!failure.empty()) r.status = "failed: " + failure;
    else if (!unload || unload->status != 0)
      r.status = "failed: 'xdp-filter unload " + std::string(kDutIf) + "' did not detach its program: " +
                 (unload ? nicbench::last_lines(unload->output, 3) : unload.status().to_string());
    return r;
  }

  // dpdk-testpmd in rxonly mode on a virtual device over gnx0, driven
  // through its prompt on a pseudo-terminal: 'show port stats 0' gives the
  // frames it received and missed whenever the bench asks.
  Row testpmd(uint32_t size, const std::string& pmd) {
    nicbench::ChildOptions child;
    child.terminal = true;
    const std::string vdev = pmd + "0,iface=" + kDutIf;
    Row r = tool_row("baseline: dpdk-testpmd rxonly, " + pmd, "dpdk-testpmd", "--vdev " + vdev, size, "dpdk-dev",
                     child);
    if (r.status != "ok") return r;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    // The main lcore and one forwarding lcore, the last core.
    std::vector<std::string> argv{"dpdk-testpmd", "-l", "0," + std::to_string(std::max(cores - 1, 1L)), "--no-pci",
                                  "--no-telemetry", "--log-level=warning", "--vdev", vdev};
    if (hugepages_reserved()) {
      argv.insert(argv.end(), {"--in-memory"});
    } else {
      argv.insert(argv.end(), {"--no-huge", "--no-shconf", "-m", "512"});
    }
    argv.insert(argv.end(), {"--", "-i", "--forward-mode=rxonly", "--total-num-mbufs=16384"});
    auto c = nicbench::Child::start(argv, child);
    if (!c) {
      r.status = "failed: " + c.status().to_string();
      return r;
    }
    nicbench::Child& pmd_app = **c;
    const std::string prompt = "testpmd> ";
    std::string failure;
    // Sends a command and returns what it printed up to the next prompt.
    auto command = [&](const std::string& line) -> std::string {
      const size_t from = pmd_app.output().size();
      if (Status w = pmd_app.write(line + "\n"); !w) {
        if (failure.empty()) failure = w.to_string();
        return "";
      }
      const bool answered = pmd_app.wait_for(
          [&](const std::string& out) {
            const size_t echo = out.find('\n', from);
            return echo != std::string::npos && out.find(prompt, echo) != std::string::npos;
          },
          10);
      const std::string out = pmd_app.output();
      if (!answered && failure.empty())
        failure = "dpdk-testpmd did not answer '" + line + "': " + nicbench::last_lines(out.substr(from), 3);
      return out.substr(std::min(from, out.size()));
    };
    struct PortStats {
      uint64_t received = 0, missed = 0, no_mbuf = 0;
    };
    auto port_stats = [&]() {
      const std::string out = command("show port stats 0");
      PortStats p;
      if (!nicbench::number_after(out, "RX-packets", p.received) || !nicbench::number_after(out, "RX-missed", p.missed) ||
          !nicbench::number_after(out, "RX-nombuf", p.no_mbuf)) {
        if (failure.empty()) failure = "'show port stats 0' printed no RX counts: " + nicbench::last_lines(out, 3);
      }
      return p;
    };
    if (!pmd_app.wait_for([&](const std::string& out) { return out.find(prompt) != std::string::npos; }, 30)) {
      const int rc = pmd_app.interrupt(5);
      r.status = "failed: dpdk-testpmd did not start (exit status " + std::to_string(rc) +
                 "): " + nicbench::last_lines(pmd_app.output(), 3);
      return r;
    }
    command("start");
    Status s = send_window(r, [&] { return port_stats().received; });
    const PortStats end = port_stats();
    // testpmd 22.11's net_af_packet does not count what its sockets'
    // rings dropped; the bench reads them from the kernel (a testpmd that
    // reads them itself leaves the rest: each drop is counted once).
    // net_af_xdp's drops are in its RX-missed already.
    auto sockets = nicbench::socket_drops_of(pmd_app.pid());
    command("stop");
    (void)pmd_app.write("quit\n");
    pmd_app.wait(10);
    r.received = end.received;
    r.tool_dropped = end.missed + end.no_mbuf;
    if (sockets) r.kernel.packet_ring_full = sockets->packet_ring_full;
    if (!s) r.status = "failed: " + s.to_string();
    else if (!failure.empty()) r.status = "failed: " + failure;
    else if (!sockets) r.status = "failed: " + sockets.status().to_string();
    return r;
  }
};

void print_table(const std::vector<Row>& rows) {
  std::vector<uint32_t> sizes;
  for (const Row& r : rows)
    if (std::find(sizes.begin(), sizes.end(), r.size) == sizes.end()) sizes.push_back(r.size);
  for (uint32_t size : sizes) {
    const Row* base = ratio_base(rows, size);
    std::printf("vs baseline at %u B: %s\n", size,
                base ? ("ratio to '" + base->receiver + "' (" + (base->tool.empty() ? "no tool baseline measured, the "
                                                                                       "bench's own socket" :
                                                                                       "the fastest tool") + ")")
                           .c_str()
                     : "no baseline measured");
  }
  std::printf("\n");
  bench::print_header({"receiver", "size", "sent (Mpps)", "received (Mpps)", "Gbit/s", "vs baseline", "drops (by reason)",
                       "limited by", "accounting"},
                      "lrrrrrlll");
  for (const Row& r : rows) {
    if (!r.measured()) {
      bench::print_row({r.receiver, std::to_string(r.size) + " B", "", "", "", "", "", r.status, ""});
      continue;
    }
    const Row* b = ratio_base(rows, r.size);
    const double base = b ? b->mpps() : 0;
    bench::print_row({r.receiver, std::to_string(r.size) + " B", fmt("%.3f", r.sender_mpps()), fmt("%.3f", r.mpps()),
                      fmt("%.2f", r.gbps()), base > 0 ? fmt("%.2fx", r.mpps() / base) : "", drops_text(r),
                      limited_by(r, rows),
                      r.accounted() ? "exact"
                                    : "off by " + std::to_string(static_cast<int64_t>(r.send.sent) -
                                                                 static_cast<int64_t>(r.received + r.drops()))});
  }
}

nlohmann::json to_json(const Row& r, const std::vector<Row>& rows) {
  nlohmann::json drops = nlohmann::json::object();
  for (size_t i = 0; i < kDropReasons; ++i)
    drops[std::string("gnio_") + std::string(drop_reason_name(static_cast<DropReason>(i)))] = r.gnio_dropped[i];
  drops["xsk_no_fill_frame"] = r.kernel.xsk_no_fill_frame;
  drops["xsk_rx_ring_full"] = r.kernel.xsk_rx_ring_full;
  drops["af_packet_ring_full"] = r.kernel.packet_ring_full;
  drops["socket_queue_full"] = r.socket_dropped;
  drops["veth_silent"] = r.veth_silent_drops;
  drops["tool_missed"] = r.tool_dropped;
  const Row* base = ratio_base(rows, r.size);
  const double ratio = base && r.measured() ? bench::ratio(r.mpps(), base->mpps()) : 0;
  return {{"receiver", r.receiver}, {"spec", r.spec},       {"size", r.size},
          {"status", r.status},     {"baseline", r.is_baseline}, {"tool", r.tool},
          {"sent", r.send.sent},    {"refused", r.send.refused}, {"seconds", r.send.seconds},
          {"received", r.received}, {"received_bytes", r.received_bytes}, {"window_received", r.window_received},
          {"drops", drops},         {"drops_total", r.drops()}, {"xsk_sockets", r.kernel.xsk_sockets},
          {"mpps", r.mpps()},       {"sender_mpps", r.sender_mpps()}, {"limited_by", limited_by(r, rows)},
          {"ratio_base", base ? base->receiver : ""}, {"vs_baseline", ratio}};
}

}  // namespace

int nic_bench::run(Options o) {
  if (o.quick) {
    o.seconds = std::min(o.seconds, 0.5);
    o.ring = std::min(o.ring, 2048u);
  }
  if (o.ring < 64 || (o.ring & (o.ring - 1)) != 0)
    return examples::fail({Errc::InvalidValue, Layer::App,
                           "--ring " + std::to_string(o.ring) + " is not a power of two of at least 64; use e.g. 4096"});
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  auto gpu = examples::open_gpu(o.gpu, false);
  if (!gpu) return examples::fail(gpu.status());
  Bench b;
  b.o = o;
  b.gpu = std::move(*gpu);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  b.senders = o.senders ? o.senders : static_cast<uint32_t>(std::clamp(cores / 4, 1L, 4L));
  if (Status s = b.make_pair(); !s) {
    std::fprintf(stderr, "error: cannot make the veth pair: %s\n", s.to_string().c_str());
    return s.message().find("Operation not permitted") != std::string::npos ? 77 : 2;
  }
  // The main thread stays in the dut namespace: every receiver opens there.
  gnio::nettest::EnterNs in_dut(b.dut);
  if (!in_dut.status()) return examples::fail(in_dut.status());

  const std::string ring = std::to_string(o.ring);
  std::vector<Row> rows;
  auto add = [&](Row r) {
    std::fprintf(stderr, "%-40s %5u B: %s, sent %llu, received %llu\n", r.receiver.c_str(), r.size, r.status.c_str(),
                 (unsigned long long)r.send.sent, (unsigned long long)r.received);
    rows.push_back(std::move(r));
  };
  for (uint32_t size : o.sizes) {
    if (size < 60 || size > 1514) {
      std::fprintf(stderr,
                   "error: frame size %u is outside 60..1514 (the veth MTU is 1500); pass e.g. --sizes 64,1500\n",
                   size);
      return 2;
    }
    if (!g_interrupted) add(b.baseline(size));
    // The tools before gnio's DPDK rows: a PMD of this process may keep its
    // socket on gnx0 open after its row, and an XDP program of gnio's would
    // be in the tools' way.
    for (const char* mode : {"native", "skb"})
      if (!g_interrupted) add(b.xdp_bench(size, mode));
    for (const char* mode : {"native", "skb"})
      if (!g_interrupted) add(b.xdp_filter(size, mode));
    for (const char* pmd : {"net_af_packet", "net_af_xdp"})
      if (!g_interrupted) add(b.testpmd(size, pmd));
    for (const char* mode : {"skb", "drv"}) {
      if (g_interrupted) break;
      const std::string spec = std::string("afxdp:") + kDutIf + ",mode=" + mode + ",ring=" + ring;
      add(b.gnio_row(std::string("gnio AF_XDP ") + mode + " mode", spec, size));
    }
  }
  // DPDK last: its EAL starts once per process and stays.
  for (uint32_t size : o.sizes) {
    for (const auto& [receiver, spec] : {std::pair{"gnio DPDK net_af_xdp", o.dpdk_af_xdp},
                                         std::pair{"gnio DPDK net_af_packet", o.dpdk_af_packet}})
      if (!g_interrupted) add(b.gnio_row(receiver, spec, size));
  }

  const std::string where = bench::machine(b.gpu);
  std::printf("machine: %s\n", where.c_str());
  const bool pktgen = access("/proc/net/pktgen", F_OK) == 0;
  std::printf("veth pair %s -> %s in two namespaces made by this run; sender: %u AF_PACKET thread(s) with "
              "PACKET_QDISC_BYPASS in the peer namespace, counting what the driver took (kernel pktgen: %s; "
              "xdp-trafficgen not used: it has no frame size and needs XDP on the receiving end); "
              "window %.2f s per row; gnio rows: persistent kernel reading every byte, ring mem=%s\n",
              kPeerIf, kDutIf, b.senders, pktgen ? "loaded, not used" : "module not loaded", o.seconds, o.mem.c_str());
  std::string tools;
  for (const char* tool : {"xdp-bench", "xdp-filter", "dpdk-testpmd"}) {
    const std::string path = nicbench::find_tool(tool);
    tools += (tools.empty() ? "" : ", ") + std::string(tool) + " " + (path.empty() ? "not found" : path);
  }
  std::printf("baseline tools (children in the %s namespace with its own sysfs and a private bpffs): %s\n", kDutIf,
              tools.c_str());
  print_table(rows);
  if (!o.json.empty()) {
    nlohmann::json j = {
        {"machine", where}, {"senders", b.senders}, {"seconds", o.seconds}, {"rows", nlohmann::json::array()}};
    for (const Row& r : rows) j["rows"].push_back(to_json(r, rows));
    std::ofstream(o.json) << j.dump(2) << "\n";
  }
  if (g_interrupted) {
    std::fprintf(stderr, "interrupted: the table has the rows measured so far; the namespaces go with this process\n");
    return 130;
  }
  for (const Row& r : rows)
    if (r.measured() && !r.accounted()) return 1;
  for (const Row& r : rows)
    if (r.status.rfind("failed", 0) == 0) return 1;
  return 0;
}
