// SPDX-License-Identifier: Apache-2.0
// Echo latency at low load: one packet at a time from a peer on a loop:
// wire, through the echo kernel and back, the round trip split into its hops.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <span>

#include "sections.hpp"
#include "../common/clock.hpp"
#include "../common/table.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;
using bench::Clock;
using bench::fmt;

namespace gnio_bench {
namespace {

// The examples' echo kernel (one warp, bursts of one) that also notes, per
// RX packet k, when it saw the packet, had its reply written, had the TX
// descriptor committed and rang the TX doorbell (%globaltimer, the clock
// the engines stamp frames with), so that a round trip splits into its
// hops and the kernel's hop into its steps.
enum EchoStamp : uint32_t { kSeen, kReplied, kCommitted, kPushed, kStampsPerPacket };

// %globaltimer after every memory access before it in program order: the
// compiler must not move a step's loads and stores past its stamp.
GNIO_HD inline uint64_t stamp_ns() {
#if GNIO_DEVICE_PASS
  asm volatile("" ::: "memory");
#endif
  return dev::now_ns();
}

struct EchoStampKernel {
  dev::Rxq rxq;
  dev::Txq txq;
  uint64_t* stamps;  // pinned host: EchoStamp s of packet k at [kStampsPerPacket * (k % nstamps) + s]
  uint32_t nstamps;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Warp;
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(1, dev::kPollNs);
      if (b.count() == 0) continue;
      const uint64_t seen = stamp_ns();
      const bool leader = dev::scope_rank<S>() == 0;
      if (leader && dev::swap_addresses_staged(b[0].data(), b[0].size()) != dev::HeaderStatus::Ok)
        ctx.count_error();
      const uint64_t replied = stamp_ns();
      dev::TxBatch t = txq.reserve<S>(1);
      while (t.status() == dev::Status::Again && dev::scope_all<S>(ctx.running())) {
        txq.wait_completions(txq.completed() + 1, dev::kPollNs);
        t = txq.reserve<S>(1);
      }
      if (t.status() != dev::Status::Success) break;
      if (leader) t.set(0, b[0].data(), b[0].size());
      txq.commit<S>(t);
      if (leader) {
        const uint64_t committed = stamp_ns();
        txq.push();
        uint64_t* at = &stamps[kStampsPerPacket * (b.first() % nstamps)];
        dev::store_relaxed(&at[kSeen], seen);
        dev::store_relaxed(&at[kReplied], replied);
        dev::store_relaxed(&at[kCommitted], committed);
        dev::store_relaxed(&at[kPushed], stamp_ns());
        while (txq.wait_completions(t.first() + 1, dev::kPollNs) == dev::Status::Timeout && ctx.running()) {
        }
      }
      rxq.release<S>(b);
      ctx.count_packets(leader ? 1 : 0, leader ? b[0].size() : 0);
    }
  }
};

