// gnio_bench: RX throughput and echo round-trip latency, one table each.
//
// RX: the same capture is replayed into each variant and every packet is
// checksummed on the device. The baseline is the pattern the persistent
// kernel replaces: the host receives a burst, copies it to the GPU and
// launches a kernel per burst. Rows report packets/s, Gbit/s and the ratio
// to the baseline measured in the same run.
// Echo: one packet at a time through an in-process wire and back: the round
// trip of host -> NIC engine -> kernel -> TX engine -> host (p50/p99).
#include <CLI/CLI.hpp>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../examples/common/example.hpp"
#include "../examples/common/kernels.hpp"
#include "gnio/gpu_queue.hpp"

using namespace gnio;
using Clock = std::chrono::steady_clock;

namespace {

struct Row {
  std::string variant;
  uint64_t packets = 0, bytes = 0;
  double seconds = 0;
  double engine_us_per_burst = 0;  // NIC engine time publishing one burst
  double copies_per_burst = 0;
  bool ok = false;
  double mpps() const { return seconds > 0 ? packets / seconds / 1e6 : 0; }
  double gbps() const { return seconds > 0 ? bytes * 8.0 / seconds / 1e9 : 0; }
};

std::string machine(const Gpu& gpu) {
  utsname u{};
  uname(&u);
  std::string cpu = "unknown cpu";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return std::string(u.nodename) + ", " + u.machine + ", " + cpu + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
         " cpus; device: " + gpu.info().name + " (" + gpu.bus_id() + ")";
}

// Receives and releases, reading descriptors only: what the NIC engine and
// the ring deliver when the kernel does no per-byte work.
template <Scope S>
struct DescriptorsOnlyKernel {
  examples::RxQueueSet queues;
  examples::ReceiveTotals* totals;
  uint32_t burst;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    const dev::Rxq& rxq = queues.for_this_block();
    uint64_t packets = 0, bytes = 0;
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, examples::kPollNs);
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        ++packets;
        bytes += b[i].size();
      }
      rxq.release<S>(b);
    }
    dev::fetch_add_relaxed(&totals->packets, packets);
    dev::fetch_add_relaxed(&totals->bytes, bytes);
  }
};

enum class Work { Checksum, DescriptorsOnly };

struct RxVariant {
  RingMem mem;
  Scope scope;
  Work work = Work::Checksum;
  uint32_t queues = 1;  // RX queues of the port, one kernel block each
};

