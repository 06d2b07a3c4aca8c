// SPDX-License-Identifier: Apache-2.0
// app_bench: the reference application (the packet-processing kernel of
// `gnio run packet-processing`) against its two bounds, on the same traffic.
//
// For each traffic (64 B, 1500 B, the frames of data/captures/*.pcap), the
// prebuilt `mem:` source offers the same N frames through the same queues,
// ring memory, block and burst to:
//  - receive-only: a persistent kernel that receives and releases (the
//    upper bound: what the datapath delivers with no work per packet);
//  - parse only: the same loop plus the application's parser and protocol
//    counters (no flow table, no records), to see where the cost is;
//  - packet-processing: the application's kernel (pp_kernel.cu), with a host
//    thread consuming its records as `gnio run` does;
//  - one host core: the same parser and counting code compiled for the host,
//    over the same frames in memory (the other bound).
// The application meets its target when it keeps >= 70 % of receive-only.
// Every row must move exactly the N frames offered, and the host core's
// counters must equal the kernel's for the same frames. With --repeat R
// each kernel row runs R times (interleaved, so that drift hits every
// variant alike); the table shows the median run and a second table the
// spread.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app_bench_options.hpp"
#include "common/clock.hpp"
#include "common/machine.hpp"
#include "common/table.hpp"
#include "gnio/gpu_queue.hpp"
#include "gpu_choice.hpp"
#include "gnio/host_reference.hpp"
#include "packet_processing/pp_kernel.hpp"
#include "packet_processing/records.hpp"

using namespace gnio;
namespace da = gnio::dev::app;
using bench::Clock;
using bench::fmt;
using bench::secs_since;

