// SPDX-License-Identifier: Apache-2.0
// soak: a long run at high load with gnio's accounting checked every second.
//
// Several RX queues fed without pause by the prebuilt `mem:` source (or the
// generator), one persistent-kernel block per queue that receives, echoes
// each burst through a TX queue of its own (pcap-out:/dev/null) and releases
// it. Every second: delivered + dropped <= offered on every queue, every
// block's heartbeat moved, the kernel made progress; after the warm-up the
// resident memory stays within a bound of where it was and the open file
// descriptors stay the same. At the end, with the engines stopped, offered
// == delivered + dropped exactly, the kernel released what it counted and
// the TX queues sent it. One line every --report seconds, a verdict line per
// check, and exit status 1 on any violation.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "soak_options.hpp"
#include "gpu_choice.hpp"
#include "gnio/host_reference.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"

using namespace gnio;
using Clock = std::chrono::steady_clock;

namespace {

using soak::Options;

constexpr uint64_t kPollNs = 200000;  // a stop request is seen within 200 us

struct SoakQueues {
  static constexpr uint32_t kMax = 16;
  dev::Rxq rxq[kMax];
  dev::Txq txq[kMax];
  uint32_t count = 0;
  bool echo = false;
};

// Block b serves RX queue b: receives a burst, sends it back out zero-copy
// from the ring (when echoing), waits for the sends to complete (the TX
// engine reads the ring's bytes), releases the burst.
struct SoakKernel {
  SoakQueues q;
  uint32_t burst;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Block;
    const uint32_t id = dev::block_index() % q.count;
    const dev::Rxq& rxq = q.rxq[id];
    const dev::Txq& txq = q.txq[id];
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        ++mine;
        my_bytes += b[i].size();
      }
      if (q.echo) {
        dev::TxBatch t = txq.reserve<S>(b.count());
        while (t.status() == dev::Status::Again && dev::scope_all<S>(ctx.running())) {
          ctx.count_again();
          txq.wait_completions(txq.completed() + 1, kPollNs);
          t = txq.reserve<S>(b.count());
        }
        if (t.status() != dev::Status::Success) break;  // stopping
        for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>())
          t.set(i, b[i].data(), b[i].size());
        txq.commit<S>(t);
        if (dev::scope_rank<S>() == 0) {
          txq.push();
          while (txq.wait_completions(t.first() + t.count(), kPollNs) == dev::Status::Timeout && ctx.running()) {
          }
        }
      }
      if (rxq.release<S>(b) != dev::Status::Success) ctx.count_error();
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
  }
};


double resident_mib() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

size_t open_fds() {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++n;
  return n;
}

uint64_t dropped(const RxqStats& s) {
  uint64_t d = 0;
  for (uint64_t v : s.dropped) d += v;
  return d;
}

// The violations of one run, each said once with its first occurrence, and counted.
struct Violations {
  std::vector<std::string> first;
  std::vector<uint64_t> count;
  std::vector<std::string> kinds;

  void add(const std::string& kind, const std::string& what) {
    auto it = std::find(kinds.begin(), kinds.end(), kind);
    if (it == kinds.end()) {
      kinds.push_back(kind);
      first.push_back(what);
      count.push_back(1);
      std::printf("violation (%s): %s\n", kind.c_str(), what.c_str());
      std::fflush(stdout);
    } else {
      ++count[static_cast<size_t>(it - kinds.begin())];
    }
  }
  uint64_t of(const std::string& kind) const {
    auto it = std::find(kinds.begin(), kinds.end(), kind);
    return it == kinds.end() ? 0 : count[static_cast<size_t>(it - kinds.begin())];
  }
};

int fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "error: %s: %s\n", what.c_str(), s.to_string().c_str());
  return 2;
}

}  // namespace

