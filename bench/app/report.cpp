// SPDX-License-Identifier: Apache-2.0
// app_bench's output and checks: the table of median runs with the verdict
// on the target, the spread of the runs, exact counts for every run, and
// the host core's counters against the kernels', counter by counter.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "sections.hpp"
#include "../common/machine.hpp"
#include "../common/table.hpp"

using namespace gnio;
namespace da = gnio::dev::app;
using bench::fmt;

namespace app_bench {
namespace {

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

double ratio(const Measured& m, const Measured& base) { return bench::ratio(m.mpps(), base.mpps()); }

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

}  // namespace

bool print_report(const Gpu& gpu, const Options& o, const std::vector<TrafficResult>& results,
                  const std::string& legend) {
  bool ok = true;
  std::printf("\nmachine: %s\n", bench::machine(gpu).c_str());
  std::printf("setup: %u queue(s), %u block(s), ring mem=%s, %u strides of 2048 B, burst %u, %u threads per block%s, %u run(s) "
              "of each kernel row (the median shown); target: the packet-processing kernel keeps >= %.2f of "
              "receive-only\n",
              o.queues, std::max(o.blocks, o.queues), o.mem.c_str(), o.strides, o.burst, gpu.emulated() ? 1u : o.block,
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
  // The filter's cost and the capture's write rate, against receive-only of the same traffic.
  for (const TrafficResult& r : results) {
    if (r.extra.empty()) continue;
    std::printf("\nfilter and capture, %s (one run each; ratio to the median receive-only run above)\n"
                "long filter: %s\ncapture: every packet, pcapng-out: in the temporary folder (rotate=256M,files=2), "
                "capture ring of 4096 descriptors\n",
                r.traffic.name.c_str(), kLongFilter);
    bench::print_header({"variant", "packets", "Mpps", "vs receive-only", "matched", "filtered", "written",
                         "dropped", "written pkt/s", "written MB/s"},
                        "lrrrrrrrrr");
    for (const auto& [v, m] : r.extra) {
      const bool capture = v == Variant::Capture;
      const double ws = m.write_seconds > 0 ? m.write_seconds : 0;
      bench::print_row({variant_name(v), std::to_string(m.packets), fmt("%.3f", m.mpps()), fmt("%.3f", ratio(m, r.base)),
                        capture ? "–" : std::to_string(m.matched), capture ? "–" : std::to_string(m.filtered),
                        capture ? std::to_string(m.written) : "–", capture ? std::to_string(m.capture_dropped) : "–",
                        capture && ws > 0 ? fmt("%.0f", m.written / ws) : "–",
                        capture && ws > 0 ? fmt("%.1f", m.written_bytes / ws / 1e6) : "–"});
      if (!m.error.empty()) {
        std::printf("error: %s, %s: %s\n", r.traffic.name.c_str(), variant_name(v), m.error.c_str());
        ok = false;
      }
    }
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

bool print_scaling(const ScalingResult& s, const Measured& receive_only) {
  bool ok = true;
  std::printf("\ncompute-heavy: receive-only plus %u passes of FNV-1a over every byte of each 64 B packet, one queue, "
              "bursts as above; target: >= %.2f of linear from one block until receive-only (%.3f Mpps, the table's "
              "64 B baseline) bounds it\n",
              s.rounds, kScalingTarget, receive_only.mpps());
  bench::print_header({"blocks", "packets", "Mpps", "vs linear", "vs receive-only", "digest", "target met"},
                      "rrrrrll");
  const double one = s.rows.empty() ? 0 : s.rows.front().m.mpps();
  for (const ScalingRow& r : s.rows) {
    // The verdict reads the ratios as printed (3 decimals), so that it never
    // contradicts the row it stands in.
    const double linear = std::round(bench::ratio(r.m.mpps(), one * r.blocks) * 1000) / 1000;
    const double bound = std::round(bench::ratio(r.m.mpps(), receive_only.mpps()) * 1000) / 1000;
    const bool digest_ok = r.m.error.empty() && r.m.digest == r.expected_digest;
    std::string verdict = linear >= kScalingTarget ? "yes"
                          : bound >= kScalingTarget ? "yes (receive-only bounds it)"
                                                    : "NO";
    if (!r.m.error.empty()) verdict = "NO: not measured";
    bench::print_row({std::to_string(r.blocks), std::to_string(r.m.packets), fmt("%.3f", r.m.mpps()),
                      fmt("%.3f", linear), fmt("%.3f", bound), digest_ok ? "equal to the host's" : "DIFFERS",
                      verdict});
    if (!r.m.error.empty()) {
      std::printf("error: compute-heavy, %u block(s): %s\n", r.blocks, r.m.error.c_str());
      ok = false;
    } else if (!digest_ok) {
      std::printf("error: compute-heavy, %u block(s): digest %llu, the host's %llu over the same packets\n", r.blocks,
                  static_cast<unsigned long long>(r.m.digest), static_cast<unsigned long long>(r.expected_digest));
      ok = false;
    }
  }
  return ok;
}

}  // namespace app_bench
