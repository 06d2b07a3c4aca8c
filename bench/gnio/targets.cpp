// SPDX-License-Identifier: Apache-2.0
// The targets of a full run, each read off the rows against its bound.
#include <algorithm>
#include <utility>

#include "sections.hpp"
#include "../common/table.hpp"

using gnio::RingMem;
using gnio::bench::fmt;
using gnio::bench::ratio;

namespace gnio_bench {

std::vector<Target> read_targets(const Floors& f, const std::vector<Row>& ceilings, const std::vector<Row>& gnio_rows,
                                 const std::vector<Row>& anti, const std::vector<Row>& echoes) {
  // The fastest gnio row of `size` and ring memory `m` over at most `max_queues` queues.
  auto best = [&](uint32_t size, RingMem m, bool prebuilt, uint32_t max_queues) {
    const Row* b = nullptr;
    for (const Row& g : gnio_rows)
      if (g.size == size && g.queues <= max_queues && g.name.find(std::string("mem=") + mem_name(m)) != std::string::npos &&
          (g.name.find("gnio mem:") != std::string::npos) == prebuilt && (!b || g.mpps() > b->mpps()))
        b = &g;
    return b ? *b : Row{};
  };
  std::vector<Target> targets;
  for (RingMem m : {RingMem::Host, RingMem::Gpu}) {
    const double r = ratio(best(64, m, true, 1).mpps(), ceiling_of(ceilings, 64, m).mpps());
    targets.push_back({std::string("64 B, one engine thread, mem=") + mem_name(m) + ", vs the ceiling", fmt("%.2f", r),
                       ">= 0.50", r >= 0.5});
  }
  {
    const Row h = best(64, RingMem::Host, true, 4), g = best(64, RingMem::Gpu, true, 4);
    const Row& b = h.mpps() >= g.mpps() ? h : g;
    targets.push_back({"64 B with <= 4 engine threads (best of mem=host/gpu)",
                       fmt("%.1f Mpps", b.mpps()) + " (" + std::to_string(b.queues) + " queues)", ">= 148.8 Mpps",
                       b.mpps() >= 148.8});
  }
  for (auto [size, goal] : {std::pair{1500u, 0.70}, std::pair{8000u, 0.85}}) {
    const Row g = best(size, RingMem::Gpu, true, 8);
    const double r = ratio(g.gbps(), f.h2d_gbit());
    targets.push_back({std::to_string(size) + " B into GPU memory from backend-owned memory, vs the H2D floor",
                       fmt("%.2f", r) + fmt(" (%.1f Gbit/s, ", g.gbps()) + std::to_string(g.queues) + " queues)",
                       fmt(">= %.2f", goal), r >= goal});
  }
  {
    const Row g = best(8000, RingMem::Host, true, 8);
    const double r = ratio(g.gbps(), f.pinned_read_gbit());
    targets.push_back({"mem=host, kernel reads 8000 B frames in place, vs the pinned-read floor",
                       fmt("%.2f", r) + fmt(" (%.1f Gbit/s, ", g.gbps()) + std::to_string(g.queues) + " queues)",
                       ">= 0.70", r >= 0.7});
  }
  {
    const Row h = best(64, RingMem::Host, true, 1), g = best(64, RingMem::Gpu, true, 1);
    const double persistent = std::max(h.mpps(), g.mpps());
    for (size_t i : {size_t{0}, size_t{1}}) {
      const double v = ratio(persistent, anti[i].mpps());
      const double goal = i == 0 ? 50 : 3;
      targets.push_back({"persistent (64 B, 1 queue, mem:) vs " + anti[i].name.substr(anti[i].name.find(':') + 2),
                         fmt("%.1fx", v), fmt(">= %.0fx", goal), v >= goal});
    }
  }
  {
    // echoes: host, gpu (back-off), then host, gpu (busy poll)
    const Row& best_host = echoes[2].ratio > 0 && echoes[2].ratio < echoes[0].ratio ? echoes[2] : echoes[0];
    targets.push_back({"echo round trip p50, mem=host, vs the doorbell round trip (best poll mode)",
                       fmt("%.1fx", best_host.ratio) + fmt(" (%.1f us", best_host.ratio * f.doorbell_us) +
                           (best_host.name.find("busy") != std::string::npos ? ", busy poll)" : ", back-off)"),
                       "<= 3x", best_host.ratio > 0 && best_host.ratio <= 3});
  }
  return targets;
}

}  // namespace gnio_bench