// One persistent kernel receives every packet of `spec` from `v.queues`
// queues (one NIC-engine thread each); the clock runs until all are drained.
Row persistent_rx(Gpu& gpu, const std::string& spec, const RxVariant& v, uint32_t block) {
  Row r;
  r.variant = std::string("persistent mem=") + (v.mem == RingMem::Gpu ? "gpu" : "host") + " scope=" +
              (v.scope == Scope::Thread ? "thread" : v.scope == Scope::Warp ? "warp" : "block") +
              (v.work == Work::DescriptorsOnly ? ", descriptors only" : "") +
              (v.queues > 1 ? ", " + std::to_string(v.queues) + " queues" : "");
  auto dev = EthDevice::open(spec);
  if (!dev) return r;
  std::vector<EthRxq> qs;
  std::vector<GpuRxq> hs;
  examples::RxQueueSet set;
  for (uint32_t id = 0; id < v.queues && id < examples::RxQueueSet::kMax; ++id) {
    auto q = dev->create_rxq(static_cast<uint16_t>(id));
    if (!q) return r;
    for (Status s : {q->set_num_strides(16384), q->set_stride_size(2048), q->set_burst_size(256),
                     q->set_ring_mem(v.mem), q->set_gpu(gpu), q->start()})
      if (!s) {
        std::fprintf(stderr, "%s\n", s.to_string().c_str());
        return r;
      }
    auto h = GpuRxq::create(gpu, *q);
    if (!h) return r;
    set.rxq[set.count++] = h->handle();
    qs.push_back(std::move(*q));
    hs.push_back(std::move(*h));
  }
  auto totals = gpu.alloc(sizeof(examples::ReceiveTotals), MemKind::GpuCpu);
  if (!totals) return r;
  auto* t_dev = static_cast<examples::ReceiveTotals*>(totals->device_ptr());
  const auto start = Clock::now();
  const LaunchConfig cfg{set.count, gpu.emulated() ? 1u : block, "bench-rx"};
  auto k = examples::with_scope(v.scope, [&]<Scope S>() {
    return v.work == Work::Checksum
               ? PersistentKernel::launch(gpu, cfg, examples::ReceiveKernel<S>{set, t_dev, 256})
               : PersistentKernel::launch(gpu, cfg, DescriptorsOnlyKernel<S>{set, t_dev, 256});
  });
  if (!k) return r;
  auto drained = [&] { return std::all_of(qs.begin(), qs.end(), [](const EthRxq& q) { return q.at_end(); }); };
  while (!drained()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  k->stop();
  auto t = *static_cast<const examples::ReceiveTotals*>(totals->host_ptr());
  r.packets = t.packets;
  r.bytes = t.bytes;
  RxqStats st;
  for (const EthRxq& q : qs) {
    const RxqStats one = q.stats();
    st.rx_missed += one.rx_missed;
    st.packets += one.packets;
    st.bursts += one.bursts;
    st.publish_ns += one.publish_ns;
    st.copies += one.copies;
  }
  r.ok = st.rx_missed == 0 && t.packets == st.packets;
  if (st.bursts) {
    r.engine_us_per_burst = st.publish_ns / 1e3 / st.bursts;
    r.copies_per_burst = static_cast<double>(st.copies) / st.bursts;
  }
  for (GpuRxq& h : hs) h.destroy();
  for (EthRxq& q : qs) q.destroy();
  return r;
}

#if defined(__CUDACC__)
__global__ void checksum_burst(const uint8_t* data, const uint32_t* offsets, const uint32_t* lens, uint32_t n,
                               examples::ReceiveTotals* totals) {
  uint64_t sum = 0, bytes = 0;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    sum += dev::fnv1a64(data + offsets[i], lens[i]);
    bytes += lens[i];
  }
  atomicAdd(reinterpret_cast<unsigned long long*>(&totals->checksum), static_cast<unsigned long long>(sum));
  atomicAdd(reinterpret_cast<unsigned long long*>(&totals->bytes), static_cast<unsigned long long>(bytes));
}

