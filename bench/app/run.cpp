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
// At 64 B also: receive-only with a short and a long tcpdump filter (the
// filter's cost), and the application recording every packet with
// --capture's path to a pcapng file (the writer's sustained rate, drops
// counted), each with its ratio to receive-only of the same run. Then the
// compute-heavy rows: one queue, 1, 2, 4, ... blocks, each packet hashed
// --compute-rounds times, against linear scaling from one block.
// Every row must move exactly the N frames offered, and the host core's
// counters must equal the kernel's for the same frames. With --repeat R
// each kernel row runs R times (interleaved, so that drift hits every
// variant alike); the table shows the median run and a second table the
// spread.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sections.hpp"
#include "../common/clock.hpp"
#include "gpu_choice.hpp"

using namespace gnio;
using bench::Clock;
using bench::secs_since;

namespace app_bench {
namespace {

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

}  // namespace

int run(Options o) {
  if (o.queues == 0 || o.queues > kMaxQueues) {
    std::fprintf(stderr, "error: --queues %u is out of range 1..%u\n", o.queues, kMaxQueues);
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
  if (o.compute_rounds == 0) o.compute_rounds = gpu->emulated() ? 4 : 20;
  if (o.quick) o.scaling_blocks = std::min(o.scaling_blocks, 4u);
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
    TrafficResult r{t, {}, {}, {}, {}, {}, {}, {}, {}};
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
    if (&t == &traffics.front())
      for (Variant v : {Variant::FilterShort, Variant::FilterLong, Variant::Capture}) {
        r.extra.emplace_back(v, run_device(*gpu, o, t, v));
        progress(variant_name(v), r.extra.back().second);
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
  // The compute-heavy rows. The ring holds every block's burst twice over,
  // so that no block waits for room.
  ScalingResult scaling{o.compute_rounds, {}};
  const uint64_t per_block = o.quick ? 20'000 : 1'000'000;
  auto img = frame_image(traffics.front());
  for (uint32_t blocks = 1; blocks <= o.scaling_blocks && img; blocks *= 2) {
    Options so = o;
    so.queues = 1;
    so.blocks = blocks;
    const uint32_t room = std::bit_ceil(2 * blocks * o.burst);
    so.strides = std::max(o.strides, room);
    so.ring = std::max(o.ring, room);
    const Traffic t{traffics.front().name, traffics.front().frames, per_block * blocks};
    ScalingRow row{blocks, expected_digest(*img, t.packets, o.compute_rounds),
                   run_device(*gpu, so, t, Variant::ComputeHeavy)};
    std::fprintf(stderr, "compute-heavy, %u block(s): %llu of %llu packets finished, %.2f s%s%s\n", blocks,
                 static_cast<unsigned long long>(row.m.packets), static_cast<unsigned long long>(t.packets),
                 row.m.seconds, row.m.error.empty() ? "" : ": ", row.m.error.c_str());
    scaling.rows.push_back(std::move(row));
  }
  std::filesystem::remove(*mix);
  bool ok = print_report(*gpu, o, results, legend);
  if (!img) {
    std::printf("error: the compute-heavy rows' frames: %s\n", img.status().to_string().c_str());
    ok = false;
  } else if (!scaling.rows.empty()) {
    ok = print_scaling(scaling, results.front().base) && ok;
  }
  std::printf("\nwall time: %.1f s\n", secs_since(started));
  return ok ? 0 : 1;
}

}  // namespace app_bench
