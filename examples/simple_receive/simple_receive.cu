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

int run(const Options& o) {
  auto setup = examples::setup(o.scope, o.mem, o.gpu, o.require_gpu);
  if (const int* rc = std::get_if<int>(&setup)) return *rc;
  // Named references, not a structured binding: the kernel lambdas capture
  // them, which C++20 allows but clang before 16 does not.
  auto& chosen = std::get<examples::Setup>(setup);
  const Scope scope = chosen.scope;
  const RingMem mem = chosen.mem;
  Gpu& gpu = chosen.gpu;
  auto dev = EthDevice::open(o.nic);
  if (!dev) return examples::fail(dev.status());
  const uint32_t nq = o.queues ? o.queues : dev->caps().max_rx_queues;
  if (nq > dev::RxQueueSet::kMax)
    return examples::fail({Errc::InvalidValue, Layer::App,
                           "--queues " + std::to_string(nq) + " is more than this example serves (" +
                               std::to_string(dev::RxQueueSet::kMax) + "); pass --queues N with a smaller N"});
  // Every queue gets its ring, its NIC-engine thread and its GPU handle;
  // block b of the kernel serves queue b % nq.
  std::vector<EthRxq> rxqs;
  std::vector<GpuRxq> handles;
  dev::RxQueueSet set;
  for (uint32_t id = 0; id < nq; ++id) {
    auto rxq = dev->create_rxq(static_cast<uint16_t>(id));
    if (!rxq) return examples::fail(rxq.status());
    for (Status s : {rxq->set_num_strides(o.strides), rxq->set_stride_size(o.stride), rxq->set_burst_size(o.burst),
                     rxq->set_ring_mem(mem), rxq->set_gpu(gpu), rxq->start()})
      if (!s) return examples::fail(s);
    auto grxq = GpuRxq::create(gpu, *rxq);
    if (!grxq) return examples::fail(grxq.status());
    set.rxq[id] = grxq->handle();
    rxqs.push_back(std::move(*rxq));
    handles.push_back(std::move(*grxq));
  }
  set.count = nq;
  // Compiled by libpcap for the Ethernet frames every queue delivers.
  FilterProgram filter;
  if (!o.filter.empty()) {
    auto compiled = FilterProgram::compile(gpu, o.filter);
    if (!compiled) return examples::fail(compiled.status());
    filter = std::move(*compiled);
  }
  auto totals_mem = gpu.alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
  if (!totals_mem) return examples::fail(totals_mem.status());
  auto* totals_dev = static_cast<dev::ReceiveTotals*>(totals_mem->device_ptr());

  LaunchConfig cfg;
  cfg.grid = std::max(o.grid, nq);
  cfg.block = o.block;
  cfg.name = "simple_receive";
  auto kernel = with_scope(scope, [&]<Scope S>() {
    return PersistentKernel::launch(gpu, cfg, dev::ReceiveKernel<S>{set, totals_dev, o.burst, filter.handle()});
  });
  if (!kernel) return examples::fail(kernel.status());

  auto all_at_end = [&] {
    return std::all_of(rxqs.begin(), rxqs.end(), [](const EthRxq& q) { return q.at_end(); });
  };
  Status waited = examples::wait_until(all_at_end, std::chrono::seconds(o.timeout_s), "receiving every packet", *kernel);
  Status stopped = kernel->stop();
  if (!waited) return examples::fail(waited);
  if (!stopped) return examples::fail(stopped);
  RxqStats st;
  for (const EthRxq& q : rxqs) {
    if (Status s = q.source_status(); !s) return examples::fail(s);
    st += q.stats();
  }

  const auto t = *static_cast<const dev::ReceiveTotals*>(totals_mem->host_ptr());
  std::printf("gpu=%s mem=%s scope=%s queues=%u packets=%llu bytes=%llu checksum=%016llx rx_missed=%llu bursts=%llu\n",
              gpu.bus_id().c_str(), o.mem.c_str(), o.scope.c_str(), nq, (unsigned long long)t.packets,
              (unsigned long long)t.bytes, (unsigned long long)t.checksum, (unsigned long long)st.rx_missed,
              (unsigned long long)st.bursts);
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
    auto ref = host_receive_totals(o.nic, static_cast<uint16_t>(nq), filter.host_handle());
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
  for (GpuRxq& h : handles) h.destroy();
  for (EthRxq& q : rxqs) q.destroy();
  return rc;
}

}  // namespace simple_receive
