// SPDX-License-Identifier: Apache-2.0
// obs_runner: a small stand-in for `gnio run` that the observability tests
// drive: a persistent kernel receives from every RX queue of a spec, with the
// /metrics endpoint, hang detection, the capability snapshot and the
// stop-signal handling a real run has. --stall-after makes a block stop its
// heartbeat on purpose (while holding a burst) to test hang detection.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>
#include <vector>

#include "gnio/capabilities.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/log.hpp"
#include "gnio/metrics.hpp"
#include "gnio/persistent_kernel.hpp"
#include "gnio/stop_signal.hpp"
#include "stage_kernel.hpp"

using namespace gnio;
using gnio::obs_test::StageKernel;
using gnio::obs_test::kMaxQueues;

namespace {

struct Options {
  std::string nic, gpu = "cpu", metrics, snapshot_dir, log_level;
  uint32_t burst = 32, strides = 1024, hang_timeout_ms = 0, duration_s = 0;
  uint64_t stall_after = 0;
  bool linger = false, allow_remote = false, stall_ignores_exit = false;
};

int fail(const Status& s) {
  std::fprintf(stderr, "obs_runner: %s\n", s.to_string().c_str());
  return 2;
}

int run(const Options& o) {
  if (!o.log_level.empty()) {
    auto lvl = logging::parse_level(o.log_level);
    if (!lvl) return fail(lvl.status());
    logging::set_level(*lvl);
  }
  StopSignal::install();
  if (!o.snapshot_dir.empty()) {
    const std::string path = o.snapshot_dir + "/caps-" + std::to_string(::time(nullptr)) + "-" +
                             std::to_string(::getpid()) + ".json";
    std::ofstream out(path);
    out << to_json(discover(o.nic, o.gpu)) << "\n";
    if (!out) return fail({Errc::IoError, Layer::App, "cannot write the capability snapshot " + path});
    std::printf("snapshot %s\n", path.c_str());
  }
  auto gpu = Gpu::open(o.gpu);
  if (!gpu) return fail(gpu.status());
  auto dev = EthDevice::open(o.nic);
  if (!dev) return fail(dev.status());
  const uint32_t nq = std::min<uint32_t>(dev->caps().max_rx_queues, kMaxQueues);
  std::vector<EthRxq> rxqs;
  std::vector<GpuRxq> handles;
  StageKernel k{};
  for (uint32_t id = 0; id < nq; ++id) {
    auto q = dev->create_rxq(static_cast<uint16_t>(id));
    if (!q) return fail(q.status());
    for (Status s : {q->set_num_strides(o.strides), q->set_burst_size(o.burst), q->set_gpu(*gpu), q->start()})
      if (!s) return fail(s);
    auto h = GpuRxq::create(*gpu, *q);
    if (!h) return fail(h.status());
    k.rxq[id] = h->handle();
    rxqs.push_back(std::move(*q));
    handles.push_back(std::move(*h));
  }
  k.nq = nq;
  k.burst = o.burst;
  k.stall_after = o.stall_after;
  k.stall_ignores_exit = o.stall_ignores_exit;

  LaunchConfig cfg;
  cfg.grid = nq;
  cfg.block = 1;
  cfg.name = "obs_runner";
  cfg.stage_names = {"start", "receive", "process", "release"};
  cfg.hang_timeout = std::chrono::milliseconds(o.hang_timeout_ms);
  cfg.has_work = [&rxqs, nq](uint32_t b) {
    const RxqStats s = rxqs[b % nq].stats();
    return s.packets > s.released;
  };
  auto kernel = obs_test::launch_stage_kernel(*gpu, cfg, k);
  if (!kernel) return fail(kernel.status());

  const std::string backend = dev->caps().driver;
  metrics::Server server;
  if (!o.metrics.empty()) {
    auto collect = [&](metrics::Writer& w) {
      for (uint32_t id = 0; id < nq; ++id)
        metrics::add_rxq(w, rxqs[id].stats(),
                         {{"queue", std::to_string(id)}, {"gpu", gpu->bus_id()}, {"backend", backend}});
      metrics::add_kernel(w, kernel->counters(), kernel->health(), {{"gpu", gpu->bus_id()}});
    };
    auto s = metrics::Server::start(o.metrics, collect, {o.allow_remote});
    if (!s) return fail(s.status());
    server = std::move(*s);
    std::printf("metrics http://%s/metrics\n", server.address().c_str());
  }
  // From here a signal reaches StopSignal's handler (installed above) with
  // the kernel running: tests wait for this line before they signal.
  std::printf("running\n");
  std::fflush(stdout);

  const auto t0 = std::chrono::steady_clock::now();
  auto all_at_end = [&] {
    return std::all_of(rxqs.begin(), rxqs.end(), [](const EthRxq& q) { return q.at_end(); });
  };
  bool said_drained = false;
  while (!StopSignal::wait_for(std::chrono::milliseconds(20))) {
    if (o.duration_s && std::chrono::steady_clock::now() - t0 >= std::chrono::seconds(o.duration_s)) break;
    if (all_at_end()) {
      if (!o.linger) break;
      if (!said_drained) {
        std::printf("drained\n");
        std::fflush(stdout);
        said_drained = true;
      }
    }
  }
  if (StopSignal::requested()) {
    std::printf("stopping (signal %d)\n", StopSignal::signal_number());
    std::fflush(stdout);
  }
  // The sources stop first: offered is then final and equals delivered +
  // dropped while the engines go on publishing and reclaiming.
  for (EthRxq& q : rxqs)
    if (Status s = q.stop_source(); !s) return fail(s);
  Status stopped = kernel->stop();
  server.stop();
  // The engines see the last releases a moment after the kernel made them.
  const uint64_t kernel_packets = kernel->totals().packets;
  for (int i = 0; i < 500; ++i) {
    uint64_t released = 0;
    for (const EthRxq& q : rxqs) released += q.stats().released;
    if (released >= kernel_packets) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  RxqStats total;
  for (const EthRxq& q : rxqs) {
    const RxqStats s = q.stats();
    total.offered += s.offered;
    total.packets += s.packets;
    total.bytes += s.bytes;
    total.released += s.released;
    total.errors += s.errors;
    for (size_t r = 0; r < kDropReasons; ++r) total.dropped[r] += s.dropped[r];
  }
  uint64_t dropped = 0;
  for (uint64_t d : total.dropped) dropped += d;
  const KernelTotals kt = kernel->totals();
  std::printf("summary: offered=%llu delivered=%llu bytes=%llu dropped=%llu ring_full=%llu malformed=%llu "
              "released=%llu left_in_ring=%llu errors=%llu kernel_packets=%llu signal=%d\n",
              (unsigned long long)total.offered, (unsigned long long)total.packets,
              (unsigned long long)total.bytes, (unsigned long long)dropped,
              (unsigned long long)total.dropped[static_cast<size_t>(DropReason::RingFull)],
              (unsigned long long)total.dropped[static_cast<size_t>(DropReason::Malformed)],
              (unsigned long long)total.released, (unsigned long long)(total.packets - total.released),
              (unsigned long long)total.errors,
              (unsigned long long)kt.packets, StopSignal::signal_number());
  std::fflush(stdout);
  if (!stopped) return fail(stopped);
  for (GpuRxq& h : handles) h.destroy();
  for (EthRxq& q : rxqs) q.destroy();
  for (const EthRxq& q : rxqs)
    if (Status s = q.source_status(); !s) return fail(s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"obs_runner: a persistent kernel on an RX spec with metrics, hang detection and clean stop"};
  app.add_option("--nic", o.nic, "RX spec")->required();
  app.add_option("--gpu", o.gpu, "GPU bus id or cpu")->capture_default_str();
  app.add_option("--metrics", o.metrics, "serve /metrics on HOST:PORT");
  app.add_flag("--metrics-allow-remote", o.allow_remote, "allow a non-loopback metrics address");
  app.add_option("--hang-timeout", o.hang_timeout_ms, "ms without a heartbeat before a block is hung (0: off)");
  app.add_option("--stall-after", o.stall_after, "a block stops beating after this many packets (0: never)");
  app.add_flag("--stall-ignores-exit", o.stall_ignores_exit, "the stalled block ignores the exit flag too");
  app.add_option("--duration", o.duration_s, "stop after this many seconds (0: when the source ends)");
  app.add_flag("--linger", o.linger, "keep serving after the source ended, until SIGINT/SIGTERM");
  app.add_option("--snapshot-dir", o.snapshot_dir, "save the capability snapshot of the start here");
  app.add_option("--log-level", o.log_level, "error|warn|info|debug|trace");
  app.add_option("--burst", o.burst, "packets per receive");
  app.add_option("--strides", o.strides, "RX ring strides");
  CLI11_PARSE(app, argc, argv);
  return run(o);
}
