// SPDX-License-Identifier: Apache-2.0
// `gnio run packet-processing`: the reference application. One persistent
// kernel per GPU receives from every RX queue, classifies each packet in
// place, keeps a flow table in GPU memory, hands DNS/HTTP/TLS records to
// the host through a semaphore and answers echo/ARP/ND/UDP-echo requests
// zero-copy through the TX queue. The host side polls in one place
// (progress, records, flow snapshots) and stops in one place (exit flag,
// drain, flush, summary).
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
#include "export_thread.hpp"
#include "gpu_shard.hpp"
#include "run_export.hpp"
#include "run_options.hpp"
#include "output_file.hpp"
#include "packet_processing/decap_option.hpp"
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
// Record ring items (632 bytes each, pinned host memory): at 12 Mpps with
// one packet in eight carrying a record, about 10 ms of records, so that a
// host thread off its core for a scheduler tick does not hold the kernel.
constexpr uint32_t kRecordItems = 16384;
// How long stopping a capture queue waits for the writer to take what the
// kernel pushed; what is left then is counted as dropped(stopped).
constexpr uint32_t kCaptureStopTimeoutMs = 10000;
// After a stop (signal, --duration, --count): how long the kernel may take to
// finish the packets already published before its exit flag is set anyway.
constexpr std::chrono::milliseconds kDrainTimeout{5000};
// With an export: entries evicted from the flow table, held for the host
// (about 7 MiB of GpuCpu memory per GPU; the host reads them every 1 ms).
constexpr uint32_t kEvictionItems = 65536;
// Descriptors of each reply queue: replies are a small share of the traffic.
constexpr uint32_t kReplyDepth = 1024;


int fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "gnio run packet-processing: %s: %s\n", what.c_str(), s.to_string().c_str());
  return 2;
}

