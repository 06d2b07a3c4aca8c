// SPDX-License-Identifier: Apache-2.0
// app_bench's kernel rows: receive-only, parse only and the application's
// packet-processing kernel, each on its own device and queues, timed from
// the first packet finished to the last.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <unistd.h>

#include "compute_stage.hpp"
#include "sections.hpp"
#include "../common/clock.hpp"
#include "../common/table.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/filter.hpp"
#include "gnio/gpu_queue.hpp"
#include "packet_processing/records.hpp"

using namespace gnio;
namespace da = gnio::dev::app;
using bench::Clock;
using bench::fmt;
using bench::secs_since;

namespace app_bench {
namespace {

constexpr uint64_t kPollNs = 200000;  // a stop request is seen within 200 us
constexpr uint32_t kRecordItems = 16384;  // gnio run's record ring
// --quick's ring: its 13 k records of the mix go round it many times, so the
// hand-off's wait for the host and the reuse of items are exercised.
constexpr uint32_t kQuickRecordItems = 256;

using Queues = dev::RxQueueSet;
static_assert(Queues::kMax >= kMaxQueues, "app_bench serves as many queues as gnio run");

// The baseline: receive a burst at block scope, release it; each thread
// counts the packets of the burst it would have handled. With rounds > 0
// (the compute-heavy rows) each thread also runs compute_stage() on its
// packets and adds their digests, so the sum is the host's whatever thread
// or block handled a packet.
struct ReceiveOnlyKernel {
  Queues q;
  uint32_t burst;
  uint32_t rounds = 0;
  uint64_t* digest = nullptr;  // GpuCpu memory, with rounds > 0

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Block;
    const dev::Rxq& rxq = q.for_this_block();
    uint64_t sum = 0;
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        const dev::Packet p = b[i];
        if (rounds > 0) sum += compute_stage(p.data(), p.size(), rounds);
        ++mine;
        my_bytes += p.size();
      }
      rxq.release<S>(b);
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
    if (sum) dev::fetch_add_relaxed(digest, sum);
  }
};

// The baseline plus the application's parser and its protocol and reason
// counters: what the packet-processing kernel does before its flow table,
// records and replies.
struct ParseOnlyKernel {
  Queues q;
  uint32_t burst;
  uint64_t* counters;  // kProtoCount + kReasonCount, GpuCpu memory

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Block;
    const dev::Rxq& rxq = q.for_this_block();
    uint64_t proto[da::kProtoCount] = {}, reason[da::kReasonCount] = {};
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t first = 0; first < b.count(); first += dev::scope_size<S>()) {
        const uint32_t i = first + dev::scope_rank<S>();
        const dev::Packet p = b[i < b.count() ? i : 0];
        const da::Analysis an = da::analyze_warp(p.data(), i < b.count() ? p.size() : 0u);
        if (i >= b.count()) continue;
        for (uint32_t k = 0; k < da::kProtoCount; ++k) proto[k] += (an.protocols >> k) & 1u;
        reason[an.reason] += 1;
        ++mine;
        my_bytes += p.size();
      }
      rxq.release<S>(b);
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
    for (uint32_t k = 0; k < da::kProtoCount; ++k)
      if (proto[k]) dev::fetch_add_relaxed(&counters[k], proto[k]);
    for (uint32_t k = 0; k < da::kReasonCount; ++k)
      if (reason[k]) dev::fetch_add_relaxed(&counters[da::kProtoCount + k], reason[k]);
  }
};

LaunchConfig launch_config(const Gpu& gpu, const Options& o, uint32_t grid, const char* name) {
  LaunchConfig c;
  c.grid = o.blocks > grid ? o.blocks : grid;
  c.block = gpu.emulated() ? 1u : o.block;
  c.name = name;
  return c;
}

