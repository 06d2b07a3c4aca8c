// SPDX-License-Identifier: Apache-2.0
// packet_processing: the reference application. One persistent kernel per
// GPU receives every packet, classifies it in place (IPv4/IPv6, UDP, TCP,
// ICMP, DNS, HTTP, checksum state) and answers ICMP/ICMPv6 echo requests by
// turning them into replies in the RX ring and sending them zero-copy
// through a TX queue. Progress reaches the host through a semaphore while
// the kernel runs; --verify recounts on the host and fails on a difference.
#include <cstdio>
#include <cstring>

#include "../common/example.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "classify.hpp"
#include "options.hpp"
#include "gnio/dev/kernel.hpp"
#include "gnio/dev/rxq.hpp"
#include "gnio/dev/semaphore.hpp"
#include "gnio/dev/txq.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;
using examples::TrafficCounters;

namespace {

struct Progress {
  uint64_t bursts;
  uint64_t packets;
};

template <Scope S>
struct PacketProcessingKernel {
  dev::Rxq rxq;
  dev::Txq txq;
  bool reply;
  TrafficCounters* totals;  // GpuCpu memory (atomics need device memory), added to once per thread at exit
  dev::Semaphore progress;  // Progress items, published every kProgressEvery bursts
  uint32_t burst;
  static constexpr uint64_t kProgressEvery = 64;

  // Sends one reply, draining completions while the ring is full (Again);
  // returns the descriptor index to wait for, or ~0 when stopping. A reply
  // the queue refuses (longer than it sends) still completes in order: it
  // is waited for like the others and counted by the queue as dropped.
  GNIO_HD uint64_t send_reply(const dev::KernelCtx& ctx, const dev::Packet& p) const {
    dev::TxBatch t = txq.reserve<Scope::Thread>(1);
    while (t.status() == dev::Status::Again) {
      ctx.count_again();
      if (!ctx.running()) return ~0ull;
      txq.wait_completions(txq.completed() + 1, dev::kPollNs);
      t = txq.reserve<Scope::Thread>(1);
    }
    if (t.status() != dev::Status::Success) return ~0ull;
    if (t.set(0, p.data(), p.size()) != dev::Status::Success) ctx.count_error();
    txq.commit<Scope::Thread>(t);
    txq.push();
    return t.first() + 1;
  }

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    TrafficCounters local{};
    uint64_t bursts = 0, packets = 0;
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, dev::kPollNs);
      if (b.count() == 0) continue;
      uint64_t wait_for = 0, mine = 0, my_bytes = 0;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        dev::Packet p = b[i];
        ++mine;
        my_bytes += p.size();
        if (examples::account(p.data(), p.size(), local) && reply &&
            dev::swap_addresses(p.data(), p.size()) == dev::HeaderStatus::Ok)
          wait_for = send_reply(ctx, p);
      }
      // The engine reads replies from the ring: release only after they left.
      if (wait_for != 0 && wait_for != ~0ull)
        while (txq.wait_completions(wait_for, dev::kPollNs) == dev::Status::Timeout && ctx.running()) {
        }
      rxq.release<S>(b);
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
      ++bursts;
      packets += b.count();
      if (dev::scope_rank<S>() == 0 && bursts % kProgressEvery == 0) {
        const uint32_t item = static_cast<uint32_t>(bursts / kProgressEvery);
        if (progress.get_status(item) == dev::SemStatus::Free) {  // never block the datapath on the host
          Progress pr{bursts, packets};
          const uint8_t* src = reinterpret_cast<const uint8_t*>(&pr);
          for (uint32_t k = 0; k < sizeof(pr); ++k) progress.payload(item)[k] = src[k];
          progress.set_status(item, dev::SemStatus::Ready);
        }
      }
    }
    local.publish_to(totals);
  }
};

Result<TrafficCounters> host_reference(const std::string& spec) {
  TrafficCounters c{};
  GNIO_TRY(for_each_host_frame(
      spec, [&](std::vector<uint8_t>& f) { examples::account(f.data(), static_cast<uint32_t>(f.size()), c); }));
  return c;
}

void print_counters(const char* title, const TrafficCounters& c) {
  std::printf("%s\n", title);
  std::printf("  packets %llu  bytes %llu\n", (unsigned long long)c.packets, (unsigned long long)c.bytes);
  std::printf("  ipv4 %llu  ipv6 %llu  udp %llu  tcp %llu  icmp %llu  other %llu\n", (unsigned long long)c.ipv4,
              (unsigned long long)c.ipv6, (unsigned long long)c.udp, (unsigned long long)c.tcp,
              (unsigned long long)c.icmp, (unsigned long long)c.other);
  std::printf("  dns %llu  http %llu  echo requests %llu  echo refused %llu\n", (unsigned long long)c.dns,
              (unsigned long long)c.http, (unsigned long long)c.echo_requests, (unsigned long long)c.echo_refused);
  std::printf("  bad L3 csum %llu  bad L4 csum %llu  partial L4 csum %llu  malformed %llu\n",
              (unsigned long long)c.l3_csum_bad, (unsigned long long)c.l4_csum_bad,
              (unsigned long long)c.l4_csum_partial, (unsigned long long)c.malformed);
}

}  // namespace

