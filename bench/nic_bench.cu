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
//   baseline  an AF_PACKET socket that only counts (recvmmsg)
//   gnio      afxdp:gnx0,mode=skb and mode=drv, and the DPDK PMDs
//             net_af_xdp and net_af_packet on the same veth, each into the
//             persistent kernel of gnio_bench (bench_kernels.hpp) on the
//             GPU (--gpu auto) or the emulated device (--gpu cpu)
// Each row checks its accounting: received == sent - drops, the drops
// counted by reason (gnio's RX queue, the kernel's AF_XDP socket
// statistics, the baseline socket's tp_drops).
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <sched.h>
#include <sys/utsname.h>
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

#include "../examples/common/example.hpp"
#include "bench_kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "netns_util.hpp"
#include "nic/traffic.hpp"

using namespace gnio;
using nicbench::now_ns;

namespace {

constexpr const char* kDutIf = "gnx0";
constexpr const char* kPeerIf = "gnx1";

volatile std::sig_atomic_t g_interrupted = 0;
void on_signal(int) { g_interrupted = 1; }

struct Options {
  std::string gpu = "auto";
  std::string mem = "gpu";
  std::string json;
  std::vector<uint32_t> sizes{64, 1500};
  double seconds = 2.0;
  uint32_t senders = 0;
  uint32_t ring = 4096;
  std::string dpdk_af_xdp = std::string("dpdk:\"net_af_xdp0,iface=") + kDutIf + "\"";
  std::string dpdk_af_packet = std::string("dpdk:\"net_af_packet0,iface=") + kDutIf + "\"";
  bool quick = false;
};

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
  bool is_baseline = false;

  uint64_t drops() const {
    uint64_t d = kernel.xsk_no_fill_frame + kernel.xsk_rx_ring_full + kernel.packet_ring_full + socket_dropped +
                 veth_silent_drops;
    for (uint64_t v : gnio_dropped) d += v;
    return d;
  }
  bool measured() const { return status == "ok"; }
  bool accounted() const { return received + drops() == send.sent; }
  double mpps() const { return send.seconds > 0 ? window_received / send.seconds / 1e6 : 0; }
  double gbps() const { return mpps() * size * 8 / 1e3; }
  double sender_mpps() const { return send.seconds > 0 ? send.sent / send.seconds / 1e6 : 0; }
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Which side bounds the row: a receiver that got (almost) all that was sent
// without pushing back did not limit it; refusals and drops say it did.
std::string limited_by(const Row& r) {
  if (!r.measured() || r.send.sent == 0) return "";
  const double got = 100.0 * r.received / r.send.sent;
  const double refused = 100.0 * r.send.refused / (r.send.sent + r.send.refused);
  if (got >= 99.0 && refused < 1.0) return "sender (receiver got " + fmt("%.1f", got) + " % of sent)";
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
  return s.empty() ? "0" : s;
}

std::string machine(const Gpu& gpu) {
  utsname u{};
  uname(&u);
  std::string cpu = "unknown cpu";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  const std::string device =
      gpu.emulated() ? std::string("emulated device (kernels on CPU threads)")
                     : "GPU " + gpu.info().name + " (" + gpu.bus_id() + ")";
  return device + "; CPU " + cpu + " x " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + "; kernel " + u.sysname +
         " " + u.release + " " + u.machine;
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
      const std::string& m = dev.status().message();
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
};

void print_table(const std::vector<Row>& rows) {
  std::printf(
      "\n| receiver | size | sent (Mpps) | received (Mpps) | Gbit/s | vs baseline | drops (by reason) | limited by | "
      "accounting |\n|---|---:|---:|---:|---:|---:|---|---|---|\n");
  for (const Row& r : rows) {
    if (!r.measured()) {
      std::printf("| %s | %u B | | | | | | %s | |\n", r.receiver.c_str(), r.size, r.status.c_str());
      continue;
    }
    double base = 0;
    for (const Row& b : rows)
      if (b.is_baseline && b.size == r.size && b.measured()) base = b.mpps();
    std::printf("| %s | %u B | %.3f | %.3f | %.2f | %s | %s | %s | %s |\n", r.receiver.c_str(), r.size,
                r.sender_mpps(), r.mpps(), r.gbps(), base > 0 ? fmt("%.2fx", r.mpps() / base).c_str() : "",
                drops_text(r).c_str(), limited_by(r).c_str(),
                r.accounted() ? "exact" : ("off by " + std::to_string(static_cast<int64_t>(r.send.sent) -
                                                                      static_cast<int64_t>(r.received + r.drops())))
                                              .c_str());
  }
}

nlohmann::json to_json(const Row& r) {
  nlohmann::json drops = nlohmann::json::object();
  for (size_t i = 0; i < kDropReasons; ++i)
    drops[std::string("gnio_") + std::string(drop_reason_name(static_cast<DropReason>(i)))] = r.gnio_dropped[i];
  drops["xsk_no_fill_frame"] = r.kernel.xsk_no_fill_frame;
  drops["xsk_rx_ring_full"] = r.kernel.xsk_rx_ring_full;
  drops["af_packet_ring_full"] = r.kernel.packet_ring_full;
  drops["socket_queue_full"] = r.socket_dropped;
  drops["veth_silent"] = r.veth_silent_drops;
  return {{"receiver", r.receiver}, {"spec", r.spec},       {"size", r.size},
          {"status", r.status},     {"baseline", r.is_baseline},
          {"sent", r.send.sent},    {"refused", r.send.refused}, {"seconds", r.send.seconds},
          {"received", r.received}, {"received_bytes", r.received_bytes}, {"window_received", r.window_received},
          {"drops", drops},         {"drops_total", r.drops()}, {"xsk_sockets", r.kernel.xsk_sockets},
          {"mpps", r.mpps()},       {"sender_mpps", r.sender_mpps()}, {"limited_by", limited_by(r)}};
}

}  // namespace