int usage(const std::string& msg) {
  std::fprintf(stderr, "gnio run packet-processing: %s\n", msg.c_str());
  return 2;
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

}  // namespace

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
  if (auto err = check_run_options(o)) return usage(*err);
  app::PpArgs args;
  if (auto err = parse_replies(o, args.replies)) return usage(*err);
  if (auto err = app::parse_decap(o.decap, args.decap)) return usage(*err);
  if ((args.replies.ipv4_count || args.replies.ipv6_count) && !args.replies.has_mac && !o.tx.empty())
    std::fprintf(stderr, "gnio run packet-processing: note: without --mac, ARP and neighbour solicitations are "
                         "not answered (echo replies are)\n");

  // Layer 2: one context per GPU of --gpu, queues mapped to them.
  auto opened = Gpu::open_list(o.gpu);
  const bool names_auto = ("," + o.gpu + ",").find(",auto,") != std::string::npos;
  if (!opened && names_auto && opened.status().code() == Errc::NotFound && o.require_gpu) {
    std::printf("SKIP: %s\n", opened.status().message().c_str());
    return kExitSkip;
  }
  if (!opened && o.gpu == "auto") {
    std::printf("gnio: no CUDA GPU here; running on the emulated device (the same kernel code on CPU threads)\n");
    opened = Gpu::open_list("cpu");
  }
  if (!opened) return fail("opening --gpu " + o.gpu, opened.status());
  std::vector<std::string> gpu_names, gpu_ids;
  for (size_t pos = 0; o.gpu != "all" && pos <= o.gpu.size();) {
    const size_t comma = std::min(o.gpu.find(',', pos), o.gpu.size());
    gpu_names.push_back(o.gpu.substr(pos, comma - pos));
    pos = comma + 1;
  }
  for (const Gpu& g : *opened) gpu_ids.push_back(g.bus_id());
  if (gpu_names.size() != gpu_ids.size()) gpu_names = gpu_ids;
  auto mapping = map_queues(o.queues, gpu_names, gpu_ids, o.gpu_map);
  if (!mapping) return usage(mapping.status().message());
  std::vector<GpuShard> shards(opened->size());
  std::vector<size_t> owner(o.queues);
  for (size_t i = 0; i < shards.size(); ++i) {
    shards[i].gpu = std::move((*opened)[i]);
    shards[i].queues = (*mapping)[i];
    for (uint32_t q : shards[i].queues) owner[q] = i;
  }
  const std::string gpu_id = gpu_ids.front();

  // The capability snapshot of this run's NIC spec and (first) GPU, before the run
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

  // Layer 1: the Ethernet queues, configured and started, each on its GPU.
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
                     rxq->set_ring_mem(o.mem == "gpu" ? RingMem::Gpu : RingMem::Host),
                     rxq->set_gpu(shards[owner[q]].gpu), rxq->start()})
      if (!s) return fail("configuring RX queue " + std::to_string(q), s);
    rxqs.push_back(std::move(*rxq));
  }
  // Replies: TX queue i of --tx for GPU i.
  std::optional<EthDevice> tx_dev;
  if (!o.tx.empty()) {
    auto d = EthDevice::open(o.tx);
    if (!d) return fail("opening --tx " + o.tx, d.status());
    tx_dev = std::move(*d);
    if (tx_dev->caps().max_tx_queues < shards.size())
      return usage("--tx " + o.tx + " has " + std::to_string(tx_dev->caps().max_tx_queues) + " TX queue(s); " +
                   std::to_string(shards.size()) + " GPUs need one each (e.g. pcapng-out:FILE,queues=" +
                   std::to_string(shards.size()) + ")");
    if (Status s = start_txq_per_gpu(*tx_dev, shards, kReplyDepth, 0, &GpuShard::txq); !s)
      return fail("configuring the TX queues of --tx " + o.tx, s);
  }
  // --capture: TX queue i of the capture device for GPU i, an interface per RX queue.
  std::optional<EthDevice> capture_dev;
  if (!o.capture.empty()) {
    const std::string spec = o.capture + ",rxqs=" + std::to_string(o.queues) +
                             (shards.size() > 1 ? ",queues=" + std::to_string(shards.size()) : "");
    auto d = EthDevice::open(spec);
    if (!d) return fail("opening --capture " + o.capture, d.status());
    capture_dev = std::move(*d);
    if (Status s = start_txq_per_gpu(*capture_dev, shards, o.capture_depth, kDefaultTxStagingSlot,
                                     &GpuShard::capture_txq);
        !s)
      return fail("configuring the capture queues of --capture " + o.capture + " (--capture-depth)", s);
  }
  // Layer 3 and the kernels' memory, per GPU.
  ShardConfig shard_config;
  shard_config.record_items = kRecordItems;
  shard_config.flow_slots = o.flow_slots;
  shard_config.burst = o.burst;
  shard_config.blocks = o.blocks;
  shard_config.block = o.block;
  shard_config.filter = o.filter;
  shard_config.hang_timeout_s = o.hang_timeout_s;
  shard_config.base = args;
  shard_config.eviction_items = o.ipfix.empty() && o.events_out.empty() ? 0 : kEvictionItems;
  for (GpuShard& sh : shards)
    if (Status s = sh.prepare(rxqs, shard_config); !s)
      return fail("setting up GPU " + sh.gpu.bus_id() + (o.filter.empty() ? "" : " (and --filter '" + o.filter + "')"),
                  s);

  const bool tty = isatty(STDOUT_FILENO) && !o.quiet;
  for (const GpuShard& sh : shards)
    std::printf("gnio run packet-processing: rx %s, tx %s%s%s, %zu queue(s) on %s (%s)\n", o.rx.c_str(),
                o.tx.empty() ? "none (no replies)" : o.tx.c_str(), o.capture.empty() ? "" : ", capture ",
                o.capture.c_str(), sh.queues.size(), sh.gpu.bus_id().c_str(),
                sh.gpu.emulated() ? "emulated device" : sh.gpu.info().name.c_str());
  std::fflush(stdout);

  // Layer 4: one persistent kernel per GPU, started together.
  const auto start = std::chrono::steady_clock::now();
  for (GpuShard& sh : shards) {
    if (Status s = sh.launch(rxqs, shard_config); !s) return fail("launching the kernel on " + sh.gpu.bus_id(), s);
    std::printf("kernel: %u block(s) of %u thread(s), bursts of up to %u packets%s\n", sh.kernel.config().grid,
                sh.kernel.config().block, o.burst, shards.size() > 1 ? (" on " + sh.gpu.bus_id()).c_str() : "");
  }
  std::fflush(stdout);
  auto totals = [&] {
    KernelTotals t{};
    for (const GpuShard& sh : shards) {
      const KernelTotals k = sh.kernel.totals();
      t.packets += k.packets;
      t.bytes += k.bytes;
      t.bursts += k.bursts;
      t.again += k.again;
      t.errors += k.errors;
    }
    return t;
  };
  auto summed_counters = [&] {
    std::vector<uint64_t> c(app::counter::kCount, 0);
    for (const GpuShard& sh : shards)
      for (uint32_t i = 0; i < app::counter::kCount; ++i) c[i] += sh.live_counters()[i];
    return c;
  };

  // --ipfix and --events-out (run_export.cpp): before /metrics, which reads its counts.
  std::unique_ptr<RunExport> run_export;
  if (!o.ipfix.empty() || !o.events_out.empty()) {
    if (!(o.flow_active_timeout_s > 0) || !(o.flow_idle_timeout_s > 0))
      return usage("--flow-active-timeout and --flow-idle-timeout must be > 0 seconds");
    auto opened_export = RunExport::open(export_options(o));
    if (!opened_export) return fail("opening the export", opened_export.status());
    run_export = std::move(*opened_export);
  }

  // /metrics while the run goes: the collector reads live counters only; the
  // server stops before anything it reads is torn down.
  metrics::Server server;
  if (!o.metrics.empty()) {
    const std::string rx_backend = rx_dev->caps().driver;
    const std::string tx_backend = tx_dev ? tx_dev->caps().driver : "";
    auto collect = [&, rx_backend, tx_backend](metrics::Writer& w) {
      for (uint32_t q = 0; q < o.queues; ++q)
        metrics::add_rxq(w, rxqs[q].stats(),
                         {{"queue", std::to_string(q)}, {"gpu", gpu_ids[owner[q]]}, {"backend", rx_backend}});
      for (size_t i = 0; i < shards.size(); ++i) {
        const metrics::Labels gpu_label{{"gpu", gpu_ids[i]}};
        if (shards[i].txq)
          metrics::add_txq(w, shards[i].txq->stats(),
                           {{"queue", std::to_string(i)}, {"gpu", gpu_ids[i]}, {"backend", tx_backend}});
        if (shards[i].capture_txq)
          metrics::add_txq(w, shards[i].capture_txq->stats(),
                           {{"queue", "capture" + std::to_string(i)}, {"gpu", gpu_ids[i]}, {"backend", "pcapng-out"}});
        metrics::add_kernel(w, shards[i].kernel.counters(), shards[i].kernel.health(), gpu_label);
        app::add_app_counters(w, shards[i].live_counters(), gpu_label);
      }
      if (run_export) run_export->write_metrics(w);
    };
    auto started = metrics::Server::start(o.metrics, collect, {o.metrics_allow_remote});
    if (!started) return fail("starting the metrics server on " + o.metrics, started.status());
    server = std::move(*started);
    std::printf("metrics http://%s/metrics\n", server.address().c_str());
    logging::info("metrics", "serving http://" + server.address() + "/metrics");
  }
  std::fflush(stdout);

  RunResult result;
  for (GpuShard& sh : shards)
    for (size_t pos = 0; pos <= o.print.size();) {
      const size_t comma = std::min(o.print.find(',', pos), o.print.size());
      const std::string what = o.print.substr(pos, comma - pos);
      sh.reader.print_dns |= what == "dns";
      sh.reader.print_http |= what == "http";
      sh.reader.print_tls |= what == "tls" || what == "sni";
      pos = comma + 1;
    }
  // While the run goes the export has a thread of its own (export_thread.hpp):
  // this one hands it what it drains.
  ExportThread export_thread;
  bool exporting = false;
  auto drain_records = [&] {
    const size_t before = result.records.size();
    for (GpuShard& sh : shards) sh.reader.drain(result.records);
    if (!run_export) return;
    const Record* added = result.records.data() + before;
    const size_t n = result.records.size() - before;
    if (exporting)
      export_thread.hand(added, n);
    else
      run_export->add_records(added, n);
    for (GpuShard& sh : shards)
      if (sh.evicted_host.items != nullptr)
        sh.evictions.drain(sh.evicted_host, [&](const FlowEntry& e) {
          if (exporting)
            export_thread.hand_evicted(e);
          else
            run_export->add_evicted(e);
        });
  };
  // Every GPU's flow table now, one span each (copies in `buffers` where the
  // host cannot address the table).
  auto flow_tables = [&](std::vector<std::vector<FlowEntry>>& buffers) -> Result<std::vector<std::span<const FlowEntry>>> {
    buffers.resize(shards.size());
    std::vector<std::span<const FlowEntry>> t;
    for (size_t i = 0; i < shards.size(); ++i) {
      auto table = shards[i].flows_now(buffers[i]);
      if (!table) return table.status();
      t.push_back(*table);
    }
    return t;
  };
  std::vector<std::vector<FlowEntry>> flow_buffers;  // the polling thread's copies
  auto all_flows = [&]() -> Result<std::vector<FlowEntry>> {
    auto tables = flow_tables(flow_buffers);
    if (!tables) return tables.status();
    std::vector<FlowEntry> f;
    for (std::span<const FlowEntry> table : *tables) {
      auto part = app::sorted_flows(table.data(), static_cast<uint32_t>(table.size()));
      f.insert(f.end(), part.begin(), part.end());
    }
    return shards.size() == 1 ? f : app::sorted_flows(f.data(), static_cast<uint32_t>(f.size()));
  };
  app::FlowExport flow_export;
  if (!o.flows_out.empty()) {
    auto f = app::FlowExport::open(o.flows_out);
    if (!f) return fail("opening the flow export", f.status());
    flow_export = std::move(*f);
  }

  if (run_export) {
    export_thread.start(*run_export, flow_tables, 1s);
    exporting = true;
  }

  // The one polling place: records, progress, flow snapshots, stop checks.
  auto last_progress = start, last_flows = start;
  app::StopReason stop_reason = app::StopReason::EndOfInput;
  for (;;) {
    drain_records();
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
    if (o.count > 0 && totals().packets >= o.count) {
      stop_reason = app::StopReason::Count;
      break;
    }
    if (o.flows_interval_s > 0 && std::chrono::duration<double>(now - last_flows).count() >= o.flows_interval_s) {
      auto flows = all_flows();
      if (!flows) return fail("reading the flow tables for --flows-interval", flows.status());
      flow_export.snapshot(*flows, elapsed);
      last_flows = now;
    }
    if (tty && now - last_progress >= 250ms) {
      const KernelTotals t = totals();
      const std::vector<uint64_t> live = summed_counters();
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
    // No more frames from the sources; the kernels finish what was published.
    for (EthRxq& q : rxqs)
      if (Status s = q.stop_source(); !s) return fail("stopping the source of an RX queue", s);
    const auto deadline = std::chrono::steady_clock::now() + kDrainTimeout;
    bool drained = false;
    while (!(drained = std::all_of(rxqs.begin(), rxqs.end(), [](const EthRxq& q) { return q.at_end(); })) &&
           std::chrono::steady_clock::now() < deadline) {
      drain_records();
      std::this_thread::sleep_for(1ms);
    }
    if (!drained)
      logging::warn("run", "the kernel did not release every published packet within " +
                               std::to_string(kDrainTimeout.count()) + " ms of the stop; stopping it anyway (see "
                               "left_in_ring in the summary)");
  }
  // Every GPU's kernel is stopped, also when one of them stalls: the others drain.
  Status stopped;
  for (GpuShard& sh : shards)
    if (Status s = sh.kernel.stop(); !s) {
      for (const BlockHealth& h : sh.kernel.health())
        std::fprintf(stderr, "gnio run packet-processing: %s block %u: heartbeat %llu, age %.3f s, stage %s%s\n",
                     sh.gpu.bus_id().c_str(), h.block, (unsigned long long)h.heartbeat,
                     std::chrono::duration<double>(h.heartbeat_age).count(), h.stage_name.c_str(),
                     h.exited ? ", exited" : h.hung ? ", HUNG" : "");
      if (stopped) stopped = Status(s.code(), s.layer(), "on " + sh.gpu.bus_id() + ": " + s.message());
    }
  drain_records();
  export_thread.stop();
  exporting = false;
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
  if (!stopped) return fail("stopping the kernel", stopped);
  for (const GpuShard& sh : shards) {
    const uint64_t claimed = *static_cast<const uint64_t*>(sh.claim.host_ptr());
    result.records_lost += claimed - sh.reader.ring.next - sh.live_counters()[app::counter::kRecordsDropped];
  }
  result.kernel = totals();

  // Every GPU handle goes before the queues under it: a queue exposed to a
  // GPU does not stop. Then TX stops (flushing pcap-out), then RX, so that
  // the RX counters are final: offered == delivered + dropped exactly.
  for (GpuShard& sh : shards)
    if (Status s = sh.release_handles(); !s) return fail("releasing the GPU handles of " + sh.gpu.bus_id(), s);
  // A TX output that cannot be written (pcap-out on a full disk) is
  // reported with the others below; the queue is stopped all the same.
  Status tx_flushed;
  for (GpuShard& sh : shards)
    if (sh.txq) {
      if (Status s = sh.txq->stop(); !s && tx_flushed) tx_flushed = s;
      result.tx += sh.txq->stats();
    }
  // The capture's writer takes what the kernel pushed (or counts it as dropped).
  Status capture_written;
  for (GpuShard& sh : shards)
    if (sh.capture_txq) {
      if (Status s = sh.capture_txq->stop(kCaptureStopTimeoutMs); !s && capture_written) capture_written = s;
      result.capture += sh.capture_txq->stats();
    }
  // The engines see the kernel's last releases a moment after it made them.
  for (auto deadline = std::chrono::steady_clock::now() + 2s; std::chrono::steady_clock::now() < deadline;) {
    uint64_t released = 0;
    for (const EthRxq& q : rxqs) released += q.stats().released;
    if (released >= result.kernel.packets + summed_counters()[app::counter::kFiltered]) break;
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
  result.counters = summed_counters();
  auto flows = all_flows();
  if (!flows) return fail("reading the flow tables at the end of the run", flows.status());
  result.flows = std::move(*flows);
  if (run_export) {
    uint64_t evictions_lost = 0;
    for (const GpuShard& sh : shards) evictions_lost += sh.evictions.lost;
    run_export->scan({std::span<const FlowEntry>(result.flows)}, true);
    run_export->set_evictions_lost(evictions_lost);
    run_export->finish(2000);
    result.exported = run_export->summary();
  }
  for (const GpuShard& sh : shards) {
    app::GpuPart part;
    part.gpu = sh.gpu.bus_id();
    part.device = sh.gpu.emulated() ? "emulated" : sh.gpu.info().name;
    part.emulated = sh.gpu.emulated();
    part.queues = sh.queues;
    part.blocks = sh.kernel.config().grid;
    part.kernel = sh.kernel.totals();
    part.counters.assign(sh.live_counters(), sh.live_counters() + app::counter::kCount);
    result.gpus.push_back(std::move(part));
  }
  result.info.rx = o.rx;
  result.info.tx = o.tx;
  result.info.gpu = gpu_ids.size() == 1 ? gpu_id : o.gpu;
  result.info.device = result.gpus.front().device;
  result.info.emulated = result.gpus.front().emulated;
  result.info.queues = o.queues;
  result.info.filter = o.filter;
  result.info.capture = o.capture;
  result.info.decap = app::decap_text(args.decap);
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
  report("writing --capture " + o.capture + " (the summary and the report count what was written and dropped)",
         capture_written);

  // Tear down in reverse; the report carries the capability snapshot of this
  // run's NIC spec and GPU: the one taken at start, else one taken now (it
  // opens both itself, so after they are closed).
  for (GpuShard& sh : shards) {
    sh.kernel = PersistentKernel();
    if (sh.txq) report("tearing down TX queue of " + sh.gpu.bus_id(), sh.txq->destroy());
    if (sh.capture_txq) report("tearing down the capture queue of " + sh.gpu.bus_id(), sh.capture_txq->destroy());
  }
  for (EthRxq& q : rxqs) report("tearing down an RX queue", q.destroy());
  shards.clear();
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

}  // namespace gnio::cli
