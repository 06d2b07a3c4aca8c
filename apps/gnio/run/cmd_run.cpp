// SPDX-License-Identifier: Apache-2.0
// `gnio run packet-processing`: the reference application. One persistent
// kernel per GPU receives from every RX queue, classifies each packet in
// place, keeps a flow table in GPU memory, hands DNS/HTTP/TLS records to
// the host through a semaphore and answers echo/ARP/ND/UDP-echo requests
// zero-copy through the TX queue. The host side polls in one place
// (progress, records, flow snapshots) and stops in one place (exit flag,
// drain, flush, summary).
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../commands.hpp"
#include "../options.hpp"
#include "gnio/capabilities.hpp"
#include "gnio/filter.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/log.hpp"
#include "gnio/metrics.hpp"
#include "gnio/stop_signal.hpp"
#include "output_file.hpp"
#include "packet_processing/metrics.hpp"
#include "packet_processing/pp_kernel.hpp"
#include "packet_processing/records.hpp"
#include "packet_processing/report.hpp"

namespace gnio::cli {

namespace {

using namespace std::chrono_literals;
using gnio::app::RunResult;
using gnio::dev::app::FlowEntry;
using gnio::dev::app::Record;

constexpr int kExitSkip = 77;
// Record ring items (616 bytes each, pinned host memory): at 12 Mpps with
// one packet in eight carrying a record, about 10 ms of records, so that a
// host thread off its core for a scheduler tick does not hold the kernel.
constexpr uint32_t kRecordItems = 16384;
// After a stop (signal, --duration, --count): how long the kernel may take to
// finish the packets already published before its exit flag is set anyway.
constexpr std::chrono::milliseconds kDrainTimeout{5000};

struct RunOptions {
  std::string rx;
  std::string tx;
  std::string gpu = "auto";
  uint32_t queues = 1;
  double duration_s = 0;
  uint64_t count = 0;
  std::string json_out;
  std::string flows_out;
  double flows_interval_s = 0;
  uint32_t top = 10;
  std::vector<std::string> ips;
  std::string mac;
  uint16_t udp_echo = 0;
  std::string print;
  std::string filter;
  std::string mem = "gpu";
  uint32_t block = 256, burst = 256, strides = 8192, flow_slots = 65536;
  uint32_t blocks = 0;  // 0: one per queue
  bool require_gpu = false, quiet = false;
  std::string log_level;
  std::string metrics;
  bool metrics_allow_remote = false;
  double hang_timeout_s = 5;
  std::string snapshot_dir;
};

int fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "gnio run packet-processing: %s: %s\n", what.c_str(), s.to_string().c_str());
  return 2;
}

int usage(const std::string& msg) {
  std::fprintf(stderr, "gnio run packet-processing: %s\n", msg.c_str());
  return 2;
}

bool parse_mac(const std::string& s, uint8_t (&mac)[6]) {
  unsigned v[6];
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) return false;
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 255) return false;
    mac[i] = static_cast<uint8_t>(v[i]);
  }
  return true;
}

std::optional<std::string> parse_replies(const RunOptions& o, dev::app::ReplyConfig& c) {
  for (const std::string& ip : o.ips) {
    if (c.ipv4_count < c.kMaxAddrs && inet_pton(AF_INET, ip.c_str(), c.ipv4[c.ipv4_count]) == 1) {
      ++c.ipv4_count;
    } else if (c.ipv6_count < c.kMaxAddrs && inet_pton(AF_INET6, ip.c_str(), c.ipv6[c.ipv6_count]) == 1) {
      ++c.ipv6_count;
    } else {
      return "--ip " + ip + " is not an IPv4 or IPv6 address (or more than 4 of a family were given)";
    }
  }
  if (!o.mac.empty()) {
    if (!parse_mac(o.mac, c.mac)) return "--mac " + o.mac + " is not a MAC address like 02:00:00:00:00:01";
    c.has_mac = true;
  }
  c.udp_echo_port = o.udp_echo;
  return std::nullopt;
}

