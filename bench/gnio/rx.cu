// SPDX-License-Identifier: Apache-2.0
// gnio's RX rows: the NIC engine fed by the prebuilt source (mem:) and by
// the generator (synthetic:), by frame size, ring memory and queue count,
// into the receive kernel of the ceiling; and their anatomy, where the
// kernel only receives and releases.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>

#include "sections.hpp"
#include "../bench_kernels.hpp"
#include "../common/table.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;
using bench::fmt;

namespace gnio_bench {
namespace {

struct RxCase {
  uint32_t size;
  RingMem mem;
  uint32_t queues;
  bool prebuilt;
  bench::Touch touch = bench::Touch::Bytes;  // Nothing: an anatomy row (receive and release only)
};

Row gnio_rx(Gpu& gpu, const Options& o, const RxCase& c) {
  const std::string source = c.prebuilt ? "mem" : "synthetic";
  const std::string mem_text = mem_name(c.mem);
  Row r{c.touch == bench::Touch::Bytes ? "gnio " + source + ": mem=" + mem_text
                                       : "kernel anatomy: gnio " + source + ":, mem=" + mem_text + ", reads nothing",
        c.size, c.queues};
  r.ok = false;
  const std::string spec = c.prebuilt ? "mem:count=0,frames=" + std::to_string(o.frames) + ",flows=1024,size=" +
                                            std::to_string(c.size) + ",ring=" + std::to_string(o.ring) +
                                            ",queues=" + std::to_string(c.queues)
                                      : generator_spec(c.size, 0, c.queues);
  auto dev = EthDevice::open(spec);
  if (!dev) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), dev.status().to_string().c_str());
    return r;
  }
  std::vector<EthRxq> qs;
  std::vector<GpuRxq> hs;
  dev::RxQueueSet set;
  const uint32_t stride = std::clamp(std::bit_ceil(c.size), 64u, 2048u);
  for (uint32_t id = 0; id < c.queues && id < dev::RxQueueSet::kMax; ++id) {
    auto q = dev->create_rxq(static_cast<uint16_t>(id));
    if (!q) return r;
    for (Status s : {q->set_num_strides(o.strides), q->set_stride_size(stride), q->set_burst_size(bench::kBurst),
                     q->set_ring_mem(c.mem), q->set_gpu(gpu), q->start()})
      if (!s) {
        std::fprintf(stderr, "%s: %s\n", spec.c_str(), s.to_string().c_str());
        return r;
      }
    auto h = GpuRxq::create(gpu, *q);
    if (!h) return r;
    set.rxq[set.count++] = h->handle();
    qs.push_back(std::move(*q));
    hs.push_back(std::move(*h));
  }
  auto totals = gpu.alloc(sizeof(bench::TouchTotals), MemKind::GpuCpu);
  if (!totals) return r;
  auto k = PersistentKernel::launch(
      gpu, launch_config(set.count * (gpu.emulated() ? 1u : o.blocks_per_queue), gpu.emulated() ? 1u : o.block, "bench-rx"),
      bench::TouchKernel{set, static_cast<bench::TouchTotals*>(totals->device_ptr()), o.burst, c.touch});
  if (!k) return not_launched(r, k.status());
  // Where each engine thread's time went in the window: a thread busy all
  // of it bounds the row; one mostly idle leaves the bound to the kernel.
  // A publication's cost says whether publishing bounds it.
  auto engine_ns = [&] {
    std::array<uint64_t, 4> t{};  // busy, idle, publishing, publications
    for (const EthRxq& q : qs) {
      const RxqStats st = q.stats();
      t[0] += st.busy_ns;
      t[1] += st.idle_ns;
      t[2] += st.publish_ns;
      t[3] += st.bursts;
    }
    return t;
  };
  std::array<uint64_t, 4> before{};
  const bool got = measure(*k, o.window_s, r, [&] { before = engine_ns(); });
  const std::array<uint64_t, 4> after = engine_ns();
  const double busy = static_cast<double>(after[0] - before[0]), idle = static_cast<double>(after[1] - before[1]);
  const double pubs = static_cast<double>(after[3] - before[3]);
  if (busy + idle > 0)
    r.result = fmt("engine busy %.0f %%", 100 * busy / (busy + idle)) +
               fmt(" (publishing %.0f %% of it", busy > 0 ? 100 * static_cast<double>(after[2] - before[2]) / busy : 0) +
               (pubs > 0 ? fmt(", %.1f us a publication", static_cast<double>(after[2] - before[2]) / pubs / 1e3)
                         : std::string()) +
               ")";
  const Status s = k->stop();
  uint64_t missed = 0, errors = 0;
  for (const EthRxq& q : qs) {
    missed += q.stats().rx_missed;
    errors += q.stats().errors;
  }
  const auto* t = static_cast<const bench::TouchTotals*>(totals->host_ptr());
  r.result += burst_anatomy(*t);
  r.ok = got && s && missed == 0 && errors == 0 && t->bad_release == 0;
  for (GpuRxq& h : hs) h.destroy();
  for (EthRxq& q : qs) q.destroy();
  return r;
}

}  // namespace

std::vector<Row> gnio_rx_rows(Gpu& gpu, const Options& o, const std::vector<Row>& ceilings, std::vector<Row>& table) {
  std::vector<Row> rows;
  if (!o.runs("gnio")) return rows;
  for (uint32_t size : o.sizes)
    for (RingMem m : {RingMem::Host, RingMem::Gpu})
      for (bool prebuilt : {true, false})
        for (uint32_t nq : o.queue_counts) {
          Row g = gnio_rx(gpu, o, {size, m, nq, prebuilt});
          bound_by_ceiling(g, ceiling_of(ceilings, size, m));
          rows.push_back(g);
          table.push_back(g);
        }
  return rows;
}

// If these stop adding up with more queues, the bound is the
// receive/release chain or the engines, not reading packets.
void gnio_anatomy_rows(Gpu& gpu, const Options& o, const std::vector<Row>& ceilings, std::vector<Row>& table) {
  if (!o.runs("anatomy")) return;
  for (RingMem m : {RingMem::Host, RingMem::Gpu})
    for (uint32_t nq : o.queue_counts) {
      Row a = gnio_rx(gpu, o, {64, m, nq, true, bench::Touch::Nothing});
      bound_by_ceiling(a, ceiling_of(ceilings, 64, m));
      table.push_back(a);
    }
}

}  // namespace gnio_bench
