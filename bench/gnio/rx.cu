// SPDX-License-Identifier: Apache-2.0
// gnio's RX rows: the NIC engine fed by the prebuilt source (mem:) and by
// the generator (synthetic:), by frame size, ring memory and queue count,
// into the receive kernel of the ceiling; and their anatomy, where the
// kernel only receives and releases.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <optional>

#include "sections.hpp"
#include "../bench_kernels.hpp"
#include "../common/table.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;
using bench::fmt;

namespace gnio_bench {
namespace {

// One device's part of a run: its queues, their handles and its kernel.
struct DevicePart {
  Gpu* gpu = nullptr;
  std::vector<EthRxq*> queues;
  dev::RxQueueSet set;
  std::optional<DeviceMemory> totals;
  std::optional<PersistentKernel> kernel;
};

std::string engine_text(const std::array<uint64_t, 4>& before, const std::array<uint64_t, 4>& after) {
  const double busy = static_cast<double>(after[0] - before[0]), idle = static_cast<double>(after[1] - before[1]);
  const double pubs = static_cast<double>(after[3] - before[3]);
  if (busy + idle <= 0) return {};
  return fmt("engine busy %.0f %%", 100 * busy / (busy + idle)) +
         fmt(" (publishing %.0f %% of it", busy > 0 ? 100 * static_cast<double>(after[2] - before[2]) / busy : 0) +
         (pubs > 0 ? fmt(", %.1f us a publication", static_cast<double>(after[2] - before[2]) / pubs / 1e3)
                   : std::string()) +
         ")";
}

}  // namespace

std::vector<uint32_t> spread_queues(uint32_t queues, size_t devices) {
  std::vector<uint32_t> per(devices);
  for (size_t d = 0; d < devices; ++d)
    per[d] = static_cast<uint32_t>((d + 1) * queues / devices - d * queues / devices);
  return per;
}

RxRun gnio_rx_on(const std::vector<Gpu*>& gpus, const std::vector<uint32_t>& queues_of, const Options& o,
                 const RxCase& c) {
  const std::string source = c.prebuilt ? "mem" : "synthetic";
  const std::string mem_text = mem_name(c.mem);
  uint32_t nq = 0;
  for (uint32_t n : queues_of) nq += n;
  RxRun run;
  const std::string name = c.reads_nothing
                               ? "kernel anatomy: gnio " + source + ":, mem=" + mem_text + ", reads nothing"
                               : "gnio " + source + ": mem=" + mem_text;
  run.total = Row{name, c.size, nq};
  Row& r = run.total;
  r.ok = false;
  const std::string spec = c.prebuilt ? "mem:count=0,frames=" + std::to_string(o.frames) + ",flows=1024,size=" +
                                            std::to_string(c.size) + ",ring=" + std::to_string(o.ring) +
                                            ",queues=" + std::to_string(nq)
                                      : generator_spec(c.size, 0, nq);
  auto dev = EthDevice::open(spec);
  if (!dev) {
    std::fprintf(stderr, "%s: %s\n", spec.c_str(), dev.status().to_string().c_str());
    return run;
  }
  // Declared before the parts, so that kernels and handles go first.
  std::vector<EthRxq> qs;
  std::vector<GpuRxq> hs;
  qs.reserve(nq);
  hs.reserve(nq);
  std::vector<DevicePart> parts(gpus.size());
  const uint32_t stride = std::clamp(std::bit_ceil(c.size), 64u, 2048u);
  uint32_t id = 0;
  for (size_t d = 0; d < gpus.size(); ++d) {
    DevicePart& part = parts[d];
    part.gpu = gpus[d];
    for (uint32_t i = 0; i < queues_of[d] && part.set.count < dev::RxQueueSet::kMax; ++i, ++id) {
      auto q = dev->create_rxq(static_cast<uint16_t>(id));
      if (!q) return run;
      for (Status s : {q->set_num_strides(o.strides), q->set_stride_size(stride), q->set_burst_size(bench::kBurst),
                       q->set_ring_mem(c.mem), q->set_gpu(*part.gpu), q->start()})
        if (!s) {
          std::fprintf(stderr, "%s: %s\n", spec.c_str(), s.to_string().c_str());
          return run;
        }
      qs.push_back(std::move(*q));
      auto h = GpuRxq::create(*part.gpu, qs.back());
      if (!h) return run;
      part.set.rxq[part.set.count++] = h->handle();
      hs.push_back(std::move(*h));
      part.queues.push_back(&qs.back());
    }
  }
  for (DevicePart& part : parts) {
    if (part.set.count == 0) continue;
    auto totals = part.gpu->alloc(sizeof(bench::TouchTotals), MemKind::GpuCpu);
    if (!totals) return run;
    part.totals.emplace(std::move(*totals));
    const bool emulated = part.gpu->emulated();
    const uint32_t grid = part.set.count * (emulated ? 1u : o.blocks_per_queue);
    auto k = PersistentKernel::launch(
        *part.gpu, launch_config(grid, emulated ? 1u : o.block, "bench-rx"),
        bench::TouchKernel{part.set, static_cast<bench::TouchTotals*>(part.totals->device_ptr()), o.burst,
                           c.reads_nothing ? bench::Touch::Nothing : bench::Touch::Bytes});
    if (!k) return RxRun{not_launched(r, k.status()), {}};
    part.kernel.emplace(std::move(*k));
  }
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
  std::vector<const PersistentKernel*> kernels;
  for (DevicePart& part : parts)
    if (part.kernel) {
      kernels.push_back(&*part.kernel);
      Row per{r.name + ", device " + part.gpu->bus_id(), c.size, part.set.count};
      run.per_device.push_back(per);
    }
  std::vector<Row*> per_rows;
  for (Row& p : run.per_device) per_rows.push_back(&p);
  std::array<uint64_t, 4> before{};
  const bool got = measure_kernels(kernels, o.window_s, per_rows, [&] { before = engine_ns(); });
  r.result = engine_text(before, engine_ns());
  r.seconds = run.per_device.empty() ? 0 : run.per_device.front().seconds;
  bool stopped = true;
  for (DevicePart& part : parts)
    if (part.kernel && !part.kernel->stop()) stopped = false;
  uint64_t missed = 0, errors = 0;
  for (const EthRxq& q : qs) {
    missed += q.stats().rx_missed;
    errors += q.stats().errors;
  }
  bool released_in_order = true;
  size_t i = 0;
  for (DevicePart& part : parts) {
    if (!part.kernel) continue;
    const auto* t = static_cast<const bench::TouchTotals*>(part.totals->host_ptr());
    Row& per = run.per_device[i++];
    per.result = burst_anatomy(*t);
    if (per.result.rfind("; ", 0) == 0) per.result.erase(0, 2);
    per.ok = per.packets > 0 && t->bad_release == 0;
    released_in_order = released_in_order && t->bad_release == 0;
    r.packets += per.packets;
    r.bytes += per.bytes;
    if (kernels.size() == 1) r.result += burst_anatomy(*t);
  }
  r.ok = got && stopped && missed == 0 && errors == 0 && released_in_order;
  for (Row& per : run.per_device) {
    per.ok = per.ok && r.ok;
    per.bound = fmt("total %.2f Mpps", r.mpps());
    per.ratio = bench::ratio(per.mpps(), r.mpps());
  }
  for (DevicePart& part : parts) part.kernel.reset();
  for (GpuRxq& h : hs) h.destroy();
  for (EthRxq& q : qs) q.destroy();
  return run;
}

// With several devices the queues are spread over them (spread_queues()),
// one kernel each; each device's row follows the total's.
std::vector<Row> gnio_rx_rows(const std::vector<Gpu*>& gpus, const Options& o, const std::vector<Row>& ceilings,
                              std::vector<Row>& table) {
  std::vector<Row> rows;
  if (!o.runs("gnio")) return rows;
  for (uint32_t size : o.sizes)
    for (RingMem m : {RingMem::Host, RingMem::Gpu})
      for (bool prebuilt : {true, false})
        for (uint32_t nq : o.queue_counts) {
          RxRun run = gnio_rx_on(gpus, spread_queues(nq, gpus.size()), o, {size, m, nq, prebuilt});
          bound_by_ceiling(run.total, ceiling_of(ceilings, size, m));
          rows.push_back(run.total);
          table.push_back(run.total);
          if (gpus.size() > 1) table.insert(table.end(), run.per_device.begin(), run.per_device.end());
        }
  return rows;
}


// If these stop adding up with more queues, the bound is the
// receive/release chain or the engines, not reading packets.
void gnio_anatomy_rows(Gpu& gpu, const Options& o, const std::vector<Row>& ceilings, std::vector<Row>& table) {
  if (!o.runs("anatomy")) return;
  for (RingMem m : {RingMem::Host, RingMem::Gpu})
    for (uint32_t nq : o.queue_counts) {
      Row a = gnio_rx_on({&gpu}, {nq}, o, {64, m, nq, true, true}).total;
      bound_by_ceiling(a, ceiling_of(ceilings, 64, m));
      table.push_back(a);
    }
}

}  // namespace gnio_bench
