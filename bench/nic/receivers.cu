// SPDX-License-Identifier: Apache-2.0
// nic_bench's own receivers on gnx0: the baseline AF_PACKET socket that
// only counts, and a gnio RX queue (AF_XDP or a DPDK PMD) into the
// persistent kernel of gnio_bench (bench_kernels.hpp), which reads every
// byte, on the GPU or the emulated device.
#include <sched.h>

#include "bench.hpp"
#include "../bench_kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"

using namespace gnio;

namespace nic_bench {

Row Bench::baseline(uint32_t size) {
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

Row Bench::gnio_row(const std::string& receiver, const std::string& spec, uint32_t size) {
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
  const dev::RxQueueSet set = dev::RxQueueSet::of(h->handle());
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

}  // namespace nic_bench