// The anti-pattern: host receive, host-to-device copy and a launch per burst.
Row launch_per_burst(Gpu& gpu, const std::string& spec, uint32_t burst) {
  Row r;
  r.variant = "baseline: host rx + copy + launch per burst";
  auto dev = EthDevice::open(spec);
  auto q = dev->create_rxq(0);
  if (!q || !q->set_burst_size(burst) || !q->start()) return r;
  auto host = gpu.alloc(burst * 2048 + burst * 8, MemKind::CpuGpu);
  auto devbuf = gpu.alloc(burst * 2048 + burst * 8, MemKind::Gpu);
  auto totals = gpu.alloc(sizeof(examples::ReceiveTotals), MemKind::Gpu);
  if (!host || !devbuf || !totals) return r;
  auto* h = static_cast<uint8_t*>(host->host_ptr());
  auto* d = static_cast<uint8_t*>(devbuf->device_ptr());
  auto* offsets = reinterpret_cast<uint32_t*>(h + burst * 2048);
  auto* lens = offsets + burst;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const auto start = Clock::now();
  while (!q->at_end()) {
    auto frames = q->host_receive(burst);
    if (!frames || frames->empty()) continue;
    uint32_t off = 0, n = 0;
    for (auto& f : *frames) {
      std::memcpy(h + off, f.data.data(), f.data.size());
      offsets[n] = off;
      lens[n++] = static_cast<uint32_t>(f.data.size());
      off += static_cast<uint32_t>(f.data.size());
      r.bytes += f.data.size();
    }
    r.packets += n;
    cudaMemcpyAsync(d, h, off, cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(d + burst * 2048, offsets, burst * 8, cudaMemcpyHostToDevice, stream);
    checksum_burst<<<1, 128, 0, stream>>>(d, reinterpret_cast<uint32_t*>(d + burst * 2048),
                                          reinterpret_cast<uint32_t*>(d + burst * 2048) + burst, n,
                                          static_cast<examples::ReceiveTotals*>(totals->device_ptr()));
    cudaStreamSynchronize(stream);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.ok = cudaGetLastError() == cudaSuccess;
  cudaStreamDestroy(stream);
  return r;
}
#endif

struct Latency {
  std::string variant;
  double p50_us = 0, p99_us = 0;
  size_t samples = 0;
};

Latency echo_latency(Gpu& gpu, RingMem mem, uint32_t samples) {
  Latency l;
  l.variant = std::string("echo round trip mem=") + (mem == RingMem::Gpu ? "gpu" : "host");
  const std::string wire = "loop:bench-" + std::to_string(getpid()) + (mem == RingMem::Gpu ? "g" : "h");
  auto a = EthDevice::open(wire);
  auto b = EthDevice::open(wire);
  if (!a || !b) return l;
  auto rxq = a->create_rxq(0);
  auto txq = a->create_txq(0);
  for (Status s : {rxq->set_num_strides(1024), rxq->set_burst_size(1), rxq->set_ring_mem(mem), rxq->set_gpu(gpu),
                   rxq->start(), txq->set_depth(256), txq->set_gpu(gpu), txq->start()})
    if (!s) return l;
  auto hrx = GpuRxq::create(gpu, *rxq);
  auto htx = GpuTxq::create(gpu, *txq);
  auto k = PersistentKernel::launch(gpu, {1, gpu.emulated() ? 1u : 32u, "bench-echo"},
                                    examples::EchoKernel<Scope::Warp>{hrx->handle(), htx->handle(), 1});
  auto peer_tx = b->create_txq(0);
  auto peer_rx = b->create_rxq(0);
  if (!k || !peer_tx->start() || !peer_rx->start()) return l;
  std::vector<uint8_t> frame(128, 0);
  frame[12] = 0x08;  // an IPv4 ethertype with an empty header: echoed as is
  std::vector<double> rtt;
  for (uint32_t i = 0; i < samples + 100; ++i) {
    std::span<const uint8_t> one(frame);
    const auto t0 = Clock::now();
    if (!peer_tx->host_send(std::span(&one, 1))) break;
    for (;;) {
      auto got = peer_rx->host_receive(1);
      if (got && !got->empty()) break;
    }
    if (i >= 100) rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  k->stop();
  std::sort(rtt.begin(), rtt.end());
  if (!rtt.empty()) {
    l.samples = rtt.size();
    l.p50_us = rtt[rtt.size() / 2];
    l.p99_us = rtt[rtt.size() * 99 / 100];
  }
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  std::string gpu_id = "auto";
  uint32_t loops = 20, samples = 2000, block = 256;
  std::string capture = "/tmp/gnio-bench.pcap";
  CLI::App app{"gnio_bench: RX throughput (persistent kernel vs launch per burst) and echo latency"};
  app.add_option("--gpu", gpu_id, "PCIe bus id, auto (falls back to cpu) or cpu")->capture_default_str();
  app.add_option("--loops", loops, "times the 65536-packet capture is replayed per variant")->capture_default_str();
  app.add_option("--samples", samples, "echo round trips measured per variant")->capture_default_str();
  app.add_option("--block", block, "threads per block of the persistent kernel")->capture_default_str();
  app.add_option("--capture", capture, "where to write the generated capture")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto gpu = examples::open_gpu(gpu_id, false);
  if (!gpu) return examples::fail(gpu.status());

  // One capture, written once, replayed into every variant.
  {
    auto src = EthDevice::open("synthetic:count=65536,size=96-1500,proto=mix,ipv6=mix,seed=11");
    auto out = EthDevice::open("pcap-out:" + capture);
    if (!src || !out) return examples::fail(!src ? src.status() : out.status());
    auto rq = src->create_rxq(0);
    auto tq = out->create_txq(0);
    if (!rq->start() || !tq->start()) return 2;
    while (!rq->at_end()) {
      auto f = rq->host_receive(256);
      if (!f) return examples::fail(f.status());
      std::vector<std::span<const uint8_t>> spans;
      for (auto& x : *f) spans.emplace_back(x.data);
      if (!tq->host_send(spans)) return 2;
    }
    tq->stop();
  }
  const std::string spec = "pcap:" + capture + ",loop=" + std::to_string(loops);

  std::vector<Row> rows;
#if defined(__CUDACC__)
  if (!gpu->emulated()) rows.push_back(launch_per_burst(*gpu, spec, 256));
#endif
  for (RingMem mem : {RingMem::Gpu, RingMem::Host}) {
    for (Scope s : {Scope::Block, Scope::Warp, Scope::Thread}) rows.push_back(persistent_rx(*gpu, spec, {mem, s}, block));
    rows.push_back(persistent_rx(*gpu, spec, {mem, Scope::Block, Work::DescriptorsOnly}, block));
  }
  // Scaling with queues: the same number of packets from a generator spread
  // over Q queues by RSS, one engine thread per queue, one block per queue.
  std::vector<Row> scaling;
  const std::string generated = "synthetic:count=" + std::to_string(65536ull * loops) +
                                ",size=96-1500,proto=mix,ipv6=mix,seed=11,queues=";
  for (uint32_t nq : {1u, 2u, 4u, 8u}) {
    scaling.push_back(
        persistent_rx(*gpu, generated + std::to_string(nq), {RingMem::Host, Scope::Block, Work::Checksum, nq}, block));
    scaling.back().variant = "synthetic:...,queues=" + std::to_string(nq);
  }

  std::printf("\nmachine: %s\n", machine(*gpu).c_str());
  std::printf("RX: %u x 65536 packets, 96-1500 B, checksummed on the device unless 'descriptors only'\n\n", loops);
  std::printf("| variant | packets | Mpps | Gbit/s | vs baseline | publish us/burst | copies/burst | ok |\n"
              "|---|---:|---:|---:|---:|---:|---:|---|\n");
  const double base = rows.empty() ? 0 : rows.front().mpps();
  for (const Row& r : rows)
    std::printf("| %s | %llu | %.3f | %.2f | %.2fx | %.1f | %.1f | %s |\n", r.variant.c_str(),
                (unsigned long long)r.packets, r.mpps(), r.gbps(), base > 0 ? r.mpps() / base : 0,
                r.engine_us_per_burst, r.copies_per_burst, r.ok ? "yes" : "NO");

  std::printf("\nRX scaling with queues: %llu generated packets, mem=host, block scope, checksummed\n\n",
              65536ull * loops);
  std::printf("| variant | packets | Mpps | Gbit/s | vs 1 queue | ok |\n|---|---:|---:|---:|---:|---|\n");
  for (const Row& r : scaling)
    std::printf("| %s | %llu | %.3f | %.2f | %.2fx | %s |\n", r.variant.c_str(), (unsigned long long)r.packets,
                r.mpps(), r.gbps(), scaling.front().mpps() > 0 ? r.mpps() / scaling.front().mpps() : 0,
                r.ok ? "yes" : "NO");

  std::vector<Latency> lat;
  for (RingMem mem : {RingMem::Host, RingMem::Gpu}) lat.push_back(echo_latency(*gpu, mem, samples));
  std::printf("\n| variant | samples | p50 us | p99 us | vs mem=host |\n|---|---:|---:|---:|---:|\n");
  for (const Latency& l : lat)
    std::printf("| %s | %zu | %.1f | %.1f | %.2fx |\n", l.variant.c_str(), l.samples, l.p50_us, l.p99_us,
                lat.front().p50_us > 0 ? l.p50_us / lat.front().p50_us : 0);
  return 0;
}
