// SPDX-License-Identifier: Apache-2.0
#include "packet_processing/metrics.hpp"

#include "packet_processing/pp_kernel.hpp"
#include "packet_processing/report.hpp"

namespace gnio::app {

void add_app_counters(metrics::Writer& w, const uint64_t* c, const metrics::Labels& base) {
  using namespace gnio::dev::app;
  auto with = [&](const char* key, const char* value) {
    metrics::Labels l = base;
    l.emplace_back(key, value);
    return l;
  };
  for (uint32_t k = 0; k < kProtoCount; ++k)
    w.counter("gnio_pp_protocol_packets_total", "Packets that carry a protocol, as classified on the GPU",
              with("protocol", kProtoNames[k]), c[counter::kProto + k]);
  for (uint32_t k = 1; k < kReplyCount; ++k)
    w.counter("gnio_pp_replies_total", "Replies the TX queue accepted, zero-copy from the RX buffer", with("kind", kReplyNames[k]),
              c[counter::kReply + k]);
  w.counter("gnio_pp_replies_not_sent_total",
            "Replies built but not sent (stopping while the TX ring was full, or refused as too long)", base,
            c[counter::kReply + kReplyNone]);
  w.counter("gnio_pp_echo_refused_total", "Echo requests not answerable: cut, malformed or behind a routing header",
            base, c[counter::kEchoRefused]);
  for (uint32_t k = 1; k < kReasonCount; ++k)
    w.counter("gnio_pp_malformed_total", "Packets found malformed or cut, by reason", with("reason", kReasonNames[k]),
              c[counter::kReason + k]);
  for (uint32_t t = 1; t < kTunnelCount; ++t)
    w.counter("gnio_pp_tunnel_packets_total", "Packets whose tunnel header --decap opens was found, by tunnel type",
              with("tunnel", kTunnelNames[t]), c[counter::kTunnel + t]);
  w.counter("gnio_pp_filtered_total", "Packets the --filter program rejected, released unanalysed", base,
            c[counter::kFiltered]);
  for (uint32_t k = 0; k < kCaptureOutcomes; ++k)
    w.counter("gnio_pp_capture_packets_total",
              "Matched packets offered to --capture, by outcome: recorded, cut (recorded, cut to the staging slot), "
              "ring_full (not recorded: the writer was behind)",
              with("outcome", kCaptureOutcomeNames[k]), c[counter::kCapture + k]);
  w.counter("gnio_pp_records_total", "DNS/HTTP/TLS records handed to the host", base, c[counter::kRecords]);
  w.counter("gnio_pp_records_waited_total", "Record hand-offs that waited for the host to free ring room", base,
            c[counter::kRecordWaits]);
  w.counter("gnio_pp_flow_table_updates_total", "Flow-table updates made (a burst's packets of one flow are one)", base,
            c[counter::kFlowUpdates]);
}

void add_export_counters(metrics::Writer& w, const ExportSummary& e) {
  for (const ExportSummary::Collector& c : e.collectors) {
    const metrics::Labels l{{"collector", c.url}};
    w.counter("gnio_pp_export_records_sent_total", "IPFIX data records sent to a collector", l, c.records_sent);
    w.counter("gnio_pp_export_template_sends_total", "Times the IPFIX templates went to a collector", l,
              c.template_sends);
    for (size_t k = 0; k < c.lost.size(); ++k) {
      metrics::Labels lr = l;
      lr.emplace_back("reason", kLossReasonNames[k]);
      w.counter("gnio_pp_export_records_lost_total", "IPFIX data records not sent, by reason", lr, c.lost[k]);
    }
  }
  w.counter("gnio_pp_export_flow_records_total", "Flow records made for export (timeouts, evictions, end of run)", {},
            e.flow_records);
  w.counter("gnio_pp_export_app_records_total", "DNS/HTTP/TLS records made for export", {}, e.app_records);
  if (!e.events_target.empty()) {
    w.counter("gnio_pp_events_lines_total", "Event lines written to --events-out", {}, e.event_lines);
    w.counter("gnio_pp_events_lost_total", "Event lines not written (sink full, gone or failing)", {}, e.events_lost);
  }
}

}  // namespace gnio::app