namespace {

using app_bench::Options;

constexpr uint64_t kPollNs = 200000;  // a stop request is seen within 200 us
constexpr uint32_t kFlowSlots = 65536;  // gnio run's default --flow-slots
constexpr uint32_t kRecordItems = 16384;  // gnio run's record ring
// --quick's ring: its 13 k records of the mix go round it many times, so the
// hand-off's wait for the host and the reuse of items are exercised.
constexpr uint32_t kQuickRecordItems = 256;
constexpr double kTarget = 0.70;  // the application costs no more than 30 % of receive-only

// ---- kernels ------------------------------------------------------------------

struct Queues {
  static constexpr uint32_t kMax = app::PpArgs::kMaxQueues;
  dev::Rxq rxq[kMax];
  uint32_t count = 0;
};

// The baseline: receive a burst at block scope, release it; each thread
// counts the packets of the burst it would have handled.
struct ReceiveOnlyKernel {
  Queues q;
  uint32_t burst;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Block;
    const dev::Rxq& rxq = q.rxq[dev::block_index() % q.count];
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        ++mine;
        my_bytes += b[i].size();
      }
      rxq.release<S>(b);
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
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
    const dev::Rxq& rxq = q.rxq[dev::block_index() % q.count];
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

// ---- traffic -------------------------------------------------------------------

struct Traffic {
  std::string name;    // table label
  std::string frames;  // mem: spec without count/ring/queues
  uint64_t packets;
};

// A pcap (Ethernet link type) of every frame of the captures in `dir`, in
// file-name order, as the pcap driver reads them: mem: replays one file.
Result<std::string> merge_captures(const std::string& dir, std::string& listing) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".pcap") files.push_back(e.path());
  if (ec || files.empty())
    return Status(Errc::NotFound, Layer::App,
                  "no .pcap captures in " + dir + (ec ? " (" + ec.message() + ")" : "") +
                      "; give the folder of the project's captures with --captures DIR");
  std::sort(files.begin(), files.end());
  const std::string out = (std::filesystem::temp_directory_path() / ("gnio-app-bench-" + std::to_string(getpid()) + ".pcap")).string();
  std::ofstream f(out, std::ios::binary);
  auto put32 = [&](uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
  auto put16 = [&](uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
  put32(0xa1b2c3d4);
  put16(2);
  put16(4);
  put32(0);
  put32(0);
  put32(65535);
  put32(1);  // LINKTYPE_ETHERNET
  for (const auto& p : files) {
    uint64_t n = 0;
    GNIO_TRY(for_each_host_frame("pcap:" + p.string(), [&](const std::vector<uint8_t>& fr) {
      put32(static_cast<uint32_t>(n));
      put32(0);
      put32(static_cast<uint32_t>(fr.size()));
      put32(static_cast<uint32_t>(fr.size()));
      f.write(reinterpret_cast<const char*>(fr.data()), static_cast<std::streamsize>(fr.size()));
      ++n;
    }));
    listing += (listing.empty() ? "" : ", ") + p.filename().string() + " " + std::to_string(n);
  }
  if (!f.flush())
    return Status(Errc::IoError, Layer::App, "cannot write " + out + ": check free space in the temporary folder");
  return out;
}

std::string mem_spec(const Options& o, const Traffic& t) {
  return "mem:" + t.frames + ",count=" + std::to_string(t.packets) + ",ring=" + std::to_string(o.ring) +
         ",queues=" + std::to_string(o.queues);
}

// ---- device rows ----------------------------------------------------------------


enum class Variant { ReceiveOnly, ParseOnly, PacketProcessing };

struct Measured {
  uint64_t packets = 0;                       // the kernel finished in all
  uint64_t offered = 0, delivered = 0, dropped = 0;
  uint64_t timed_packets = 0, timed_bytes = 0;  // finished inside the timed window
  double seconds = 0;
  std::vector<uint64_t> counters;  // ParseOnly: proto + reason; PacketProcessing: app::counter::kCount
  std::string error;
  double mpps() const { return seconds > 0 ? timed_packets / seconds / 1e6 : 0; }
  double gbps() const { return seconds > 0 ? timed_bytes * 8.0 / seconds / 1e9 : 0; }
};

LaunchConfig launch_config(const Gpu& gpu, const Options& o, uint32_t grid, const char* name) {
  LaunchConfig c;
  c.grid = grid;
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

// One variant over one traffic: its own device and queues (the same
// settings for every variant), the kernel, the timed window, the counts.
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
    for (Status s : {q->set_num_strides(o.strides), q->set_stride_size(2048), q->set_burst_size(o.burst),
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
  std::optional<DeviceMemory> counters, flows, claim, consumed;
  app::PpArgs args;
  if (v == Variant::ParseOnly) {
    if (!(counters = zeroed(gpu, (uint32_t{da::kProtoCount} + uint32_t{da::kReasonCount}) * sizeof(uint64_t), m.error)))
      return m;
  } else if (v == Variant::PacketProcessing) {
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
  }
  auto launch = [&]() -> Result<PersistentKernel> {
    switch (v) {
      case Variant::ReceiveOnly:
        return PersistentKernel::launch(gpu, launch_config(gpu, o, set.count, "app-bench-receive-only"),
                                        ReceiveOnlyKernel{set, o.burst});
      case Variant::ParseOnly:
        return PersistentKernel::launch(gpu, launch_config(gpu, o, set.count, "app-bench-parse-only"),
                                        ParseOnlyKernel{set, o.burst, static_cast<uint64_t*>(counters->device_ptr())});
      case Variant::PacketProcessing:
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
  }
  if (!stopped) m.error = "stopping the kernel: " + stopped.to_string();
  else if (first.packets == 0) m.error = "no packet finished within 10 s of the launch";
  else if (last.packets < t.packets)
    m.error = "the kernel finished " + std::to_string(last.packets) + " of " + std::to_string(t.packets) +
              " packets in " + fmt("%.0f s", o.row_limit_s) + "; raise --row-limit or lower --packets";
  else if (end.errors != 0) m.error = std::to_string(end.errors) + " kernel errors";
  else if (records && drain.next != m.counters[app::counter::kRecords])
    m.error = "the host consumed " + std::to_string(drain.next) + " records of the " +
              std::to_string(m.counters[app::counter::kRecords]) + " the kernel handed over";
  if (records) records->destroy();
  for (GpuRxq& h : hs) h.destroy();
  for (EthRxq& q : qs) q.destroy();
  return m;
}

// ---- one host core ---------------------------------------------------------------

// The frames of one pass over the traffic, laid out one per 2048-byte
// buffer as a ring would hold them.
struct FrameImage {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> lens;
  static constexpr uint32_t kStride = 2048;
};

Result<FrameImage> frame_image(const Traffic& t) {
  FrameImage img;
  std::vector<std::vector<uint8_t>> frames;
  GNIO_TRY(for_each_host_frame("mem:" + t.frames, [&](const std::vector<uint8_t>& f) { frames.push_back(f); }));
  img.bytes.assign(frames.size() * FrameImage::kStride, 0);
  for (size_t i = 0; i < frames.size(); ++i) {
    const size_t n = std::min<size_t>(frames[i].size(), FrameImage::kStride);
    std::memcpy(img.bytes.data() + i * FrameImage::kStride, frames[i].data(), n);
    img.lens.push_back(static_cast<uint32_t>(n));
  }
  return img;
}

volatile uint64_t g_sink = 0;  // record fields read, so that no record is left unbuilt

// The packet-processing kernel's per-packet work (without replies) by one
// host thread, over packets 0..n-1 of the traffic (frame i % frames), the
// same stream the mem: source offers.
Measured run_host(const FrameImage& img, uint64_t n) {
  Measured m;
  std::vector<uint64_t> c(app::counter::kCount, 0);
  std::vector<da::FlowEntry> slots(kFlowSlots);
  std::memset(static_cast<void*>(slots.data()), 0, slots.size() * sizeof(da::FlowEntry));
  const da::FlowTable table{slots.data(), kFlowSlots - 1};
  da::Record r;
  uint64_t sink = 0;
  const size_t frames = img.lens.size();
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    const size_t f = i % frames;
    const uint8_t* p = img.bytes.data() + f * FrameImage::kStride;
    const uint32_t len = img.lens[f];
    const da::Analysis an = da::analyze(p, len);
    c[app::counter::kPackets] += 1;
    c[app::counter::kBytes] += len;
    for (uint32_t k = 0; k < da::kProtoCount; ++k) c[app::counter::kProto + k] += (an.protocols >> k) & 1u;
    if (an.has(da::kIpv4)) c[app::counter::kCsum + uint32_t{da::kCsumIpv4} * da::kCsumCount + an.csum_l3] += 1;
    if (an.csum_l4_layer < da::kCsumLayerCount) c[app::counter::kCsum + an.csum_l4_layer * da::kCsumCount + an.csum_l4] += 1;
    c[app::counter::kReason + an.reason] += 1;
    if (an.key.version != 0) {
      const bool tcp = an.has(da::kTcp) && an.pp.payload_offset > an.pp.l4_offset;
      const uint32_t tcp_flags = tcp ? p[an.pp.l4_offset + 13] : 0u;
      c[app::counter::kFlow + table.update(an.key, an.direction, len, i, tcp_flags)] += 1;
    }
    if (an.record != da::kRecordNone) {
      da::fill_record(p, an, r);
      sink += static_cast<uint8_t>(r.name[0]) + r.sport;
      c[app::counter::kRecords] += 1;
    }
  }
  m.seconds = secs_since(t0);
  g_sink = sink;
  m.packets = m.timed_packets = n;
  m.timed_bytes = c[app::counter::kBytes];
  m.offered = n;
  m.counters = std::move(c);
  return m;
}

// ---- the report -------------------------------------------------------------------

// Names of the packet-processing kernel's counters, by position: those the
// host core computes too; any other is named by its position.
std::vector<std::string> counter_names() {
  std::vector<std::string> n(app::counter::kCount);
  for (uint32_t i = 0; i < app::counter::kCount; ++i) n[i] = "counter " + std::to_string(i);
  n[app::counter::kPackets] = "packets";
  n[app::counter::kBytes] = "bytes";
  for (uint32_t k = 0; k < da::kProtoCount; ++k) n[app::counter::kProto + k] = std::string("proto.") + da::kProtoNames[k];
  for (uint32_t l = 0; l < da::kCsumLayerCount; ++l)
    for (uint32_t s = 0; s < da::kCsumCount; ++s)
      n[app::counter::kCsum + l * da::kCsumCount + s] =
          std::string("csum.") + da::kCsumLayerNames[l] + "." + da::kCsumNames[s];
  for (uint32_t k = 0; k < da::kReasonCount; ++k) n[app::counter::kReason + k] = std::string("reason.") + da::kReasonNames[k];
  n[app::counter::kRecords] = "records";
  n[app::counter::kRecordsDropped] = "records_not_handed";
  n[app::counter::kEchoRefused] = "echo_refused";
  n[app::counter::kFlowUpdates] = "flow.table_updates";
  n[app::counter::kRecordWaits] = "records_waited_for_host";
  const char* flow[] = {"hit", "new", "evicted", "untracked"};
  for (uint32_t k = 0; k < 4; ++k) n[app::counter::kFlow + k] = std::string("flow.") + flow[k];
  return n;
}

// Whether run_host() computes the kernel's counter at position `i` (it
// leaves out replies, which need a TX queue).
bool host_computes(uint32_t i) {
  using namespace app::counter;
  return i < kReply || i == kRecords || i == kRecordsDropped || (i >= kFlow && i < kFlow + 4);
}

// The parse-only kernel's counter for the packet-processing position `i`, if it has one.
std::optional<uint64_t> parse_only_counter(const Measured& m, uint32_t i) {
  if (m.counters.empty()) return std::nullopt;
  if (i >= app::counter::kProto && i < app::counter::kProto + da::kProtoCount) return m.counters[i - app::counter::kProto];
  if (i >= app::counter::kReason && i < app::counter::kReason + da::kReasonCount)
    return m.counters[da::kProtoCount + (i - app::counter::kReason)];
  return std::nullopt;
}

struct TrafficResult {
  Traffic traffic;
  Measured base, parse, pp, host;  // the kernel rows' median runs
  std::vector<Measured> base_runs, parse_runs, pp_runs;
};

double ratio(const Measured& m, const Measured& base) { return bench::ratio(m.mpps(), base.mpps()); }

// The run of median throughput (the lower of the two middle ones for an
// even count), or the first that failed: its error is the row's.
Measured median_run(const std::vector<Measured>& runs) {
  for (const Measured& m : runs)
    if (!m.error.empty()) return m;
  std::vector<const Measured*> by;
  for (const Measured& m : runs) by.push_back(&m);
  std::sort(by.begin(), by.end(), [](const Measured* x, const Measured* y) { return x->mpps() < y->mpps(); });
  return by.empty() ? Measured{} : *by[(by.size() - 1) / 2];
}

// The verdict on the target and, when it is missed, what the rows show:
// the parser's share, the flow table's and the records' work, all measured.
std::string verdict(const TrafficResult& r, const Options& o, bool emulated) {
  const double pp = ratio(r.pp, r.base), parse = ratio(r.parse, r.base);
  if (!r.pp.error.empty() || !r.base.error.empty()) return "NO: not measured (see the errors below)";
  if (pp >= kTarget) return "yes";
  const auto& c = r.pp.counters;
  uint64_t flow_packets = 0;
  for (uint32_t k = 0; k < 4; ++k) flow_packets += c[app::counter::kFlow + k];
  const uint64_t updates = c[app::counter::kFlowUpdates], records = c[app::counter::kRecords];
  std::string why = "NO: the parser alone keeps " + fmt("%.2f", parse);
  if (parse < kTarget && !emulated && o.burst < o.block)
    why += " (only " + std::to_string(o.burst) + " of " + std::to_string(o.block) +
           " threads of a block have a packet per burst)";
  if (flow_packets != 0)
    why += "; the flow table: " + std::to_string(flow_packets) + " packets in " + std::to_string(updates) +
           " updates (" + fmt("%.1f", updates ? static_cast<double>(flow_packets) / updates : 0.0) +
           " packets each, merged per burst) of " + std::to_string(c[app::counter::kFlow + da::kFlowNew]) + " flows";
  if (records != 0)
    why += "; the record hand-off: " + std::to_string(records) + " records, " +
           std::to_string(c[app::counter::kRecordWaits]) + " of them waited for the host to free ring room";
  return why + "; the whole application keeps " + fmt("%.2f", pp);
}

bool print_report(const Gpu& gpu, const Options& o, const std::vector<TrafficResult>& results, const std::string& legend) {
  bool ok = true;
  std::printf("\nmachine: %s\n", bench::machine(gpu).c_str());
  std::printf("setup: %u queue(s), ring mem=%s, %u strides of 2048 B, burst %u, %u threads per block%s, %u run(s) "
              "of each kernel row (the median shown); target: the packet-processing kernel keeps >= %.2f of "
              "receive-only\n",
              o.queues, o.mem.c_str(), o.strides, o.burst, gpu.emulated() ? 1u : o.block,
              o.quick ? " (--quick)" : "", o.repeat, kTarget);
  std::printf("traffic: %s\n\n", legend.c_str());
  bench::print_header({"traffic", "variant", "packets", "offered", "Mpps", "Gbit/s", "vs receive-only", "target met"},
                      "llrrrrrl");
  for (const TrafficResult& r : results) {
    const std::string name = r.traffic.name;
    auto row = [&](const char* variant, const Measured& m, const std::string& verdict_cell) {
      bench::print_row({name, variant, std::to_string(m.packets), std::to_string(m.offered), fmt("%.3f", m.mpps()),
                        fmt("%.2f", m.gbps()), fmt("%.3f", ratio(m, r.base)), verdict_cell});
    };
    row("receive-only (baseline)", r.base, "–");
    row("parse only (kernel)", r.parse, "–");
    row("packet-processing (kernel)", r.pp, verdict(r, o, gpu.emulated()));
    row("packet-processing (one host core)", r.host, "–");
  }
  // Each kernel row's runs: throughput and the ratio to the receive-only run
  // of the same round.
  std::printf("\n");
  bench::print_header(
      {"traffic", "variant", "runs", "Mpps min", "Mpps max", "vs receive-only min", "vs receive-only max"}, "llrrrrr");
  for (const TrafficResult& r : results)
    for (auto [variant, runs] : {std::pair{"parse only (kernel)", &r.parse_runs},
                                 std::pair{"packet-processing (kernel)", &r.pp_runs}}) {
      double lo = 0, hi = 0, rlo = 0, rhi = 0;
      for (size_t i = 0; i < runs->size(); ++i) {
        const double v = (*runs)[i].mpps(), q = i < r.base_runs.size() ? ratio((*runs)[i], r.base_runs[i]) : 0;
        lo = i == 0 ? v : std::min(lo, v);
        hi = std::max(hi, v);
        rlo = i == 0 ? q : std::min(rlo, q);
        rhi = std::max(rhi, q);
      }
      bench::print_row({r.traffic.name, variant, std::to_string(runs->size()), fmt("%.3f", lo), fmt("%.3f", hi),
                        fmt("%.3f", rlo), fmt("%.3f", rhi)});
    }
  // Every run moved exactly what was offered.
  std::printf("\n");
  for (const TrafficResult& r : results)
    for (auto [variant, runs] : {std::pair{"receive-only", &r.base_runs}, std::pair{"parse only", &r.parse_runs},
                                 std::pair{"packet-processing", &r.pp_runs}})
      for (size_t run = 0; run < runs->size(); ++run) {
        const Measured* m = &(*runs)[run];
        std::string problem = m->error;
        if (problem.empty() && (m->offered != r.traffic.packets || m->delivered != r.traffic.packets ||
                                m->packets != r.traffic.packets || m->dropped != 0))
          problem = "offered " + std::to_string(m->offered) + ", delivered " + std::to_string(m->delivered) +
                    ", dropped " + std::to_string(m->dropped) + ", kernel finished " + std::to_string(m->packets) +
                    "; expected " + std::to_string(r.traffic.packets) + " each and no drop";
        if (!problem.empty()) {
          std::printf("error: %s, %s, run %zu: %s\n", r.traffic.name.c_str(), variant, run + 1, problem.c_str());
          ok = false;
        }
      }
  // Every packet-processing run classified as the host core (the table
  // below shows the median run's counters).
  const std::vector<std::string> names = counter_names();
  for (const TrafficResult& r : results)
    for (size_t run = 0; run < r.pp_runs.size(); ++run) {
      const Measured& m = r.pp_runs[run];
      if (m.counters.size() != app::counter::kCount || r.host.counters.size() != app::counter::kCount) continue;
      for (uint32_t i = 0; i < app::counter::kCount; ++i)
        if (host_computes(i) && m.counters[i] != r.host.counters[i]) {
          std::printf("error: %s, packet-processing, run %zu: %s is %llu, the host core's %llu\n",
                      r.traffic.name.c_str(), run + 1, names[i].c_str(), static_cast<unsigned long long>(m.counters[i]),
                      static_cast<unsigned long long>(r.host.counters[i]));
          ok = false;
        }
    }
  // The host core's classification against the kernels', counter by counter.
  bench::print_header({"traffic", "counter", "packet-processing kernel", "parse-only kernel", "host core", "equal"},
                      "llrrrl");
  for (const TrafficResult& r : results) {
    if (r.pp.counters.size() != app::counter::kCount || r.host.counters.size() != app::counter::kCount) {
      std::printf("error: %s: no counters to compare\n", r.traffic.name.c_str());
      ok = false;
      continue;
    }
    for (uint32_t i = 0; i < app::counter::kCount; ++i) {
      const uint64_t kv = r.pp.counters[i], hv = r.host.counters[i];
      const std::optional<uint64_t> pv = parse_only_counter(r.parse, i);
      if (kv == 0 && hv == 0 && pv.value_or(0) == 0) continue;
      const bool host = host_computes(i);
      const bool equal = (!host || kv == hv) && (!pv || *pv == kv);
      ok = ok && equal;
      bench::print_row({r.traffic.name, names[i], std::to_string(kv), pv ? std::to_string(*pv) : "–",
                        host ? std::to_string(hv) : "–", equal ? "yes" : "NO"});
    }
  }
  return ok;
}

}  // namespace

int app_bench::run(Options o) {
  if (o.queues == 0 || o.queues > Queues::kMax) {
    std::fprintf(stderr, "error: --queues %u is out of range 1..%u\n", o.queues, Queues::kMax);
    return 2;
  }
  if (o.quick) {
    o.strides = 2048;
    o.ring = 1024;
    o.row_limit_s = std::min(o.row_limit_s, 60.0);
  }
  auto gpu = examples::open_gpu(o.gpu, false);
  if (!gpu) return examples::fail(gpu.status());
  if (o.repeat == 0) o.repeat = gpu->emulated() ? 1 : 3;
  const auto started = Clock::now();

  std::string listing;
  auto mix = merge_captures(o.captures, listing);
  if (!mix) return examples::fail(mix.status());
  auto count = [&](uint64_t full, uint64_t quick) { return o.packets ? o.packets : o.quick ? quick : full; };
  const std::vector<Traffic> traffics = {
      {"64 B", "frames=1024,size=64,flows=1024,proto=mix", count(10'000'000, 200'000)},
      {"1500 B", "frames=1024,size=1500,flows=1024,proto=mix", count(10'000'000, 50'000)},
      {"capture mix", *mix, count(10'000'000, 100'000)},
  };
  const std::string legend = "64 B and 1500 B: 1024 generator frames (UDP, TCP, ICMP over 1024 flows); capture mix: " +
                             listing + " frames of " + o.captures + ", replayed in turn";

  std::vector<TrafficResult> results;
  for (const Traffic& t : traffics) {
    TrafficResult r{t, {}, {}, {}, {}, {}, {}, {}};
    // A line per row as it ends: a run cut short by a time limit still says how far each row got.
    auto progress = [&](const char* variant, const Measured& m) {
      std::fprintf(stderr, "%s, %s: %llu of %llu packets finished (offered %llu, delivered %llu, dropped %llu), %.2f s%s%s\n",
                   t.name.c_str(), variant, static_cast<unsigned long long>(m.packets),
                   static_cast<unsigned long long>(t.packets), static_cast<unsigned long long>(m.offered),
                   static_cast<unsigned long long>(m.delivered), static_cast<unsigned long long>(m.dropped), m.seconds,
                   m.error.empty() ? "" : ": ", m.error.c_str());
    };
    for (uint32_t run = 0; run < o.repeat; ++run) {
      r.base_runs.push_back(run_device(*gpu, o, t, Variant::ReceiveOnly));
      progress("receive-only", r.base_runs.back());
      r.parse_runs.push_back(run_device(*gpu, o, t, Variant::ParseOnly));
      progress("parse only", r.parse_runs.back());
      r.pp_runs.push_back(run_device(*gpu, o, t, Variant::PacketProcessing));
      progress("packet-processing", r.pp_runs.back());
    }
    r.base = median_run(r.base_runs);
    r.parse = median_run(r.parse_runs);
    r.pp = median_run(r.pp_runs);
    auto img = frame_image(t);
    if (img) r.host = run_host(*img, t.packets);
    else r.host.error = img.status().to_string();
    results.push_back(std::move(r));
    std::fprintf(stderr, "%s done (%.1f s)\n", t.name.c_str(), secs_since(started));
  }
  std::filesystem::remove(*mix);
  const bool ok = print_report(*gpu, o, results, legend);
  std::printf("\nwall time: %.1f s\n", secs_since(started));
  return ok ? 0 : 1;
}
