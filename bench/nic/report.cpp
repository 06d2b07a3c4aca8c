// SPDX-License-Identifier: Apache-2.0
// nic_bench's output: the table, one row per receiver and size, each with
// its ratio to its size's base, its drops by reason, what bounded it and
// whether its accounting is exact; and the same counts as JSON.
#include <algorithm>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "../common/table.hpp"

using namespace gnio;
using bench::fmt;

namespace nic_bench {
namespace {

nlohmann::json to_json(const Row& r, const std::vector<Row>& rows) {
  nlohmann::json drops = nlohmann::json::object();
  for (size_t i = 0; i < kDropReasons; ++i)
    drops[std::string("gnio_") + std::string(drop_reason_name(static_cast<DropReason>(i)))] = r.gnio_dropped[i];
  drops["xsk_no_fill_frame"] = r.kernel.xsk_no_fill_frame;
  drops["xsk_rx_ring_full"] = r.kernel.xsk_rx_ring_full;
  drops["af_packet_ring_full"] = r.kernel.packet_ring_full;
  drops["socket_queue_full"] = r.socket_dropped;
  drops["veth_silent"] = r.veth_silent_drops;
  drops["tool_missed"] = r.tool_dropped;
  const Row* base = ratio_base(rows, r.size);
  const double ratio = base && r.measured() ? bench::ratio(r.mpps(), base->mpps()) : 0;
  return {{"receiver", r.receiver}, {"spec", r.spec},       {"size", r.size},
          {"status", r.status},     {"baseline", r.is_baseline}, {"tool", r.tool},
          {"sent", r.send.sent},    {"refused", r.send.refused}, {"seconds", r.send.seconds},
          {"received", r.received}, {"received_bytes", r.received_bytes}, {"window_received", r.window_received},
          {"drops", drops},         {"drops_total", r.drops()}, {"xsk_sockets", r.kernel.xsk_sockets},
          {"mpps", r.mpps()},       {"sender_mpps", r.sender_mpps()}, {"limited_by", limited_by(r, rows)},
          {"ratio_base", base ? base->receiver : ""}, {"vs_baseline", ratio}};
}

}  // namespace

void print_table(const std::vector<Row>& rows) {
  std::vector<uint32_t> sizes;
  for (const Row& r : rows)
    if (std::find(sizes.begin(), sizes.end(), r.size) == sizes.end()) sizes.push_back(r.size);
  for (uint32_t size : sizes) {
    const Row* base = ratio_base(rows, size);
    std::printf("vs baseline at %u B: %s\n", size,
                base ? ("ratio to '" + base->receiver + "' (" + (base->tool.empty() ? "no tool baseline measured, the "
                                                                                       "bench's own socket" :
                                                                                       "the fastest tool") + ")")
                           .c_str()
                     : "no baseline measured");
  }
  std::printf("\n");
  bench::print_header({"receiver", "size", "sent (Mpps)", "received (Mpps)", "Gbit/s", "vs baseline", "drops (by reason)",
                       "limited by", "accounting"},
                      "lrrrrrlll");
  for (const Row& r : rows) {
    if (!r.measured()) {
      bench::print_row({r.receiver, std::to_string(r.size) + " B", "", "", "", "", "", r.status, ""});
      continue;
    }
    const Row* b = ratio_base(rows, r.size);
    const double base = b ? b->mpps() : 0;
    bench::print_row({r.receiver, std::to_string(r.size) + " B", fmt("%.3f", r.sender_mpps()), fmt("%.3f", r.mpps()),
                      fmt("%.2f", r.gbps()), base > 0 ? fmt("%.2fx", r.mpps() / base) : "", drops_text(r),
                      limited_by(r, rows),
                      r.accounted() ? "exact"
                                    : "off by " + std::to_string(static_cast<int64_t>(r.send.sent) -
                                                                 static_cast<int64_t>(r.received + r.drops()))});
  }
}

void write_json(const std::string& path, const std::string& machine_line, const Bench& b,
                const std::vector<Row>& rows) {
  nlohmann::json j = {
      {"machine", machine_line}, {"senders", b.senders}, {"seconds", b.o.seconds}, {"rows", nlohmann::json::array()}};
  for (const Row& r : rows) j["rows"].push_back(to_json(r, rows));
  std::ofstream(path) << j.dump(2) << "\n";
}

}  // namespace nic_bench
