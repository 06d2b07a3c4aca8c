// SPDX-License-Identifier: Apache-2.0
// gnio_bench's output: the machine line, the setup, one row per measurement
// and, after a full run, the targets.
#include <cstdio>

#include "sections.hpp"
#include "../common/table.hpp"

using gnio::bench::fmt;

namespace gnio_bench {

void print_table(const std::string& machine_line, const Options& o, const std::vector<Row>& rows,
                 const std::vector<Target>& targets) {
  std::printf("\nmachine: %s\n", machine_line.c_str());
  std::printf("window per throughput row: %.2f s%s; bursts of %u, %u threads per block, %u blocks per RX queue\n\n",
              o.window_s, o.quick ? " (--quick)" : "", o.burst, o.block, o.blocks_per_queue);
  gnio::bench::print_header({"row", "size B", "queues", "packets", "Mpps", "Gbit/s", "result", "bound", "ratio", "ok"},
                            "lrrrrrllrl");
  auto number_or_dash = [](uint64_t v) { return v ? std::to_string(v) : "–"; };
  for (const Row& r : rows) {
    const bool rate = r.seconds > 0;
    const bool bound = !r.bound.empty();
    gnio::bench::print_row({r.name, number_or_dash(r.size), number_or_dash(r.queues), number_or_dash(r.packets), rate ? fmt("%.3f", r.mpps()) : "–",
                            rate ? fmt("%.2f", r.gbps()) : "–", r.result.empty() ? "–" : r.result,
                            bound ? r.bound : "–", bound ? fmt("%.3f", r.ratio) : "–", r.ok ? "yes" : "NO"});
  }
  if (o.partial()) {
    std::printf("\ntargets: not read (a partial run: --only, --sizes or --queue-counts)\n");
    return;
  }
  std::printf("\n");
  gnio::bench::print_header({"target", "measured", "goal", "met"}, "llll");
  for (const Target& t : targets) gnio::bench::print_row({t.what, t.measured, t.goal, t.met ? "yes" : "no"});
}

}  // namespace gnio_bench