// DIR/caps-<UTC time>-<gpu>.json: the capability snapshot of the run's NIC
// spec and GPU at start, for a later `gnio caps --diff FILE`.
Result<std::string> save_start_snapshot(const std::string& dir, const std::string& nic, const std::string& gpu_id,
                                        std::string& json_out) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &utc);
  std::string gpu_name = gpu_id;
  std::replace_if(gpu_name.begin(), gpu_name.end(), [](char c) { return c == ':' || c == '/'; }, '-');
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(ms));
  const std::string path = dir + "/caps-" + stamp + millis + "-" + gpu_name + ".json";
  json_out = to_json(discover(nic, gpu_id));
  std::ofstream out(path);
  out << json_out << "\n";
  if (!out)
    return Status(Errc::IoError, Layer::App,
                  "cannot write the capability snapshot " + path + ": check that --snapshot-dir " + dir +
                      " exists and is writable");
  return path;
}

// The records the kernel made ready since the last call, in order, printed
// as asked.
struct RecordReader {
  app::RecordConsumer ring;
  bool print_dns = false, print_http = false, print_tls = false;

  void drain(std::vector<Record>& out) {
    ring.drain([&](const Record& in_ring) {
      Record& r = out.emplace_back();
      dev::app::store_record(in_ring, &r);
      if ((r.kind == dev::app::kRecordDns && print_dns) || (r.kind == dev::app::kRecordHttp && print_http) ||
          (r.kind == dev::app::kRecordTls && print_tls))
        std::printf("%s\n", app::record_line(r).c_str());
    });
  }
};