int main(int argc, char** argv) {
  // Line by line even into a file: a run stopped by a time limit keeps the rows it finished.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  CLI::App app{"nic_bench: a veth pair in two namespaces, one sender, AF_XDP/DPDK receivers into a persistent kernel "
               "against an AF_PACKET baseline"};
  app.add_option("--gpu", o.gpu, "PCIe bus id, auto (falls back to cpu) or cpu")->capture_default_str();
  app.add_option("--mem", o.mem, "RX ring memory of the gnio rows: gpu or host")->check(CLI::IsMember({"gpu", "host"}))
      ->capture_default_str();
  app.add_option("--sizes", o.sizes, "frame sizes in bytes (no FCS)")->capture_default_str();
  app.add_option("--seconds", o.seconds, "sending window per row")->capture_default_str();
  app.add_option("--senders", o.senders, "sender threads (0: a quarter of the cores, 1 to 4)")->capture_default_str();
  app.add_option("--ring", o.ring, "RX ring strides of the gnio rows and afxdp ring= (power of two)")
      ->capture_default_str();
  app.add_option("--dpdk-af-xdp", o.dpdk_af_xdp, "queue spec of the DPDK net_af_xdp row")->capture_default_str();
  app.add_option("--dpdk-af-packet", o.dpdk_af_packet, "queue spec of the DPDK net_af_packet row")
      ->capture_default_str();
  app.add_option("--json", o.json, "also write every row's counts to this file");
  app.add_flag("--quick", o.quick, "a short window and small rings (CI-class machines, tests)");
  CLI11_PARSE(app, argc, argv);
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

  const std::string where = machine(b.gpu);
  std::printf("machine: %s\n", where.c_str());
  const bool pktgen = access("/proc/net/pktgen", F_OK) == 0;
  std::printf("veth pair %s -> %s in two namespaces made by this run; sender: %u AF_PACKET thread(s) with "
              "PACKET_QDISC_BYPASS in the peer namespace, counting what the driver took (kernel pktgen: %s; "
              "xdp-trafficgen not used: it has no frame size and needs XDP on the receiving end); "
              "window %.2f s per row; gnio rows: persistent kernel reading every byte, ring mem=%s\n",
              kPeerIf, kDutIf, b.senders, pktgen ? "loaded, not used" : "module not loaded", o.seconds, o.mem.c_str());
  print_table(rows);
  if (!o.json.empty()) {
    nlohmann::json j = {
        {"machine", where}, {"senders", b.senders}, {"seconds", o.seconds}, {"rows", nlohmann::json::array()}};
    for (const Row& r : rows) j["rows"].push_back(to_json(r));
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