int soak::run(Options o) {
  if (o.queues == 0 || o.queues > SoakQueues::kMax) {
    std::fprintf(stderr, "error: --queues %u is out of range 1..%u\n", o.queues, SoakQueues::kMax);
    return 2;
  }
  if (o.warmup_s < 0) o.warmup_s = std::min(30.0, o.duration_s / 5);
  if (o.warmup_s >= o.duration_s) {
    std::fprintf(stderr, "error: --warmup %.0f s leaves nothing of --duration %.0f s; give a shorter warm-up\n",
                 o.warmup_s, o.duration_s);
    return 2;
  }

  auto gpu = examples::open_gpu(o.gpu, false);
  if (!gpu) return examples::fail(gpu.status());
  const std::string tail = "count=0,flows=1024,proto=mix,size=" + o.size + ",queues=" + std::to_string(o.queues) +
                           (o.pps > 0 ? ",pps=" + std::to_string(static_cast<uint64_t>(o.pps)) : "");
  const std::string spec = o.source == "mem" ? "mem:frames=1024,ring=8192," + tail : "synthetic:" + tail;
  auto rx_dev = EthDevice::open(spec);
  if (!rx_dev) return fail("opening " + spec, rx_dev.status());
  std::vector<EthRxq> rxqs;
  std::vector<EthDevice> tx_devs;
  std::vector<EthTxq> txqs;
  std::vector<GpuRxq> grx;
  std::vector<GpuTxq> gtx;
  SoakQueues set;
  set.echo = o.echo;
  for (uint32_t id = 0; id < o.queues; ++id) {
    auto rq = rx_dev->create_rxq(static_cast<uint16_t>(id));
    if (!rq) return fail("creating RX queue " + std::to_string(id), rq.status());
    for (Status s : {rq->set_num_strides(o.strides), rq->set_stride_size(2048), rq->set_burst_size(o.burst),
                     rq->set_ring_mem(o.mem == "gpu" ? RingMem::Gpu : RingMem::Host), rq->set_gpu(*gpu), rq->start()})
      if (!s) return fail("configuring RX queue " + std::to_string(id), s);
    auto h = GpuRxq::create(*gpu, *rq);
    if (!h) return fail("GPU handle of RX queue " + std::to_string(id), h.status());
    set.rxq[id] = h->handle();
    rxqs.push_back(std::move(*rq));
    grx.push_back(std::move(*h));
    if (o.echo) {
      auto d = EthDevice::open("pcap-out:/dev/null");
      if (!d) return fail("opening pcap-out:/dev/null", d.status());
      auto tq = d->create_txq(0);
      if (!tq) return fail("creating TX queue " + std::to_string(id), tq.status());
      for (Status s : {tq->set_depth(std::max(1024u, std::bit_ceil(o.burst) * 2)), tq->set_gpu(*gpu), tq->start()})
        if (!s) return fail("configuring TX queue " + std::to_string(id), s);
      auto th = GpuTxq::create(*gpu, *tq);
      if (!th) return fail("GPU handle of TX queue " + std::to_string(id), th.status());
      set.txq[id] = th->handle();
      tx_devs.push_back(std::move(*d));
      txqs.push_back(std::move(*tq));
      gtx.push_back(std::move(*th));
    }
  }
  set.count = o.queues;
  LaunchConfig cfg;
  cfg.grid = o.queues;
  cfg.block = gpu->emulated() ? 1u : o.block;
  cfg.name = "soak";
  auto k = PersistentKernel::launch(*gpu, cfg, SoakKernel{set, o.burst});
  if (!k) return fail("launching the kernel", k.status());

  std::printf("soak: %s, %u queue(s), ring mem=%s, echo %s, on %s (%s); %.0f s, warm-up %.0f s, RSS growth limit "
              "%.1f MiB\n",
              spec.c_str(), o.queues, o.mem.c_str(), o.echo ? "through pcap-out:/dev/null" : "off",
              gpu->bus_id().c_str(), gpu->emulated() ? "emulated device" : gpu->info().name.c_str(), o.duration_s,
              o.warmup_s, o.rss_limit_mib);
  std::fflush(stdout);

  Violations v;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<uint64_t> beats(o.queues, 0);
  uint64_t samples = 0, last_packets = 0, report_packets = 0, stalled_seconds = 0;
  double rss_base = 0, rss_max_growth = 0, report_at = o.report_s, report_t = 0;
  size_t fds_base = 0;
  bool warm = false;
  for (uint64_t second = 1; second <= static_cast<uint64_t>(o.duration_s); ++second) {
    std::this_thread::sleep_until(start + std::chrono::seconds(second));
    ++samples;
    RxqStats sum;
    for (uint32_t id = 0; id < o.queues; ++id) {
      const RxqStats s = rxqs[id].stats();
      if (s.packets + dropped(s) > s.offered)
        v.add("counters", "second " + std::to_string(second) + ", queue " + std::to_string(id) + ": delivered " +
                              std::to_string(s.packets) + " + dropped " + std::to_string(dropped(s)) + " > offered " +
                              std::to_string(s.offered));
      if (s.errors != 0) v.add("counters", "queue " + std::to_string(id) + ": " + std::to_string(s.errors) + " backend errors");
      sum += s;
    }
    const std::vector<dev::BlockCounters> blocks = k->counters();
    for (uint32_t b = 0; b < blocks.size() && b < beats.size(); ++b) {
      if (blocks[b].heartbeat == beats[b])
        v.add("heartbeat", "second " + std::to_string(second) + ": block " + std::to_string(b) +
                               " heartbeat stayed at " + std::to_string(beats[b]));
      beats[b] = blocks[b].heartbeat;
    }
    const KernelTotals t = k->totals();
    stalled_seconds = t.packets == last_packets ? stalled_seconds + 1 : 0;
    if (stalled_seconds >= 3)
      v.add("progress", "second " + std::to_string(second) + ": the kernel finished no packet for " +
                            std::to_string(stalled_seconds) + " s (at " + std::to_string(t.packets) + ")");
    if (t.errors != 0) v.add("progress", "the kernel counted " + std::to_string(t.errors) + " errors");
    last_packets = t.packets;
    const double rss = resident_mib();
    const size_t fds = open_fds();
    if (!warm && elapsed() >= o.warmup_s) {
      warm = true;
      rss_base = rss;
      fds_base = fds;
      std::printf("warm-up over at %.0f s: RSS %.1f MiB, %zu open fds\n", elapsed(), rss, fds);
    } else if (warm) {
      rss_max_growth = std::max(rss_max_growth, rss - rss_base);
      if (rss - rss_base >= o.rss_limit_mib)
        v.add("rss", "second " + std::to_string(second) + ": RSS " + std::to_string(rss) + " MiB, " +
                         std::to_string(rss - rss_base) + " MiB over the " + std::to_string(rss_base) +
                         " MiB after the warm-up");
      if (fds != fds_base)
        v.add("fds", "second " + std::to_string(second) + ": " + std::to_string(fds) + " open fds, " +
                         std::to_string(fds_base) + " after the warm-up");
    }
    if (elapsed() + 0.5 >= report_at) {
      const double dt = elapsed() - report_t;
      std::printf("t=%.0fs %.3f Mpps offered=%llu delivered=%llu dropped=%llu kernel=%llu echoed=%llu rss=%.1fMiB "
                  "fds=%zu\n",
                  elapsed(), (t.packets - report_packets) / dt / 1e6, (unsigned long long)sum.offered,
                  (unsigned long long)sum.packets, (unsigned long long)dropped(sum), (unsigned long long)t.packets,
                  (unsigned long long)[&] {
                    uint64_t n = 0;
                    for (const EthTxq& tq : txqs) n += tq.stats().packets;
                    return n;
                  }(),
                  rss, fds);
      std::fflush(stdout);
      report_packets = t.packets;
      report_t = elapsed();
      report_at += o.report_s;
    }
  }

  // The end: the kernel stops, the TX queues send what is queued, the RX
  // engines stop; nothing moves any more, so the counts must add up exactly.
  const double run_s = elapsed();
  if (Status s = k->stop(); !s) v.add("stop", "stopping the kernel: " + s.to_string());
  const KernelTotals end = k->totals();
  const std::vector<dev::BlockCounters> per_block = k->counters();
  uint64_t tx_packets = 0, tx_errors = 0;
  for (GpuTxq& h : gtx)
    if (Status s = h.destroy(); !s) v.add("stop", "releasing a TX queue's GPU handle: " + s.to_string());
  for (EthTxq& tq : txqs) {
    if (Status s = tq.stop(); !s) v.add("stop", "flushing a TX queue: " + s.to_string());
    tx_packets += tq.stats().packets;
    tx_errors += tq.stats().errors;
  }
  for (GpuRxq& h : grx)
    if (Status s = h.destroy(); !s) v.add("stop", "releasing an RX queue's GPU handle: " + s.to_string());
  RxqStats total;
  for (uint32_t id = 0; id < o.queues; ++id) {
    if (Status s = rxqs[id].stop(); !s) v.add("stop", "stopping RX queue " + std::to_string(id) + ": " + s.to_string());
    const RxqStats s = rxqs[id].stats();
    const uint64_t finished = id < per_block.size() ? per_block[id].packets : 0;
    const std::string qn = "queue " + std::to_string(id) + ": ";
    if (s.offered != s.packets + dropped(s))
      v.add("counters", qn + "offered " + std::to_string(s.offered) + " != delivered " + std::to_string(s.packets) +
                            " + dropped " + std::to_string(dropped(s)) + " after the engine stopped");
    // The kernel released, in order, what it finished; what it had not
    // received yet stays in the ring.
    if (finished > s.packets || s.released > finished || s.packets - finished > o.strides)
      v.add("counters", qn + "the kernel finished " + std::to_string(finished) + " packets, the queue delivered " +
                            std::to_string(s.packets) + " and saw " + std::to_string(s.released) +
                            " released (at most " + std::to_string(o.strides) + " may wait in the ring)");
    total += s;
  }
  if (o.echo && (tx_packets != end.packets || tx_errors != 0))
    v.add("echo", "the TX queues sent " + std::to_string(tx_packets) + " packets (" + std::to_string(tx_errors) +
                      " errors); the kernel echoed " + std::to_string(end.packets));

  const bool counters_ok = v.of("counters") == 0 && v.of("stop") == 0;
  std::printf("end after %.1f s: offered=%llu delivered=%llu dropped=%llu kernel=%llu echoed=%llu (%.3f Mpps, %.2f "
              "Gbit/s average)\n",
              run_s, (unsigned long long)total.offered, (unsigned long long)total.packets,
              (unsigned long long)dropped(total), (unsigned long long)end.packets, (unsigned long long)tx_packets,
              end.packets / run_s / 1e6, end.bytes * 8.0 / run_s / 1e9);
  std::printf("check counters: %s (%llu samples of delivered + dropped <= offered on %u queues; at the end offered == "
              "delivered + dropped on every queue)\n",
              counters_ok ? "ok" : "FAILED", (unsigned long long)samples, o.queues);
  std::printf("check heartbeat: %s (every block's heartbeat moved every second; %llu stalls)\n",
              v.of("heartbeat") == 0 ? "ok" : "FAILED", (unsigned long long)v.of("heartbeat"));
  std::printf("check progress: %s (the kernel finished packets; %llu seconds flagged)\n",
              v.of("progress") == 0 ? "ok" : "FAILED", (unsigned long long)v.of("progress"));
  std::printf("check rss: %s (growth after the warm-up at most %+.2f MiB, limit %.1f MiB; %.1f MiB at the warm-up)\n",
              v.of("rss") == 0 && warm ? "ok" : "FAILED", rss_max_growth, o.rss_limit_mib, rss_base);
  std::printf("check fds: %s (%zu open after the warm-up, %zu at the end of the run)\n",
              v.of("fds") == 0 && warm ? "ok" : "FAILED", fds_base, open_fds());
  if (o.echo)
    std::printf("check echo: %s (sent %llu of %llu echoed)\n", v.of("echo") == 0 ? "ok" : "FAILED",
                (unsigned long long)tx_packets, (unsigned long long)end.packets);
  uint64_t n = 0;
  for (uint64_t c : v.count) n += c;
  const bool pass = n == 0 && warm && end.packets > 0;
  std::printf("verdict: %s (%llu violation(s))\n", pass ? "PASS" : "FAIL", (unsigned long long)n);
  return pass ? 0 : 1;
}