std::optional<DeviceMemory> zeroed(Gpu& gpu, size_t bytes, std::string& error, MemKind kind = MemKind::GpuCpu) {
  auto d = gpu.alloc(bytes, kind);
  if (!d) {
    error = "allocating " + std::to_string(bytes) + " bytes of " + std::string(mem_kind_name(kind)) +
            " memory: " + d.status().to_string();
    return std::nullopt;
  }
  std::memset(d->host_ptr(), 0, d->size());
  return std::move(*d);
}

}  // namespace

Measured run_device(Gpu& gpu, const Options& o, const Traffic& t, Variant v) {
  Measured m;
  const std::string spec = mem_spec(o, t);
  auto dev = EthDevice::open(spec);
  if (!dev) {
    m.error = spec + ": " + dev.status().to_string();
    return m;
  }
  std::vector<EthRxq> qs;
  std::vector<GpuRxq> hs;
  Queues set;
  for (uint32_t id = 0; id < o.queues; ++id) {
    auto q = dev->create_rxq(static_cast<uint16_t>(id));
    if (!q) {
      m.error = "RX queue " + std::to_string(id) + ": " + q.status().to_string();
      return m;
    }
    const uint32_t engine_burst = std::min(o.burst, dev->caps().max_burst);  // the kernel's may be larger
    for (Status s : {q->set_num_strides(o.strides), q->set_stride_size(2048), q->set_burst_size(engine_burst),
                     q->set_ring_mem(o.mem == "gpu" ? RingMem::Gpu : RingMem::Host), q->set_gpu(gpu), q->start()})
      if (!s) {
        m.error = "configuring RX queue " + std::to_string(id) + ": " + s.to_string();
        return m;
      }
    auto h = GpuRxq::create(gpu, *q);
    if (!h) {
      m.error = "GPU handle of RX queue " + std::to_string(id) + ": " + h.status().to_string();
      return m;
    }
    set.rxq[set.count++] = h->handle();
    qs.push_back(std::move(*q));
    hs.push_back(std::move(*h));
  }

  // The application's state, allocated as gnio run packet-processing does.
  std::optional<GpuSemaphore> records;
  std::optional<DeviceMemory> counters, flows, claim, consumed, totals, digest;
  app::PpArgs args;
  std::optional<FilterProgram> filter;
  // Capture: the --capture path of gnio run, to a file in the temporary folder.
  const std::string capture_file =
      (std::filesystem::temp_directory_path() / ("app-bench-capture-" + std::to_string(getpid()) + ".pcapng")).string();
  std::optional<EthDevice> capture_dev;
  std::optional<EthTxq> capture_q;
  std::optional<GpuTxq> capture_h;
  if (v == Variant::FilterShort || v == Variant::FilterLong) {
    auto f = FilterProgram::compile(gpu, v == Variant::FilterShort ? kShortFilter : kLongFilter);
    if (!f) {
      m.error = "compiling the filter: " + f.status().to_string();
      return m;
    }
    filter = std::move(*f);
    if (!(totals = zeroed(gpu, sizeof(dev::ReceiveTotals), m.error))) return m;
  } else if (v == Variant::ComputeHeavy) {
    if (!(digest = zeroed(gpu, sizeof(uint64_t), m.error))) return m;
  } else if (v == Variant::ParseOnly) {
    if (!(counters = zeroed(gpu, (uint32_t{da::kProtoCount} + uint32_t{da::kReasonCount}) * sizeof(uint64_t), m.error)))
      return m;
  } else if (v == Variant::PacketProcessing || v == Variant::Capture) {
    auto sem = GpuSemaphore::create(gpu, o.quick ? kQuickRecordItems : kRecordItems, sizeof(da::Record));
    if (!sem) {
      m.error = "creating the record semaphore: " + sem.status().to_string();
      return m;
    }
    records = std::move(*sem);
    if (!(counters = zeroed(gpu, app::counter::kCount * sizeof(uint64_t), m.error))) return m;
    if (!(flows = zeroed(gpu, size_t{kFlowSlots} * sizeof(da::FlowEntry), m.error))) return m;
    if (!(claim = zeroed(gpu, sizeof(uint64_t), m.error))) return m;
    if (!(consumed = zeroed(gpu, sizeof(uint64_t), m.error, MemKind::CpuGpu))) return m;
    for (uint32_t i = 0; i < set.count; ++i) args.rxq[i] = set.rxq[i];
    args.queues = set.count;
    args.counters = static_cast<uint64_t*>(counters->device_ptr());
    args.flows = {static_cast<da::FlowEntry*>(flows->device_ptr()), kFlowSlots - 1};
    args.records = records->handle();
    args.record_claim = static_cast<uint64_t*>(claim->device_ptr());
    args.record_consumed = static_cast<const uint64_t*>(consumed->device_ptr());
    args.burst = o.burst;
    if (v == Variant::Capture) {
      auto d = EthDevice::open("pcapng-out:" + capture_file + ",rotate=256M,files=2,rxqs=" + std::to_string(set.count));
      if (!d) {
        m.error = "opening the capture: " + d.status().to_string();
        return m;
      }
      capture_dev = std::move(*d);
      auto q = capture_dev->create_txq(0);
      if (!q) {
        m.error = "capture queue: " + q.status().to_string();
        return m;
      }
      for (Status s : {q->set_depth(4096), q->set_gpu(gpu), q->start()})
        if (!s) {
          m.error = "configuring the capture queue: " + s.to_string();
          return m;
        }
      capture_q = std::move(*q);
      auto h = GpuTxq::create(gpu, *capture_q);
      if (!h) {
        m.error = "GPU handle of the capture queue: " + h.status().to_string();
        return m;
      }
      capture_h = std::move(*h);
      args.capture = dev::Capture(capture_h->handle());
      for (uint32_t i = 0; i < set.count; ++i) args.rxq_id[i] = static_cast<uint16_t>(i);
    }
  }
  auto launch = [&]() -> Result<PersistentKernel> {
    switch (v) {
      case Variant::ReceiveOnly:
        return PersistentKernel::launch(gpu, launch_config(gpu, o, set.count, "app-bench-receive-only"),
                                        ReceiveOnlyKernel{set, o.burst});
      case Variant::ParseOnly:
        return PersistentKernel::launch(gpu, launch_config(gpu, o, set.count, "app-bench-parse-only"),
                                        ParseOnlyKernel{set, o.burst, static_cast<uint64_t*>(counters->device_ptr())});
      case Variant::FilterShort:
      case Variant::FilterLong:
        return PersistentKernel::launch(
            gpu, launch_config(gpu, o, set.count, "app-bench-filter"),
            dev::ReceiveKernel<Scope::Block>{set, static_cast<dev::ReceiveTotals*>(totals->device_ptr()), o.burst,
                                             filter->handle()});
      case Variant::ComputeHeavy:
        return PersistentKernel::launch(gpu, launch_config(gpu, o, set.count, "app-bench-compute-heavy"),
                                        ReceiveOnlyKernel{set, o.burst, o.compute_rounds,
                                                          static_cast<uint64_t*>(digest->device_ptr())});
      case Variant::PacketProcessing:
      case Variant::Capture:
        break;
    }
    return app::launch_packet_processing(gpu, launch_config(gpu, o, set.count, "app-bench-packet-processing"), args);
  };
  auto k = launch();
  if (!k) {
    m.error = "launching the kernel: " + k.status().to_string();
    return m;
  }

  std::atomic<bool> stop_drain{false};
  std::thread drainer;
  // The records consumed as `gnio run` does, as fast as they come (the
  // kernel waits while a whole ring is unconsumed); each copied as there.
  app::RecordConsumer drain{records ? &*records : nullptr,
                            consumed ? static_cast<uint64_t*>(consumed->host_ptr()) : nullptr};
  da::Record copy{};
  const auto take = [&](const da::Record& in_ring) { da::store_record(in_ring, &copy); };
  if (records)
    drainer = std::thread([&] {
      while (!stop_drain.load(std::memory_order_relaxed))
        if (drain.drain(take) == 0) std::this_thread::yield();
    });

  // Timed from the first look that finds packets finished to the one that
  // finds them all: the kernel's steady state over the offer, not its launch.
  const auto pause = std::chrono::microseconds(gpu.emulated() ? 500 : 20);
  const auto launched = Clock::now();
  KernelTotals first = k->totals();
  while (first.packets == 0 && secs_since(launched) < 10) {
    std::this_thread::sleep_for(pause);
    first = k->totals();
  }
  const auto t0 = Clock::now();
  KernelTotals last = first;
  while (first.packets > 0 && last.packets < t.packets && secs_since(t0) < o.row_limit_s) {
    std::this_thread::sleep_for(pause);
    last = k->totals();
  }
  m.seconds = secs_since(t0);
  m.timed_packets = last.packets - first.packets;
  m.timed_bytes = last.bytes - first.bytes;
  if (m.timed_packets == 0) m.seconds = 0;
  const Status stopped = k->stop();
  stop_drain = true;
  if (drainer.joinable()) drainer.join();
  if (records) drain.drain(take);
  Status capture_stopped;
  if (capture_q) {
    capture_h->destroy();
    capture_stopped = capture_q->stop(60000);
    m.write_seconds = secs_since(t0);
    const TxqStats s = capture_q->stats();
    m.written = s.packets;
    m.written_bytes = s.bytes;
    m.capture_dropped = s.errors;
  }
  const KernelTotals end = k->totals();
  m.packets = end.packets;
  RxqStats sum;
  for (const EthRxq& q : qs) sum += q.stats();
  m.offered = sum.offered;
  m.delivered = sum.packets;
  for (uint64_t d : sum.dropped) m.dropped += d;
  if (counters) {
    const auto* c = static_cast<const uint64_t*>(counters->host_ptr());
    m.counters.assign(c, c + counters->size() / sizeof(uint64_t));
    if (v == Variant::Capture) m.capture_dropped += m.counters[app::counter::kCapture + 2];
  }
  if (digest) m.digest = *static_cast<const uint64_t*>(digest->host_ptr());
  if (totals) {
    const auto* rt = static_cast<const dev::ReceiveTotals*>(totals->host_ptr());
    m.matched = rt->packets;
    m.filtered = rt->filtered;
  }
  if (!stopped) m.error = "stopping the kernel: " + stopped.to_string();
  else if (!capture_stopped) m.error = "stopping the capture: " + capture_stopped.to_string();
  else if (capture_q && m.written + m.capture_dropped != m.packets)
    m.error = "the capture wrote " + std::to_string(m.written) + " and dropped " + std::to_string(m.capture_dropped) +
              " of " + std::to_string(m.packets) + " packets";
  else if (totals && m.matched + m.filtered != m.packets)
    m.error = "the filter matched " + std::to_string(m.matched) + " and rejected " + std::to_string(m.filtered) +
              " of " + std::to_string(m.packets) + " packets";
  else if (first.packets == 0) m.error = "no packet finished within 10 s of the launch";
  else if (last.packets < t.packets)
    m.error = "the kernel finished " + std::to_string(last.packets) + " of " + std::to_string(t.packets) +
              " packets in " + fmt("%.0f s", o.row_limit_s) + "; raise --row-limit or lower --packets";
  else if (end.errors != 0) m.error = std::to_string(end.errors) + " kernel errors";
  else if (records && drain.next != m.counters[app::counter::kRecords])
    m.error = "the host consumed " + std::to_string(drain.next) + " records of the " +
              std::to_string(m.counters[app::counter::kRecords]) + " the kernel handed over";
  if (records) records->destroy();
  if (capture_q) {
    capture_q->destroy();
    capture_dev.reset();
    std::filesystem::remove(capture_file);
  }
  for (GpuRxq& h : hs) h.destroy();
  for (EthRxq& q : qs) q.destroy();
  return m;
}

}  // namespace app_bench
