// SPDX-License-Identifier: Apache-2.0
// simple_receive: a persistent kernel counts and checksums every packet of a
// capture (or any RX spec) in GPU memory, or with --filter those a tcpdump
// expression matches; --verify recomputes the same on the host and fails
// on any difference.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "../common/example.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/filter.hpp"
#include "gnio/gpu_queue.hpp"
#include "options.hpp"

using namespace gnio;

namespace simple_receive {

namespace {

// What one GPU of --gpu does: the queues it serves (a contiguous run), their
// GPU handles, the filter in its memory, its totals and its kernel.
struct OnGpu {
  Gpu gpu;
  std::vector<uint32_t> queues;
  std::vector<GpuRxq> handles;
  FilterProgram filter;
  DeviceMemory totals;
  PersistentKernel kernel;
};

}  // namespace

int run(const Options& o) {
  // --gpu may name several devices ("cpu:0,cpu:1", "auto,cpu:1", "all"):
  // each gets its own context and kernel.
  const bool several = o.gpu.find(',') != std::string::npos || o.gpu == "all";
  std::vector<OnGpu> gpus;
  Scope scope = Scope::Block;
  RingMem mem = RingMem::Gpu;
  if (!several) {
    auto setup = examples::setup(o.scope, o.mem, o.gpu, o.require_gpu);
    if (const int* rc = std::get_if<int>(&setup)) return *rc;
    auto& chosen = std::get<examples::Setup>(setup);
    scope = chosen.scope;
    mem = chosen.mem;
    gpus.push_back({std::move(chosen.gpu), {}, {}, {}, {}, {}});
  } else {
    const auto s = examples::parse_scope(o.scope);
    const auto m = examples::parse_mem(o.mem);
    if (!s || !m) {
      std::fprintf(stderr, "error: --scope must be thread|warp|block (got %s) and --mem gpu|host (got %s)\n",
                   o.scope.c_str(), o.mem.c_str());
      return 2;
    }
    scope = *s;
    mem = *m;
    auto list = Gpu::open_list(o.gpu);
    if (!list && o.require_gpu && list.status().code() == Errc::NotFound) {
      std::printf("SKIP: %s\n", list.status().message().c_str());
      return examples::kExitSkip;
    }
    if (!list) return examples::fail(list.status());
    for (Gpu& g : *list) gpus.push_back({std::move(g), {}, {}, {}, {}, {}});
  }
  auto dev = EthDevice::open(o.nic);
  if (!dev) return examples::fail(dev.status());
  const uint32_t nq = o.queues ? o.queues : dev->caps().max_rx_queues;
  if (nq > dev::RxQueueSet::kMax || nq < gpus.size())
    return examples::fail({Errc::InvalidValue, Layer::App,
                           "--queues " + std::to_string(nq) + " is outside what this example serves (" +
                               std::to_string(gpus.size()) + ".." + std::to_string(dev::RxQueueSet::kMax) +
                               ": at least one per GPU); pass --queues N in that range"});
  // Every queue gets its ring (in the memory of its GPU), its NIC-engine
  // thread and its GPU handle; GPU g serves a contiguous run of queues and
  // block b of its kernel serves the b % n-th of them.
  std::vector<EthRxq> rxqs;
  // Destroyed before `rxqs`: an early return stops the kernels and destroys
  // the GPU handles before the queues they expose, and the queues before
  // their GPUs.
  struct HandlesFirst {
    std::vector<OnGpu>& gpus;
    ~HandlesFirst() {
      for (OnGpu& on : gpus) {
        on.kernel = PersistentKernel();
        on.handles.clear();
      }
    }
  } handles_first{gpus};
  for (uint32_t id = 0; id < nq; ++id) {
    OnGpu& on = gpus[size_t{id} * gpus.size() / nq];
    auto rxq = dev->create_rxq(static_cast<uint16_t>(id));
    if (!rxq) return examples::fail(rxq.status());
    for (Status s : {rxq->set_num_strides(o.strides), rxq->set_stride_size(o.stride), rxq->set_burst_size(o.burst),
                     rxq->set_ring_mem(mem), rxq->set_gpu(on.gpu), rxq->start()})
      if (!s) return examples::fail(s);
    auto grxq = GpuRxq::create(on.gpu, *rxq);
    if (!grxq) return examples::fail(grxq.status());
    on.queues.push_back(id);
    on.handles.push_back(std::move(*grxq));
    rxqs.push_back(std::move(*rxq));
  }
  for (OnGpu& on : gpus) {
    dev::RxQueueSet set;
    for (const GpuRxq& h : on.handles) set.rxq[set.count++] = h.handle();
    // Compiled by libpcap for the Ethernet frames every queue delivers.
    if (!o.filter.empty()) {
      auto compiled = FilterProgram::compile(on.gpu, o.filter);
      if (!compiled) return examples::fail(compiled.status());
      on.filter = std::move(*compiled);
    }
    auto totals = on.gpu.alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
    if (!totals) return examples::fail(totals.status());
    on.totals = std::move(*totals);
    auto* totals_dev = static_cast<dev::ReceiveTotals*>(on.totals.device_ptr());
    LaunchConfig cfg;
    cfg.grid = std::max(o.grid, set.count);
    cfg.block = o.block;
    cfg.name = "simple_receive";
    const dev::FilterRef filter = on.filter.handle();
    auto kernel = with_scope(scope, [&]<Scope S>() {
      return PersistentKernel::launch(on.gpu, cfg, dev::ReceiveKernel<S>{set, totals_dev, o.burst, filter});
    });
    if (!kernel) return examples::fail(kernel.status());
    on.kernel = std::move(*kernel);
  }

  auto all_at_end = [&] {
    return std::all_of(rxqs.begin(), rxqs.end(), [](const EthRxq& q) { return q.at_end(); });
  };
  Status waited = examples::wait_until(all_at_end, std::chrono::seconds(o.timeout_s), "receiving every packet",
                                       gpus.front().kernel);
  Status stopped;
  for (OnGpu& on : gpus)
    if (Status s = on.kernel.stop(); !s && stopped) stopped = s;
  if (!waited) return examples::fail(waited);
  if (!stopped) return examples::fail(stopped);
  RxqStats st;
  for (const EthRxq& q : rxqs) {
    if (Status s = q.source_status(); !s) return examples::fail(s);
    st += q.stats();
  }

  dev::ReceiveTotals t{};
  for (const OnGpu& on : gpus) {
    const auto g = *static_cast<const dev::ReceiveTotals*>(on.totals.host_ptr());
    if (gpus.size() > 1)
      std::printf("gpu=%s queues=%zu packets=%llu bytes=%llu checksum=%016llx\n", on.gpu.bus_id().c_str(),
                  on.queues.size(), (unsigned long long)g.packets, (unsigned long long)g.bytes,
                  (unsigned long long)g.checksum);
    t.packets += g.packets;
    t.bytes += g.bytes;
    t.checksum += g.checksum;
    t.bad_release += g.bad_release;
    t.filtered += g.filtered;
  }
  std::printf("gpu=%s mem=%s scope=%s queues=%u packets=%llu bytes=%llu checksum=%016llx rx_missed=%llu bursts=%llu\n",
              gpus.size() > 1 ? o.gpu.c_str() : gpus.front().gpu.bus_id().c_str(), o.mem.c_str(), o.scope.c_str(), nq,
              (unsigned long long)t.packets, (unsigned long long)t.bytes, (unsigned long long)t.checksum,
              (unsigned long long)st.rx_missed, (unsigned long long)st.bursts);
  std::printf("rx: %s\n", examples::rx_stats_line(st).c_str());
  if (!o.filter.empty())
    std::printf("filter '%s': matched=%llu filtered=%llu\n", o.filter.c_str(), (unsigned long long)t.packets,
                (unsigned long long)t.filtered);
  int rc = 0;
  if (t.bad_release) {
    std::fprintf(stderr, "FAIL: %llu bursts were released out of order\n", (unsigned long long)t.bad_release);
    rc = 1;
  }
  if (o.verify) {
    auto ref = host_receive_totals(o.nic, static_cast<uint16_t>(nq), gpus.front().filter.host_handle());
    if (!ref) return examples::fail(ref.status());
    const bool same = ref->packets == t.packets && ref->bytes == t.bytes && ref->checksum == t.checksum &&
                      ref->filtered == t.filtered;
    std::printf("host reference: packets=%llu bytes=%llu checksum=%016llx filtered=%llu -> %s\n",
                (unsigned long long)ref->packets, (unsigned long long)ref->bytes, (unsigned long long)ref->checksum,
                (unsigned long long)ref->filtered, same ? "MATCH" : "MISMATCH");
    if (!same) {
      const std::string why = examples::explain_difference(st, t.packets + t.filtered, ref->packets + ref->filtered);
      std::printf("difference: %s\n", why.c_str());
      rc = 1;
    }
  }
  for (OnGpu& on : gpus)
    for (GpuRxq& h : on.handles) h.destroy();
  for (EthRxq& q : rxqs) q.destroy();
  return rc;
}

}  // namespace simple_receive