// busy: the RX engine threads of both ends spin instead of backing off
// (poll=busy, the DPDK way: a core each at 100 % for the lowest latency).
// The result splits the round trip: the peer's send to the kernel seeing
// the packet plus the doorbell to the TX engine's send (wire, RX engine,
// ring; TX engine), the kernel (its steps: the reply made, i.e. the
// descriptor and the packet read and the reply's bytes written; the TX
// reservation and the commit, whose system fence waits for those writes;
// the doorbell), and the TX engine's send to the peer's host receive
// (wire, the peer's RX engine).
Row echo_latency(Gpu& gpu, const Options& o, RingMem mem, bool busy) {
  Row r{std::string("echo round trip at low load, mem=") + (mem == RingMem::Gpu ? "gpu" : "host") +
            (busy ? ", RX engines busy-poll" : ""),
        128, 1};
  r.ok = false;
  const std::string wire = "loop:bench-" + std::to_string(getpid()) + (mem == RingMem::Gpu ? "g" : "h");
  auto a = EthDevice::open(wire);
  auto b = EthDevice::open(wire);
  if (!a || !b) return r;
  auto rxq = a->create_rxq(0);
  auto txq = a->create_txq(0);
  if (!rxq || !txq) return r;
  for (Status s : {rxq->set_num_strides(1024), rxq->set_burst_size(1), rxq->set_ring_mem(mem), rxq->set_busy_poll(busy),
                   rxq->set_gpu(gpu), rxq->start(), txq->set_depth(256), txq->set_gpu(gpu), txq->start()})
    if (!s) {
      std::fprintf(stderr, "echo: %s\n", s.to_string().c_str());
      return r;
    }
  auto hrx = GpuRxq::create(gpu, *rxq);
  auto htx = GpuTxq::create(gpu, *txq);
  if (!hrx || !htx) return r;
  const uint32_t nstamps = o.samples + 128;
  auto stamps = gpu.alloc(size_t{nstamps} * kStampsPerPacket * sizeof(uint64_t), MemKind::CpuGpu, 128);
  if (!stamps) return r;
  auto* stamp = static_cast<const uint64_t*>(stamps->host_ptr());
  auto k = PersistentKernel::launch(
      gpu, launch_config(1, gpu.emulated() ? 1u : 32u, "bench-echo"),
      EchoStampKernel{hrx->handle(), htx->handle(), static_cast<uint64_t*>(stamps->device_ptr()), nstamps});
  auto peer_tx = b->create_txq(0);
  auto peer_rx = b->create_rxq(0);
  if (!k) return not_launched(r, k.status());
  if (!peer_tx || !peer_rx || !peer_tx->start() || !peer_rx->set_busy_poll(busy) || !peer_rx->start()) return r;
  const auto frames = make_frames(128, 1);
  std::vector<double> rtt, hop_engines, hop_kernel, hop_back, step_reply, step_commit, step_push;
  const uint32_t warm = 100;
  for (uint32_t i = 0; i < o.samples + warm; ++i) {
    std::span<const uint8_t> one(frames.front());
    const auto t0 = Clock::now();
    const uint64_t sent_ns = dev::host_now_ns();
    if (!peer_tx->host_send(std::span(&one, 1))) break;
    const auto deadline = t0 + std::chrono::seconds(1);
    std::optional<HostFrame> reply;
    while (!reply && Clock::now() < deadline) {
      auto got = peer_rx->host_receive(1);
      if (got && !got->empty()) reply = std::move(got->front());
    }
    if (!reply) break;
    const uint64_t back_ns = dev::host_now_ns();
    if (i < warm) continue;
    rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    // Packet i is RX descriptor i: one packet per round trip since the start.
    // The kernel's stamps are on the GPU's clock, whose offset from the
    // host's is unknown: only differences on one clock are used, and the
    // two hops that cross clocks (send to seen, pushed to the TX engine's
    // send) are summed, which cancels the offset.
    auto stamp_of = [&](EchoStamp which) {
      return static_cast<int64_t>(
          dev::load_acquire(const_cast<uint64_t*>(&stamp[kStampsPerPacket * (i % nstamps) + which])));
    };
    const int64_t seen = stamp_of(kSeen), replied = stamp_of(kReplied), committed = stamp_of(kCommitted),
                  pushed = stamp_of(kPushed);
    const auto tx_sent = static_cast<int64_t>(reply->timestamp_ns);  // the TX engine's send time, carried by loop:
    hop_engines.push_back(static_cast<double>((seen - static_cast<int64_t>(sent_ns)) + (tx_sent - pushed)) / 1e3);
    hop_kernel.push_back(static_cast<double>(pushed - seen) / 1e3);
    step_reply.push_back(static_cast<double>(replied - seen) / 1e3);
    step_commit.push_back(static_cast<double>(committed - replied) / 1e3);
    step_push.push_back(static_cast<double>(pushed - committed) / 1e3);
    hop_back.push_back(static_cast<double>(static_cast<int64_t>(back_ns) - tx_sent) / 1e3);
  }
  const Status s = k->stop();
  const Percentiles p = percentiles(rtt);
  r.packets = p.n;
  r.result = fmt("p50 %.1f", p.p50) + fmt(" / p99 %.1f", p.p99) + fmt(" / p99.9 %.1f us", p.p999);
  if (!hop_kernel.empty())
    r.result += "; p50 of the hops: send to the kernel and doorbell to TX send" +
                fmt(" %.1f, kernel", percentiles(hop_engines).p50) + fmt(" %.1f", percentiles(hop_kernel).p50) +
                fmt(" (reply made %.1f,", percentiles(step_reply).p50) +
                fmt(" TX reserve and commit %.1f,", percentiles(step_commit).p50) +
                fmt(" doorbell %.1f)", percentiles(step_push).p50) +
                fmt(", TX send to the peer's receive %.1f us", percentiles(hop_back).p50);
  r.ok = s && p.n == o.samples;
  r.ratio = p.p50;  // divided by the doorbell floor by the caller
  return r;
}

}  // namespace

std::vector<Row> echo_rows(Gpu& gpu, const Options& o, const Floors& f, std::vector<Row>& table) {
  std::vector<Row> rows;
  if (!o.runs("echo")) return rows;
  for (bool busy : {false, true})
    for (RingMem m : {RingMem::Host, RingMem::Gpu}) {
      Row e = echo_latency(gpu, o, m, busy);
      e.bound = fmt("doorbell p50 %.2f us (x floor)", f.doorbell_us);
      e.ratio = bench::ratio(e.ratio, f.doorbell_us);
      rows.push_back(e);
      table.push_back(e);
    }
  return rows;
}

}  // namespace gnio_bench