int packet_processing::run(const Options& o) {
  auto setup = examples::setup(o.scope, o.mem, o.gpu, o.require_gpu);
  if (const int* rc = std::get_if<int>(&setup)) return *rc;
  // Named references, not a structured binding: the kernel lambdas capture
  // them, which C++20 allows but clang before 16 does not.
  auto& chosen = std::get<examples::Setup>(setup);
  const Scope scope = chosen.scope;
  const RingMem mem = chosen.mem;
  Gpu& gpu = chosen.gpu;
  std::printf("packet_processing: %s on %s (%s), ring mem=%s, scope=%s\n", o.nic.c_str(), gpu.bus_id().c_str(),
              gpu.info().name.c_str(), o.mem.c_str(), o.scope.c_str());

  // Layer 1 first: the Ethernet queues, configured and started.
  auto rx_dev = EthDevice::open(o.nic);
  if (!rx_dev) return examples::fail(rx_dev.status());
  const bool reply = !o.reply_out.empty();
  auto tx_dev = EthDevice::open(reply ? o.reply_out : "loop:");
  if (!tx_dev) return examples::fail(tx_dev.status());
  auto rxq = rx_dev->create_rxq(0);
  auto txq = tx_dev->create_txq(0);
  if (!rxq) return examples::fail(rxq.status());
  if (!txq) return examples::fail(txq.status());
  for (Status s : {rxq->set_num_strides(o.strides), rxq->set_stride_size(o.stride), rxq->set_burst_size(o.burst),
                   rxq->set_ring_mem(mem), rxq->set_gpu(gpu), rxq->start(), txq->set_depth(1024),
                   txq->set_gpu(gpu), txq->start()})
    if (!s) return examples::fail(s);
  // Layer 3 on top: GPU handles of the started queues.
  auto grxq = GpuRxq::create(gpu, *rxq);
  if (!grxq) return examples::fail(grxq.status());
  auto gtxq = GpuTxq::create(gpu, *txq);
  if (!gtxq) return examples::fail(gtxq.status());
  auto progress = GpuSemaphore::create(gpu, 16, sizeof(Progress));
  if (!progress) return examples::fail(progress.status());
  auto totals = gpu.alloc(sizeof(TrafficCounters), MemKind::GpuCpu);
  if (!totals) return examples::fail(totals.status());

  const auto start = std::chrono::steady_clock::now();
  LaunchConfig cfg;
  cfg.block = gpu.emulated() ? 1u : o.block;
  cfg.name = "packet_processing";
  auto kernel = with_scope(scope, [&]<Scope S>() {
    return PersistentKernel::launch(gpu, cfg,
                                    PacketProcessingKernel<S>{grxq->handle(), gtxq->handle(), reply,
                                                              static_cast<TrafficCounters*>(totals->device_ptr()),
                                                              progress->handle(), o.burst});
  });
  if (!kernel) return examples::fail(kernel.status());

  uint32_t next_item = 1;
  Status waited = examples::wait_until(
      [&] {
        for (; progress->status(next_item) == dev::SemStatus::Ready; ++next_item) {
          Progress pr;
          std::memcpy(&pr, progress->payload(next_item), sizeof(pr));
          if (!o.quiet)
            std::printf("  progress: %llu bursts, %llu packets\n", (unsigned long long)pr.bursts,
                        (unsigned long long)pr.packets);
          progress->set_status(next_item, dev::SemStatus::Free);
        }
        return rxq->at_end();
      },
      std::chrono::seconds(o.timeout_s), "processing every packet", *kernel);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Status stopped = kernel->stop();
  if (!waited) return examples::fail(waited);
  if (!stopped) return examples::fail(stopped);
  if (Status s = rxq->source_status(); !s) return examples::fail(s);

  const TrafficCounters got = *static_cast<const TrafficCounters*>(totals->host_ptr());
  print_counters("GPU counters:", got);
  const RxqStats rs = rxq->stats();
  const TxqStats ts = txq->stats();
  const KernelTotals kt = kernel->totals();
  std::printf("  rx: packets %llu rx_missed %llu bursts %llu | tx: replies sent %llu errors %llu | kernel: "
              "bursts %llu again %llu\n",
              (unsigned long long)rs.packets, (unsigned long long)rs.rx_missed, (unsigned long long)rs.bursts,
              (unsigned long long)ts.packets, (unsigned long long)ts.errors, (unsigned long long)kt.bursts,
              (unsigned long long)kt.again);
  std::printf("  rx: %s\n", examples::rx_stats_line(rs).c_str());
  if (reply) std::printf("  tx: %s\n", examples::tx_stats_line(ts).c_str());
  std::printf("  %.3f s, %.3f Mpps\n", seconds, got.packets / seconds / 1e6);

  int rc = 0;
  if (reply && ts.packets != got.echo_requests) {
    std::fprintf(stderr, "FAIL: %llu echo requests but %llu replies sent\n", (unsigned long long)got.echo_requests,
                 (unsigned long long)ts.packets);
    rc = 1;
  }
  if (o.verify) {
    auto ref = host_reference(o.nic);
    if (!ref) return examples::fail(ref.status());
    const bool same = std::memcmp(&*ref, &got, sizeof(got)) == 0;
    if (!same) print_counters("host reference:", *ref);
    std::printf("host reference -> %s\n", same ? "MATCH" : "MISMATCH");
    if (!same)
      std::printf("difference: %s\n", examples::explain_difference(rs, got.packets, ref->packets).c_str());
    if (!same) rc = 1;
  }
  for (Status s : {progress->destroy(), gtxq->destroy(), grxq->destroy(), txq->destroy(), rxq->destroy()})
    if (!s) return examples::fail(s);
  return rc;
}