int run_packet_processing(const RunOptions& o) {
  // First, so that a signal during setup stops cleanly too (a second SIGINT
  // exits at once with 130, also while the kernel is being waited for).
  StopSignal::install();
  // A closed pipe as an output is a write error reported like a full disk,
  // not a silent death by SIGPIPE before the other outputs are written.
  std::signal(SIGPIPE, SIG_IGN);
  if (!o.log_level.empty()) {
    auto level = logging::parse_level(o.log_level);
    if (!level) return usage("--log-level: " + level.status().message());
    logging::set_level(*level);
  }
  if (o.rx.empty()) return usage("--rx SPEC is required, e.g. --rx pcap:data/captures/ping.pcap");
  if (o.queues == 0 || o.queues > app::PpArgs::kMaxQueues)
    return usage("--queues " + std::to_string(o.queues) + " is out of range 1.." +
                 std::to_string(app::PpArgs::kMaxQueues));
  if (o.blocks != 0 && o.blocks < o.queues)
    return usage("--blocks " + std::to_string(o.blocks) + " is fewer than --queues " + std::to_string(o.queues) +
                 ": every queue needs a block");
  if (o.burst == 0 || o.burst > o.strides / 2)
    return usage("--burst " + std::to_string(o.burst) + " is out of range 1.." + std::to_string(o.strides / 2) +
                 " (half of --strides " + std::to_string(o.strides) + ")");
  if (o.flow_slots == 0 || (o.flow_slots & (o.flow_slots - 1)) != 0)
    return usage("--flow-slots " + std::to_string(o.flow_slots) + " must be a power of two");
  if (o.mem != "gpu" && o.mem != "host") return usage("--mem must be gpu or host (got " + o.mem + ")");
  if (o.hang_timeout_s < 0) return usage("--hang-timeout " + std::to_string(o.hang_timeout_s) + " must be >= 0 (0: off)");
  app::PpArgs args;
  if (auto err = parse_replies(o, args.replies)) return usage(*err);
  if ((args.replies.ipv4_count || args.replies.ipv6_count) && !args.replies.has_mac && !o.tx.empty())
    std::fprintf(stderr, "gnio run packet-processing: note: without --mac, ARP and neighbour solicitations are "
                         "not answered (echo replies are)\n");

  auto gpu = Gpu::open(o.gpu);
  if (!gpu && o.gpu == "auto") {
    if (o.require_gpu) {
      std::printf("SKIP: %s\n", gpu.status().message().c_str());
      return kExitSkip;
    }
    std::printf("gnio: no CUDA GPU here; running on the emulated device (the same kernel code on CPU threads)\n");
    gpu = Gpu::open("cpu");
  }
  if (!gpu) return fail("opening GPU " + o.gpu, gpu.status());
  const std::string gpu_id = gpu->emulated() ? "cpu" : gpu->bus_id();

  // The capability snapshot of this run's NIC spec and GPU, before the run
  // opens them (discover() opens both itself). Specs that name a live
  // endpoint (loop:, afxdp:) are not opened twice: their NIC axis stays empty.
  const bool reopenable = o.rx.rfind("pcap:", 0) == 0 || o.rx.rfind("synthetic:", 0) == 0;
  std::string start_caps;
  if (!o.snapshot_dir.empty()) {
    auto path = save_start_snapshot(o.snapshot_dir, reopenable ? o.rx : "", gpu_id, start_caps);
    if (!path) return fail("saving the capability snapshot", path.status());
    std::printf("snapshot %s\n", path->c_str());
    logging::info("run", "capability snapshot saved to " + *path);
  }

  // Layer 1: the Ethernet queues, configured and started.
  auto rx_dev = EthDevice::open(o.rx);
  if (!rx_dev) return fail("opening --rx " + o.rx, rx_dev.status());
  std::vector<EthRxq> rxqs;
  for (uint32_t q = 0; q < o.queues; ++q) {
    auto rxq = rx_dev->create_rxq(static_cast<uint16_t>(q));
    if (!rxq) return fail("creating RX queue " + std::to_string(q), rxq.status());
    // The engine moves frames in bursts as large as the backend takes; the
    // kernel's --burst is how many it receives at a time, from any number of them.
    const uint32_t engine_burst = std::min(o.burst, rx_dev->caps().max_burst);
    for (Status s : {rxq->set_num_strides(o.strides), rxq->set_stride_size(2048), rxq->set_burst_size(engine_burst),
                     rxq->set_ring_mem(o.mem == "gpu" ? RingMem::Gpu : RingMem::Host), rxq->set_gpu(*gpu),
                     rxq->start()})
      if (!s) return fail("configuring RX queue " + std::to_string(q), s);
    rxqs.push_back(std::move(*rxq));
  }
  std::optional<EthDevice> tx_dev;
  std::optional<EthTxq> txq;
  if (!o.tx.empty()) {
    auto d = EthDevice::open(o.tx);
    if (!d) return fail("opening --tx " + o.tx, d.status());
    tx_dev = std::move(*d);
    auto t = tx_dev->create_txq(0);
    if (!t) return fail("creating the TX queue", t.status());
    for (Status s : {t->set_depth(1024), t->set_gpu(*gpu), t->start()})
      if (!s) return fail("configuring the TX queue", s);
    txq = std::move(*t);
  }
  // Layer 3: GPU handles of the started queues.
  std::vector<GpuRxq> grxqs;
  for (uint32_t q = 0; q < o.queues; ++q) {
    auto g = GpuRxq::create(*gpu, rxqs[q]);
    if (!g) return fail("GPU handle of RX queue " + std::to_string(q), g.status());
    args.rxq[q] = g->handle();
    grxqs.push_back(std::move(*g));
  }
  args.queues = o.queues;
  std::optional<GpuTxq> gtxq;
  if (txq) {
    auto g = GpuTxq::create(*gpu, *txq);
    if (!g) return fail("GPU handle of the TX queue", g.status());
    args.txq = g->handle();
    args.tx = true;
    gtxq = std::move(*g);
  }
  auto records = GpuSemaphore::create(*gpu, kRecordItems, sizeof(Record));
  if (!records) return fail("creating the record semaphore", records.status());
  auto counters = gpu->alloc(app::counter::kCount * sizeof(uint64_t), MemKind::GpuCpu);
  auto flows = gpu->alloc(size_t{o.flow_slots} * sizeof(FlowEntry), MemKind::GpuCpu);
  auto claim = gpu->alloc(sizeof(uint64_t), MemKind::GpuCpu);
  auto consumed = gpu->alloc(sizeof(uint64_t), MemKind::CpuGpu);
  for (auto* m : {&counters, &flows, &claim, &consumed})
    if (!*m) return fail("allocating GPU memory", m->status());
  for (auto* m : {&counters, &flows, &claim, &consumed}) std::memset((*m)->host_ptr(), 0, (*m)->size());
  args.counters = static_cast<uint64_t*>(counters->device_ptr());
  args.flows = {static_cast<FlowEntry*>(flows->device_ptr()), o.flow_slots - 1};
  args.records = records->handle();
  args.record_claim = static_cast<uint64_t*>(claim->device_ptr());
  args.record_consumed = static_cast<const uint64_t*>(consumed->device_ptr());
  args.burst = o.burst;
  FilterProgram filter;
  if (!o.filter.empty()) {
    auto f = FilterProgram::compile(*gpu, o.filter);
    if (!f) return fail("compiling --filter '" + o.filter + "'", f.status());
    filter = std::move(*f);
    args.filter = filter.handle();
  }

  const bool tty = isatty(STDOUT_FILENO) && !o.quiet;
  std::printf("gnio run packet-processing: rx %s, tx %s, %u queue(s) on %s (%s)\n", o.rx.c_str(),
              o.tx.empty() ? "none (no replies)" : o.tx.c_str(), o.queues, gpu->bus_id().c_str(),
              gpu->emulated() ? "emulated device" : gpu->info().name.c_str());
  std::fflush(stdout);

  LaunchConfig cfg;
  cfg.grid = o.blocks != 0 ? o.blocks : o.queues;
  cfg.block = gpu->emulated() ? 1u : o.block;
  cfg.name = "packet_processing";
  cfg.stage_names.assign(std::begin(app::stage::kNames), std::end(app::stage::kNames));
  cfg.hang_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.hang_timeout_s * 1000));
  // Block b has work while its queue holds packets delivered and not released.
  cfg.has_work = [&rxqs, nq = o.queues](uint32_t b) {
    const RxqStats s = rxqs[b % nq].stats();
    return s.packets > s.released;
  };
  const auto start = std::chrono::steady_clock::now();
  auto kernel = app::launch_packet_processing(*gpu, cfg, args);
  if (!kernel) return fail("launching the kernel", kernel.status());
  std::printf("kernel: %u block(s) of %u thread(s), bursts of up to %u packets\n", kernel->config().grid,
              kernel->config().block, o.burst);
  std::fflush(stdout);

  // /metrics while the run goes: the collector reads live counters only; the
  // server stops before anything it reads is torn down.
  metrics::Server server;
  if (!o.metrics.empty()) {
    const std::string rx_backend = rx_dev->caps().driver;
    const std::string tx_backend = tx_dev ? tx_dev->caps().driver : "";
    const uint64_t* live_counters = static_cast<const uint64_t*>(counters->host_ptr());
    auto collect = [&, rx_backend, tx_backend, live_counters](metrics::Writer& w) {
      for (uint32_t q = 0; q < o.queues; ++q)
        metrics::add_rxq(w, rxqs[q].stats(), {{"queue", std::to_string(q)}, {"gpu", gpu_id}, {"backend", rx_backend}});
      if (txq) metrics::add_txq(w, txq->stats(), {{"queue", "0"}, {"gpu", gpu_id}, {"backend", tx_backend}});
      metrics::add_kernel(w, kernel->counters(), kernel->health(), {{"gpu", gpu_id}});
      app::add_app_counters(w, live_counters, {{"gpu", gpu_id}});
    };
    auto started = metrics::Server::start(o.metrics, collect, {o.metrics_allow_remote});
    if (!started) return fail("starting the metrics server on " + o.metrics, started.status());
    server = std::move(*started);
    std::printf("metrics http://%s/metrics\n", server.address().c_str());
    logging::info("metrics", "serving http://" + server.address() + "/metrics");
  }
  std::fflush(stdout);

  RunResult result;
  RecordReader reader{{&*records, static_cast<uint64_t*>(consumed->host_ptr())}};
  for (size_t pos = 0; pos <= o.print.size();) {
    const size_t comma = std::min(o.print.find(',', pos), o.print.size());
    const std::string what = o.print.substr(pos, comma - pos);
    reader.print_dns |= what == "dns";
    reader.print_http |= what == "http";
    reader.print_tls |= what == "tls" || what == "sni";
    pos = comma + 1;
  }
  app::FlowExport flow_export;
  if (!o.flows_out.empty()) {
    auto f = app::FlowExport::open(o.flows_out);
    if (!f) return fail("opening the flow export", f.status());
    flow_export = std::move(*f);
  }

  // The one polling place: records, progress, flow snapshots, stop checks.
  const uint64_t* live = static_cast<const uint64_t*>(counters->host_ptr());
  auto last_progress = start, last_flows = start;
  app::StopReason stop_reason = app::StopReason::EndOfInput;
  for (;;) {
    reader.drain(result.records);
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    bool at_end = true;
    for (const EthRxq& q : rxqs) at_end = at_end && q.at_end();
    if (at_end) break;
    if (StopSignal::requested()) {
      stop_reason = app::StopReason::Signal;
      break;
    }
    if (o.duration_s > 0 && elapsed >= o.duration_s) {
      stop_reason = app::StopReason::Duration;
      break;
    }
    if (o.count > 0 && kernel->totals().packets >= o.count) {
      stop_reason = app::StopReason::Count;
      break;
    }
    if (o.flows_interval_s > 0 && std::chrono::duration<double>(now - last_flows).count() >= o.flows_interval_s) {
      flow_export.snapshot(app::sorted_flows(static_cast<const FlowEntry*>(flows->host_ptr()), o.flow_slots), elapsed);
      last_flows = now;
    }
    if (tty && now - last_progress >= 250ms) {
      const KernelTotals t = kernel->totals();
      uint64_t missed = 0;
      for (const EthRxq& q : rxqs) missed += q.stats().rx_missed;
      std::printf("\r%llu pkts  %.3f Mpps  %.3f Gbit/s  drops %llu  ipv4 %llu ipv6 %llu tcp %llu udp %llu dns %llu "
                  "http %llu   ",
                  (unsigned long long)t.packets, t.packets / elapsed / 1e6, t.bytes * 8.0 / elapsed / 1e9,
                  (unsigned long long)missed, (unsigned long long)live[app::counter::kProto + dev::app::kIpv4],
                  (unsigned long long)live[app::counter::kProto + dev::app::kIpv6],
                  (unsigned long long)live[app::counter::kProto + dev::app::kTcp],
                  (unsigned long long)live[app::counter::kProto + dev::app::kUdp],
                  (unsigned long long)live[app::counter::kProto + dev::app::kDns],
                  (unsigned long long)live[app::counter::kProto + dev::app::kHttpRequest]);
      std::fflush(stdout);
      last_progress = now;
    }
    StopSignal::wait_for(1ms);
  }

  // The one stop path: sources, drain, exit flag, flush, summary. (A second
  // SIGINT exits at once with 130 from anywhere here: StopSignal's handler.)
  result.info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stop_reason == app::StopReason::Signal)
    logging::info("run", std::string("stop requested by ") + (StopSignal::signal_number() == SIGTERM ? "SIGTERM" : "SIGINT") +
                             ": stopping the sources, draining the kernel (a second SIGINT exits at once)");
  if (stop_reason != app::StopReason::EndOfInput) {
    // No more frames from the sources; the kernel finishes what was published.
    for (EthRxq& q : rxqs)
      if (Status s = q.stop_source(); !s) return fail("stopping the source of an RX queue", s);
    const auto deadline = std::chrono::steady_clock::now() + kDrainTimeout;
    bool drained = false;
    while (!(drained = std::all_of(rxqs.begin(), rxqs.end(), [](const EthRxq& q) { return q.at_end(); })) &&
           std::chrono::steady_clock::now() < deadline) {
      reader.drain(result.records);
      std::this_thread::sleep_for(1ms);
    }
    if (!drained)
      logging::warn("run", "the kernel did not release every published packet within " +
                               std::to_string(kDrainTimeout.count()) + " ms of the stop; stopping it anyway (see "
                               "left_in_ring in the summary)");
  }
  Status stopped = kernel->stop();
  reader.drain(result.records);
  // The threads of a block hand records over in the order they finish, not
  // the order the packets arrived: the report lists them in arrival order
  // (time stamp, then queue and index within the queue).
  std::stable_sort(result.records.begin(), result.records.end(), [](const Record& a, const Record& b) {
    if (a.timestamp_ns != b.timestamp_ns) return a.timestamp_ns < b.timestamp_ns;
    if (a.queue != b.queue) return a.queue < b.queue;
    return a.packet < b.packet;
  });
  if (tty) std::printf("\n");
  server.stop();
  if (!stopped) {
    for (const BlockHealth& h : kernel->health())
      std::fprintf(stderr, "gnio run packet-processing: block %u: heartbeat %llu, age %.3f s, stage %s%s\n", h.block,
                   (unsigned long long)h.heartbeat, std::chrono::duration<double>(h.heartbeat_age).count(),
                   h.stage_name.c_str(), h.exited ? ", exited" : h.hung ? ", HUNG" : "");
    return fail("stopping the kernel", stopped);
  }
  const uint64_t claimed = *static_cast<const uint64_t*>(claim->host_ptr());
  result.records_lost = claimed - reader.ring.next - live[app::counter::kRecordsDropped];
  result.kernel = kernel->totals();

  // Every GPU handle goes before the queues under it: a queue exposed to a
  // GPU does not stop. Then TX stops (flushing pcap-out), then RX, so that
  // the RX counters are final: offered == delivered + dropped exactly.
  if (Status s = records->destroy(); !s) return fail("releasing the record semaphore", s);
  if (gtxq)
    if (Status s = gtxq->destroy(); !s) return fail("releasing the TX queue's GPU handle", s);
  for (GpuRxq& g : grxqs)
    if (Status s = g.destroy(); !s) return fail("releasing an RX queue's GPU handle", s);
  // A TX output that cannot be written (pcap-out on a full disk) is
  // reported with the others below; the queue is stopped all the same.
  Status tx_flushed;
  if (txq) {
    tx_flushed = txq->stop();
    result.tx = txq->stats();
  }
  // The engines see the kernel's last releases a moment after it made them.
  for (auto deadline = std::chrono::steady_clock::now() + 2s; std::chrono::steady_clock::now() < deadline;) {
    uint64_t released = 0;
    for (const EthRxq& q : rxqs) released += q.stats().released;
    if (released >= result.kernel.packets) break;
    std::this_thread::sleep_for(1ms);
  }
  for (EthRxq& q : rxqs)
    if (Status s = q.stop(); !s) return fail("stopping RX queue", s);
  // A source that ended in a read error (a cut last record) still delivered
  // every frame before it: the run reports those, and the error.
  Status input;
  for (const EthRxq& q : rxqs) {
    if (Status s = q.source_status(); !s && input) input = s;
    result.rx.push_back(q.stats());
  }
  if (!input) {
    stop_reason = app::StopReason::InputError;
    result.info.input_error = input.message();
  }
  result.counters.assign(live, live + app::counter::kCount);
  result.flows = app::sorted_flows(static_cast<const FlowEntry*>(flows->host_ptr()), o.flow_slots);
  result.info.rx = o.rx;
  result.info.tx = o.tx;
  result.info.gpu = gpu->bus_id();
  result.info.device = gpu->emulated() ? "emulated" : gpu->info().name;
  result.info.emulated = gpu->emulated();
  result.info.queues = o.queues;
  result.info.filter = o.filter;
  result.info.stop_reason = stop_reason;
  result.info.signal = StopSignal::signal_number();

  // From here on the counts are final: an error is reported, the summary and
  // every output are still written, and the exit status is 1.
  int exit_status = 0;
  auto report = [&](const std::string& what, const Status& s) {
    if (s) return;
    fail(what, s);
    exit_status = 1;
  };
  report("reading --rx " + o.rx + " (the summary and the report cover the frames before the error)", input);
  report("writing the replies to --tx " + o.tx + " (the summary and the report count them as the TX queue did)",
         tx_flushed);

  // Tear down in reverse; the report carries the capability snapshot of this
  // run's NIC spec and GPU: the one taken at start, else one taken now (it
  // opens both itself, so after they are closed).
  kernel = PersistentKernel();
  if (txq) report("tearing down the TX queue", txq->destroy());
  for (EthRxq& q : rxqs) report("tearing down an RX queue", q.destroy());
  counters = DeviceMemory();
  flows = DeviceMemory();
  claim = DeviceMemory();
  consumed = DeviceMemory();
  gpu = Gpu();
  result.capabilities =
      nlohmann::json::parse(start_caps.empty() ? to_json(discover(reopenable ? o.rx : "", gpu_id), -1) : start_caps);

  // The summary first: an output that cannot be written does not lose it.
  // Where standard output does not take it (a closed pipe, a full disk), it
  // goes to standard error after the error.
  const std::string summary = app::summary_text(result, o.top);
  std::printf("%s", summary.c_str());
  if (Status printed = app::flush_standard_output(); !printed) {
    report("printing the summary", printed);
    std::fprintf(stderr, "gnio run packet-processing: the summary, on standard error:\n%s", summary.c_str());
  }
  flow_export.snapshot(result.flows, result.info.seconds);
  report("writing the flow export", flow_export.close());
  if (!o.json_out.empty())
    report("writing the report",
           app::write_output("--json", o.json_out, app::json_text(app::report_json(result, o.top), 2) + "\n"));
  return exit_status;
}

}  // namespace

