// SPDX-License-Identifier: Apache-2.0
// TX rows: a persistent kernel sending prebuilt payloads from device memory
// and from pinned host memory to pcap-out:/dev/null, counted where the TX
// engine hands them to the backend.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

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

Row tx(Gpu& gpu, const Options& o, uint32_t size, MemKind payload) {
  Row r{std::string("gnio TX to pcap-out:/dev/null, payload in ") +
            (payload == MemKind::Gpu ? "device memory" : "pinned host memory"),
        size, 1};
  r.ok = false;
  auto dev = EthDevice::open("pcap-out:/dev/null");
  if (!dev) return r;
  auto q = dev->create_txq(0);
  const uint32_t count = o.quick ? 1024 : 8192;
  auto pool = gpu.create_buf_arr(payload, count, buffer_size(size));
  if (!q || !pool) return r;
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
  for (Status s : {q->set_depth(4096), q->set_max_packet_size(pool->elem_size()), q->set_gpu(gpu),
                   q->register_buffer(*pool), q->start()})
    if (!s) {
      std::fprintf(stderr, "tx: %s\n", s.to_string().c_str());
      return r;
    }
  auto h = GpuTxq::create(gpu, *q);
  if (!h) return r;
  auto k = PersistentKernel::launch(gpu, launch_config(1, gpu.emulated() ? 1u : o.block, "bench-tx"),
                                    bench::TxKernel{h->handle(), pool->handle(), size, bench::kBurst});
  if (!k) return not_launched(r, k.status());
  // Counted where the packets arrive: handed to the backend by the TX engine.
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (q->stats().packets == 0 && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s / 4));
  const uint64_t a = q->stats().packets;
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
  r.packets = q->stats().packets - a;
  r.seconds = secs_since(t0);
  r.bytes = r.packets * size;
  const Status s = k->stop();
  r.ok = s && r.packets > 0 && q->stats().errors == 0 && k->totals().errors == 0;
  h->destroy();
  q->stop();
  q->destroy();
  return r;
}

}  // namespace

void tx_rows(Gpu& gpu, const Options& o, const Floors& f, std::vector<Row>& table) {
  if (!o.runs("tx")) return;
  for (uint32_t size : {64u, 1500u})
    for (MemKind k : {MemKind::Gpu, MemKind::CpuGpu}) {
      Row t = tx(gpu, o, size, k);
      t.bound = bench::fmt("D2H floor %.0f Gbit/s", f.d2h_gbit());
      t.ratio = bench::ratio(t.gbps(), f.d2h_gbit());
      table.push_back(t);
    }
}

}  // namespace gnio_bench
