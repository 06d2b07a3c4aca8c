// SPDX-License-Identifier: Apache-2.0
// TX rows: a persistent kernel sending prebuilt payloads from device memory
// and from pinned host memory to pcap-out:/dev/null and to the null: sink
// over 1, 2 and 4 queues, counted where the TX engines hand them to the
// backend.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "sections.hpp"
#include "../bench_kernels.hpp"
#include "../common/clock.hpp"
#include "../common/table.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;
using bench::Clock;
using bench::secs_since;

namespace gnio_bench {
namespace {

// The packets the queues handed to the backend so far.
uint64_t sent(const std::vector<EthTxq>& qs) {
  uint64_t n = 0;
  for (const EthTxq& q : qs) n += q.stats().packets;
  return n;
}

// One persistent kernel block per TX queue of `spec`, all sending from one
// pool, filling each descriptor as `fill` says.
Row tx(Gpu& gpu, const Options& o, uint32_t size, MemKind payload, bench::TxKernel::Fill fill, const std::string& spec) {
  using Fill = bench::TxKernel::Fill;
  auto dev = EthDevice::open(spec);
  const uint32_t queues = dev ? dev->caps().max_tx_queues : 1;
  Row r{"gnio TX to " + spec + ", payload in " + (payload == MemKind::Gpu ? "device memory" : "pinned host memory") +
            (fill == Fill::StagedByThread ? ", staged by the kernel (a thread a payload)"
             : fill == Fill::StagedByLanes ? ", staged by the kernel (lanes a payload)"
                                           : ""),
        size, queues};
  r.ok = false;
  const uint32_t count = o.quick ? 1024 : 8192;
  auto pool = gpu.create_buf_arr(payload, count, buffer_size(size));
  if (!dev || !pool || queues > bench::TxKernel::kMaxQueues) return r;
  const auto frames = make_frames(size, o.frames);
  std::vector<uint8_t> image(size_t{count} * pool->elem_size());
  for (uint32_t i = 0; i < count; ++i)
    std::memcpy(image.data() + size_t{i} * pool->elem_size(), frames[i % frames.size()].data(), size);
  if (pool->memory().host_ptr()) {
    std::memcpy(pool->memory().host_ptr(), image.data(), image.size());
  } else {
#if defined(__CUDACC__)
    if (cudaMemcpy(pool->memory().device_ptr(), image.data(), image.size(), cudaMemcpyHostToDevice) != cudaSuccess)
      return r;
#endif
  }
  std::vector<EthTxq> qs;
  std::vector<GpuTxq> hs;
  bench::TxKernel kernel{{}, queues, pool->handle(), size, bench::kBurst, fill};
  for (uint32_t i = 0; i < queues; ++i) {
    auto q = dev->create_txq(static_cast<uint16_t>(i));
    if (!q) {
      std::fprintf(stderr, "tx: %s\n", q.status().to_string().c_str());
      return r;
    }
    for (Status s : {q->set_depth(4096), q->set_max_packet_size(pool->elem_size()), q->set_gpu(gpu),
                     q->register_buffer(*pool), q->start()})
      if (!s) {
        std::fprintf(stderr, "tx: %s\n", s.to_string().c_str());
        return r;
      }
    qs.push_back(std::move(*q));
    auto h = GpuTxq::create(gpu, qs.back());
    if (!h) return r;
    kernel.txq[i] = h->handle();
    hs.push_back(std::move(*h));
  }
  auto k = PersistentKernel::launch(gpu, launch_config(queues, gpu.emulated() ? 1u : o.block, "bench-tx"), kernel);
  if (!k) return not_launched(r, k.status());
  // Counted where the packets arrive: handed to the backend by the TX engines.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (sent(qs) == 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s / 4));
  const uint64_t a = sent(qs);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
  r.packets = sent(qs) - a;
  r.seconds = secs_since(t0);
  r.bytes = r.packets * size;
  const Status s = k->stop();
  uint64_t errors = 0;
  for (const EthTxq& q : qs) errors += q.stats().errors;
  r.ok = s && r.packets > 0 && errors == 0 && k->totals().errors == 0;
  for (GpuTxq& h : hs) h.destroy();
  for (EthTxq& q : qs) {
    q.stop();
    q.destroy();
  }
  return r;
}

}  // namespace

void tx_rows(Gpu& gpu, const Options& o, const Floors& f, std::vector<Row>& table) {
  if (!o.runs("tx")) return;
  // pcap-out: a file writer on one queue; null: a sink that is never the
  // bound, over 1, 2 and 4 queues (an engine thread each).
  const char* const targets[] = {"pcap-out:/dev/null", "null:queues=1", "null:queues=2", "null:queues=4"};
  using Fill = bench::TxKernel::Fill;
  struct Payload {
    MemKind kind;
    Fill fill;
  };
  const Payload payloads[] = {{MemKind::Gpu, Fill::InPlace},
                              {MemKind::Gpu, Fill::StagedByThread},
                              {MemKind::Gpu, Fill::StagedByLanes},
                              {MemKind::CpuGpu, Fill::InPlace}};
  for (uint32_t size : {64u, 1500u})
    for (const char* target : targets)
      for (const Payload& p : payloads) {
        Row t = tx(gpu, o, size, p.kind, p.fill, target);
        t.bound = bench::fmt("D2H floor %.0f Gbit/s", f.d2h_gbit());
        t.ratio = bench::ratio(t.gbps(), f.d2h_gbit());
        table.push_back(t);
      }
}

}  // namespace gnio_bench