void add_run_command(CLI::App& app) {
  CLI::App* run = app.add_subcommand("run", "Run an application on the GPU datapath");
  run->require_subcommand(1);
  auto o = std::make_shared<RunOptions>();
  CLI::App* pp = run->add_subcommand(
      "packet-processing",
      "The reference application: classify every packet on the GPU (L2-L4, DNS, HTTP, TLS SNI, checksums, "
      "malformed by reason), track flows in GPU memory, hand DNS/HTTP/TLS records to the host, answer "
      "ICMP/ICMPv6 echo, ARP, neighbour solicitations and UDP echo zero-copy from the RX buffer");
  pp->add_option("--rx", o->rx, "RX spec: pcap:FILE[,loop=N][,pps=R], synthetic:..., loop:NAME")->required();
  pp->add_option("--tx", o->tx, "TX spec for replies, e.g. pcap-out:FILE or loop:NAME (no replies without it)");
  pp->add_option("--gpu", o->gpu, "auto (first CUDA GPU, else the emulated device), a PCIe bus id, or cpu")
      ->capture_default_str();
  pp->add_option("--queues", o->queues, "RX queues, one kernel block each (RSS spreads flows)")->capture_default_str();
  pp->add_option("--duration", o->duration_s, "stop after S seconds (default: at the end of the input or on SIGINT)");
  pp->add_option("--count", o->count, "stop after about N packets");
  pp->add_option("--json", o->json_out, "write the full report (schema versioned) to FILE")->type_name("FILE");
  pp->add_option("--flows-out", o->flows_out, "write the flow table to FILE: CSV if it ends in .csv, else JSON lines")
      ->type_name("FILE");
  pp->add_option("--flows-interval", o->flows_interval_s, "also export the flow table every S seconds");
  pp->add_option("--top", o->top, "flows in the summary and the report")->capture_default_str();
  pp->add_option("--ip", o->ips, "an address of ours (IPv4 or IPv6; repeat): echo, ARP and ND answer only these");
  pp->add_option("--mac", o->mac, "our MAC: the source of replies; needed for ARP replies and neighbour adverts");
  pp->add_option("--udp-echo", o->udp_echo, "answer UDP datagrams to this port with the same payload (0: off)");
  pp->add_option("--print", o->print, "print records as they arrive: dns,http,tls");
  pp->add_option("--filter", o->filter,
                 "analyse only the packets a tcpdump expression matches (pcap-filter(7), compiled by libpcap, run "
                 "on the GPU); the others are counted as filtered and released")
      ->type_name("EXPR");
  pp->add_option("--mem", o->mem, "RX ring memory: gpu or host")->capture_default_str();
  pp->add_option("--block", o->block, "threads per block (1 on the emulated device)")->capture_default_str();
  pp->add_option("--blocks", o->blocks,
                 "kernel blocks, at least --queues (block b serves queue b % queues); 0: one per queue")
      ->capture_default_str();
  pp->add_option("--burst", o->burst,
                 "packets a block receives at a time, a thread each (more than --block: threads take several); up "
                 "to half of --strides, whatever the backend's own burst")
      ->capture_default_str();
  pp->add_option("--strides", o->strides, "RX ring strides (2048 bytes each)")->capture_default_str();
  pp->add_option("--flow-slots", o->flow_slots, "flow table slots (power of two)")->capture_default_str();
  pp->add_flag("--require-gpu", o->require_gpu, "with --gpu auto: exit 77 (skip) when there is no CUDA GPU");
  pp->add_flag("--quiet", o->quiet, "no live progress line");
  pp->add_option("--log-level", o->log_level,
                 "library log level: error|warn|info|debug|trace (overrides GNIO_LOG_LEVEL; default warn)")
      ->check(CLI::IsMember({"error", "warn", "info", "debug", "trace"}));
  pp->add_option("--metrics", o->metrics,
                 "serve Prometheus metrics on http://ADDR:PORT/metrics while the run goes (queues, TX queue, kernel "
                 "blocks, protocol counts; labels queue/gpu/backend/block); port 0 picks a free one, the address "
                 "bound is printed once (\"metrics http://...\") and logged at info")
      ->type_name("ADDR:PORT");
  pp->add_flag("--metrics-allow-remote", o->metrics_allow_remote,
               "allow --metrics on a non-loopback address (exposes the counters to the network)");
  pp->add_option("--hang-timeout", o->hang_timeout_s,
                 "seconds a block's heartbeat may stand still while its queue has packets waiting before it is "
                 "reported hung (logged at warn, gnio_kernel_hung in the metrics, HUNG in gnio top); 0: off")
      ->capture_default_str();
  pp->add_option("--snapshot-dir", o->snapshot_dir,
                 "save the capability snapshot of the run's NIC spec and GPU at start to "
                 "DIR/caps-<UTC time>-<gpu>.json (printed as \"snapshot FILE\"); compare later with "
                 "gnio caps --diff FILE")
      ->type_name("DIR");
  pp->footer(
      "Examples:\n"
      "  gnio run packet-processing --rx pcap:data/captures/dns.pcap --print dns --json report.json\n"
      "  gnio run packet-processing --rx pcap:data/captures/ping.pcap --tx pcap-out:replies.pcap \\\n"
      "      --ip 10.77.0.1 --ip fd77::1 --mac 02:00:00:00:00:01\n"
      "  gnio run packet-processing --rx synthetic:count=1000000,proto=mix --flows-out flows.csv\n"
      "  gnio run packet-processing --rx synthetic:count=0,pps=100000 --metrics 127.0.0.1:9400 &\n"
      "      gnio top --url http://127.0.0.1:9400/metrics\n\n"
      "Signals: the first SIGINT or SIGTERM stops the kernel (after it finishes the burst it holds), flushes\n"
      "the TX output, prints the summary (offered = delivered + dropped) and exits 0; a second SIGINT exits\n"
      "at once with status 130.");
  pp->callback([o] { exit_with(run_packet_processing(*o)); });
}

}  // namespace gnio::cli
