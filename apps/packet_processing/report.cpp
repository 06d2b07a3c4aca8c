// SPDX-License-Identifier: Apache-2.0
#include "packet_processing/report.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "gnio/text_escape.hpp"

namespace gnio::app {

using namespace gnio::dev::app;
using nlohmann::json;

std::string address_text(const uint8_t* a, uint8_t version) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (version == 4) inet_ntop(AF_INET, a, buf, sizeof(buf));
  else if (version == 6) inet_ntop(AF_INET6, a, buf, sizeof(buf));
  return buf;
}

std::string tunnel_id_text(uint32_t tunnel, uint32_t labels, uint64_t id) {
  if (tunnel == kTunnelNone || tunnel == kTunnelIpip || tunnel >= kTunnelCount) return "";
  if (tunnel != kTunnelMpls) return std::to_string(id);
  std::string out;
  for (uint32_t i = labels < kMplsKeyLabels ? labels : kMplsKeyLabels; i-- > 0;)
    out += (out.empty() ? "" : "/") + std::to_string((id >> (20 * i)) & 0xFFFFFu);
  return out;
}

std::string tcp_state(const FlowEntry& e) {
  if (e.key.proto != 6) return "";
  constexpr uint32_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kAck = 0x10;
  const uint32_t both = e.tcp_flags[0] | e.tcp_flags[1];
  if (both & kRst) return "reset";
  const bool fin_a = e.tcp_flags[0] & kFin, fin_b = e.tcp_flags[1] & kFin;
  if (fin_a && fin_b) return "closed";
  if (fin_a || fin_b) return "closing";
  const bool syn_a = e.tcp_flags[0] & kSyn, syn_b = e.tcp_flags[1] & kSyn;
  if (syn_a && syn_b && (both & kAck)) return "established";
  if (syn_a || syn_b) return "syn";
  return "established";  // joined mid-stream
}

std::vector<FlowEntry> sorted_flows(const FlowEntry* slots, uint32_t count) {
  std::vector<FlowEntry> out;
  for (uint32_t i = 0; i < count; ++i)
    if (slots[i].tag != 0 && slots[i].tag != kFlowBusy) out.push_back(slots[i]);
  std::stable_sort(out.begin(), out.end(), [](const FlowEntry& x, const FlowEntry& y) {
    return x.bytes[0] + x.bytes[1] > y.bytes[0] + y.bytes[1];
  });
  return out;
}

namespace {

const char* tunnel_name(uint8_t t) { return t < kTunnelCount ? kTunnelNames[t] : "none"; }

const char* proto_name(uint8_t p) {
  switch (p) {
    case 1: return "icmp";
    case 6: return "tcp";
    case 17: return "udp";
    case 58: return "icmpv6";
    default: return "ip";
  }
}

const char* dns_type_name(uint16_t t) {
  switch (t) {
    case 1: return "A";
    case 2: return "NS";
    case 5: return "CNAME";
    case 6: return "SOA";
    case 12: return "PTR";
    case 15: return "MX";
    case 16: return "TXT";
    case 28: return "AAAA";
    case 33: return "SRV";
    case 65: return "HTTPS";
    case 255: return "ANY";
    default: return "";
  }
}

// A zero-terminated text field of at most cap bytes.
std::string text_field(const char* s, size_t cap) { return escape_text({s, strnlen(s, cap)}); }

}  // namespace

std::string_view record_name(const Record& r) { return {r.name, std::min<size_t>(r.name_len, kNameMax - 1)}; }
std::string_view record_path(const Record& r) { return {r.path, std::min<size_t>(r.path_len, kPathMax - 1)}; }

std::string json_text(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

json record_json(const Record& r) {
  json j{{"queue", r.queue},
         {"packet", r.packet},
         {"timestamp_ns", r.timestamp_ns},
         {"src", address_text(r.src, r.version)},
         {"dst", address_text(r.dst, r.version)},
         {"sport", r.sport},
         {"dport", r.dport},
         {"transport", r.proto == 6 ? "tcp" : "udp"},
         {"tunnel", tunnel_name(r.tunnel)},
         {"tunnel_id", tunnel_id_text(r.tunnel, r.labels, r.tunnel_id)}};
  if (r.kind == kRecordDns) {
    j["id"] = r.dns_id;
    j["response"] = r.response != 0;
    j["qname"] = escape_text(record_name(r));
    j["qtype"] = r.qtype;
    j["qtype_name"] = dns_type_name(r.qtype);
    j["rcode"] = r.rcode;
  } else if (r.kind == kRecordHttp) {
    j["method"] = text_field(r.method, kMethodMax);
    j["host"] = escape_text(record_name(r));
    j["path"] = escape_text(record_path(r));
    j["path_cut"] = r.path_cut != 0;
    j["version"] = text_field(r.http_version, sizeof(r.http_version));
  } else {
    j["sni"] = escape_text(record_name(r));
  }
  return j;
}

std::string record_line(const Record& r) {
  const json j = record_json(r);
  auto text = [&](const char* key) { return j[key].get<std::string>(); };
  // An IPv6 address in brackets before its port (RFC 3986), as tshark and ss write it.
  auto endpoint = [&](const char* key, uint16_t port) {
    const std::string a = text(key);
    return (a.find(':') == std::string::npos ? a : "[" + a + "]") + ":" + std::to_string(port);
  };
  const std::string id = text("tunnel_id");
  const std::string from = endpoint("src", r.sport),
                    to = endpoint("dst", r.dport) + (r.tunnel == kTunnelNone ? "" : " in " + text("tunnel") +
                                                                                      (id.empty() ? "" : " " + id));
  if (r.kind == kRecordDns)
    return "dns  " + from + " -> " + to + (r.response ? " response " : " query ") + text("qname") + " type " +
           std::to_string(r.qtype) + " rcode " + std::to_string(r.rcode);
  if (r.kind == kRecordHttp)
    return "http " + from + " -> " + to + " " + text("method") + " " + text("path") + (r.path_cut ? "..." : "") +
           " (host " + text("host") + ")";
  return "tls  " + from + " -> " + to + " sni " + text("sni");
}

json flow_json(const FlowEntry& e) {
  return json{{"version", e.key.version},
              {"proto", proto_name(e.key.proto)},
              {"a", address_text(e.key.a, e.key.version)},
              {"port_a", e.key.port_a},
              {"b", address_text(e.key.b, e.key.version)},
              {"port_b", e.key.port_b},
              {"packets_ab", e.packets[0]},
              {"bytes_ab", e.bytes[0]},
              {"packets_ba", e.packets[1]},
              {"bytes_ba", e.bytes[1]},
              {"first_ns", e.first_ns},
              {"last_ns", e.last_ns},
              {"tcp_flags_ab", e.tcp_flags[0]},
              {"tcp_flags_ba", e.tcp_flags[1]},
              {"tcp_state", tcp_state(e)},
              {"tunnel", tunnel_name(e.key.tunnel)},
              {"tunnel_id", tunnel_id_text(e.key)}};
}

std::string csv_header() {
  return "snapshot,at_s,version,proto,a,port_a,b,port_b,packets_ab,bytes_ab,packets_ba,bytes_ba,first_ns,last_ns,"
         "tcp_flags_ab,tcp_flags_ba,tcp_state,tunnel,tunnel_id\n";
}

std::string flow_csv(const FlowEntry& e, uint64_t snapshot, double at_s) {
  std::ostringstream o;
  o << snapshot << ',' << at_s << ',' << int(e.key.version) << ',' << proto_name(e.key.proto) << ','
    << address_text(e.key.a, e.key.version) << ',' << e.key.port_a << ',' << address_text(e.key.b, e.key.version)
    << ',' << e.key.port_b << ',' << e.packets[0] << ',' << e.bytes[0] << ',' << e.packets[1] << ',' << e.bytes[1]
    << ',' << e.first_ns << ',' << e.last_ns << ',' << e.tcp_flags[0] << ',' << e.tcp_flags[1] << ','
    << tcp_state(e) << ',' << tunnel_name(e.key.tunnel) << ',' << tunnel_id_text(e.key) << '\n';
  return o.str();
}

json capture_json(const RunResult& r) {
  const uint64_t recorded = r.count(counter::kCapture + 0), cut = r.count(counter::kCapture + 1),
                 ring_full = r.count(counter::kCapture + 2);
  json dropped = {{"ring_full", ring_full}};
  for (size_t k = 0; k < kTxDropReasons; ++k)
    dropped[std::string(tx_drop_reason_name(static_cast<TxDropReason>(k)))] = r.capture.dropped[k];
  return {{"target", escape_text(r.info.capture)},
          {"offered", recorded + cut + ring_full},
          {"handed", recorded + cut},
          {"cut", cut},
          {"written", r.capture.packets},
          {"written_bytes", r.capture.bytes},
          {"dropped_total", ring_full + r.capture.errors},
          {"dropped", dropped}};
}

json report_json(const RunResult& r, uint32_t top_flows) {
  json j;
  j["schema"] = "gnio.packet-processing";
  j["schema_version"] = kReportSchemaVersion;
  j["run"] = {{"rx", escape_text(r.info.rx)},
              {"tx", escape_text(r.info.tx)},
              {"gpu", r.info.gpu},
              {"device", r.info.device},
              {"emulated", r.info.emulated},
              {"queues", r.info.queues},
              {"seconds", r.info.seconds},
              {"stop_reason", stop_reason_name(r.info.stop_reason)},
              {"input_error", escape_text(r.info.input_error)},
              {"filter", {{"expression", escape_text(r.info.filter)},
                          {"matched", r.count(counter::kPackets)},
                          {"filtered", r.count(counter::kFiltered)}}},
              {"decap", r.info.decap},
              {"signal", r.info.signal},
              {"packets", r.count(counter::kPackets)},
              {"bytes", r.count(counter::kBytes)},
              {"mpps", r.mpps()},
              {"gbps", r.gbps()}};
  json gpus = json::array();
  for (const GpuPart& g : r.gpus)
    gpus.push_back({{"gpu", g.gpu},
                    {"device", g.device},
                    {"emulated", g.emulated},
                    {"queues", g.queues},
                    {"blocks", g.blocks},
                    {"packets", g.counters.empty() ? 0 : g.counters[counter::kPackets]},
                    {"bytes", g.counters.empty() ? 0 : g.counters[counter::kBytes]},
                    {"filtered", g.counters.empty() ? 0 : g.counters[counter::kFiltered]},
                    {"kernel", {{"packets", g.kernel.packets}, {"bursts", g.kernel.bursts}, {"again", g.kernel.again}}}});
  j["gpus"] = gpus;
  json protos = json::object();
  for (uint32_t k = 0; k < kProtoCount; ++k) protos[kProtoNames[k]] = r.count(counter::kProto + k);
  j["protocols"] = protos;
  json cs = json::object();
  for (uint32_t l = 0; l < kCsumLayerCount; ++l) {
    json s = json::object();
    for (uint32_t st = 0; st < kCsumCount; ++st) s[kCsumNames[st]] = r.count(counter::kCsum + l * kCsumCount + st);
    cs[kCsumLayerNames[l]] = s;
  }
  j["checksums"] = cs;
  json tunnels = json::object();
  for (uint32_t t = 1; t < kTunnelCount; ++t) tunnels[kTunnelNames[t]] = r.count(counter::kTunnel + t);
  j["tunnels"] = tunnels;
  json bad = json::object();
  for (uint32_t k = 1; k < kReasonCount; ++k) bad[kReasonNames[k]] = r.count(counter::kReason + k);
  j["malformed"] = bad;
  json replies = json::object();
  for (uint32_t k = 1; k < kReplyCount; ++k) replies[kReplyNames[k]] = r.count(counter::kReply + k);
  replies["not_sent"] = r.count(counter::kReply + kReplyNone);
  replies["echo_refused"] = r.count(counter::kEchoRefused);
  replies["tx_packets"] = r.tx.packets;
  replies["tx_errors"] = r.tx.errors;
  replies["tx_submitted"] = r.tx.submitted;
  json tx_dropped = json::object();
  for (size_t k = 0; k < kTxDropReasons; ++k)
    tx_dropped[std::string(tx_drop_reason_name(static_cast<TxDropReason>(k)))] = r.tx.dropped[k];
  replies["tx_dropped"] = tx_dropped;
  replies["tx_copies"] = r.tx.copies;
  replies["tx_copy_bytes"] = r.tx.copy_bytes;
  replies["tx_copy_waits"] = r.tx.copy_waits;
  j["replies"] = replies;
  if (!r.info.capture.empty()) j["capture"] = capture_json(r);
  json dns = json::array(), http = json::array(), sni = json::array();
  for (const Record& rec : r.records) {
    if (rec.kind == kRecordDns) dns.push_back(record_json(rec));
    else if (rec.kind == kRecordHttp) http.push_back(record_json(rec));
    else if (rec.kind == kRecordTls) sni.push_back(record_json(rec));
  }
  j["dns"] = dns;
  j["http"] = http;
  j["tls"] = sni;
  json top = json::array();
  for (size_t i = 0; i < r.flows.size() && i < top_flows; ++i) top.push_back(flow_json(r.flows[i]));
  j["flows"] = {{"tracked", r.flows.size()},
                {"new", r.count(counter::kFlow + kFlowNew)},
                {"evicted", r.count(counter::kFlow + kFlowEvicted)},
                {"untracked_packets", r.count(counter::kFlow + kFlowUntracked)},
                {"table_updates", r.count(counter::kFlowUpdates)},
                {"top", top}};
  json rx = json::array();
  DropCounts drops{};
  for (const RxqStats& s : r.rx) {
    json d = json::object();
    for (size_t k = 0; k < kDropReasons; ++k) {
      d[std::string(drop_reason_name(static_cast<DropReason>(k)))] = s.dropped[k];
      drops[k] += s.dropped[k];
    }
    rx.push_back({{"offered", s.offered},
                  {"packets", s.packets},
                  {"bytes", s.bytes},
                  {"released", s.released},
                  {"left_in_ring", s.packets - s.released},
                  {"dropped", d},
                  {"engine", {{"work_polls", s.work_polls},
                              {"idle_polls", s.idle_polls},
                              {"busy_seconds", static_cast<double>(s.busy_ns) / 1e9},
                              {"idle_seconds", static_cast<double>(s.idle_ns) / 1e9}}}});
  }
  json dropped = json::object();
  for (size_t k = 0; k < kDropReasons; ++k) dropped[std::string(drop_reason_name(static_cast<DropReason>(k)))] = drops[k];
  dropped["records_not_handed"] = r.count(counter::kRecordsDropped) + r.records_lost;
  j["drops"] = dropped;
  j["rx_queues"] = rx;
  j["records"] = {{"handed", r.count(counter::kRecords)},
                  {"not_handed", r.count(counter::kRecordsDropped)},
                  {"lost", r.records_lost},
                  {"waited_for_host", r.count(counter::kRecordWaits)}};
  j["kernel"] = {{"packets", r.kernel.packets}, {"bursts", r.kernel.bursts}, {"again", r.kernel.again}};
  j["capabilities"] = r.capabilities;
  if (r.exported.any()) j["export"] = export_json(r.exported);
  return j;
}

json export_json(const ExportSummary& e) {
  json collectors = json::array();
  for (const ExportSummary::Collector& c : e.collectors) {
    json lost = json::object();
    for (size_t k = 0; k < c.lost.size(); ++k) lost[kLossReasonNames[k]] = c.lost[k];
    collectors.push_back({{"url", escape_text(c.url)},
                          {"records_sent", c.records_sent},
                          {"messages_sent", c.messages_sent},
                          {"template_sends", c.template_sends},
                          {"connects", c.connects},
                          {"backpressure", c.backpressure},
                          {"lost", lost}});
  }
  json reasons = json::object();
  constexpr const char* kEndNames[6] = {"", "idle_timeout", "active_timeout", "end_of_flow", "forced_end",
                                        "lack_of_resources"};
  for (size_t k = 1; k < e.flow_end_reasons.size(); ++k) reasons[kEndNames[k]] = e.flow_end_reasons[k];
  return {{"ipfix", collectors},
          {"flow_records", e.flow_records},
          {"flow_end_reasons", reasons},
          {"evictions_lost", e.evictions_lost},
          {"app_records", e.app_records},
          {"events", {{"target", escape_text(e.events_target)},
                      {"lines", e.event_lines},
                      {"lost", e.events_lost},
                      {"reopens", e.event_reopens}}}};
}

std::string export_text(const ExportSummary& e) {
  if (!e.any()) return "";
  std::ostringstream o;
  o << "export: " << e.flow_records << " flow records, " << e.app_records << " dns/http/tls records\n";
  for (const ExportSummary::Collector& c : e.collectors) {
    o << "  ipfix " << escape_text(c.url) << ": sent " << c.records_sent << ", lost";
    for (size_t k = 0; k < c.lost.size(); ++k) o << ' ' << kLossReasonNames[k] << ' ' << c.lost[k];
    o << ", templates sent " << c.template_sends << ", connects " << c.connects << "\n";
  }
  if (!e.events_target.empty())
    o << "  events " << escape_text(e.events_target) << ": " << e.event_lines << " lines, lost " << e.events_lost
      << ", reopened " << e.event_reopens << "\n";
  return o.str();
}

std::string summary_text(const RunResult& r, uint32_t top_flows) {
  std::ostringstream o;
  char line[256];
  const std::string stopped = r.info.signal == SIGINT    ? "signal SIGINT"
                              : r.info.signal == SIGTERM ? "signal SIGTERM"
                                                         : std::string(stop_reason_name(r.info.stop_reason));
  std::snprintf(line, sizeof(line), "%llu packets, %llu bytes in %.3f s: %.3f Mpps, %.3f Gbit/s (%s)\n",
                (unsigned long long)r.count(counter::kPackets), (unsigned long long)r.count(counter::kBytes),
                r.info.seconds, r.mpps(), r.gbps(), stopped.c_str());
  o << line;
  if (!r.info.filter.empty())
    o << "filter " << escape_text(r.info.filter) << ": matched " << r.count(counter::kPackets) << ", filtered "
      << r.count(counter::kFiltered) << " (released unanalysed)\n";
  o << "\nprotocol            packets\n";
  for (uint32_t k = 0; k < kProtoCount; ++k) {
    if (r.count(counter::kProto + k) == 0) continue;
    std::snprintf(line, sizeof(line), "  %-16s %10llu\n", kProtoNames[k],
                  (unsigned long long)r.count(counter::kProto + k));
    o << line;
  }
  uint64_t tunneled = 0;
  for (uint32_t t = 1; t < kTunnelCount; ++t) tunneled += r.count(counter::kTunnel + t);
  if (tunneled != 0) {
    o << "\ntunnel (decap " << r.info.decap << ")  packets\n";
    for (uint32_t t = 1; t < kTunnelCount; ++t) {
      if (r.count(counter::kTunnel + t) == 0) continue;
      std::snprintf(line, sizeof(line), "  %-16s %10llu\n", kTunnelNames[t],
                    (unsigned long long)r.count(counter::kTunnel + t));
      o << line;
    }
  }
  o << "\nchecksum            good        bad    partial not_checked\n";
  for (uint32_t l = 0; l < kCsumLayerCount; ++l) {
    const uint32_t b = counter::kCsum + l * kCsumCount;
    std::snprintf(line, sizeof(line), "  %-10s %10llu %10llu %10llu %10llu\n", kCsumLayerNames[l],
                  (unsigned long long)r.count(b + kCsumGood), (unsigned long long)r.count(b + kCsumBad),
                  (unsigned long long)r.count(b + kCsumPartial), (unsigned long long)r.count(b + kCsumNotChecked));
    o << line;
  }
  bool any_bad = false;
  for (uint32_t k = 1; k < kReasonCount; ++k) {
    if (r.count(counter::kReason + k) == 0) continue;
    if (!any_bad) o << "\nmalformed or cut    packets\n";
    any_bad = true;
    std::snprintf(line, sizeof(line), "  %-24s %6llu\n", kReasonNames[k], (unsigned long long)r.count(counter::kReason + k));
    o << line;
  }
  o << "\nreplies sent:";
  for (uint32_t k = 1; k < kReplyCount; ++k) o << ' ' << kReplyNames[k] << ' ' << r.count(counter::kReply + k);
  o << " (not sent " << r.count(counter::kReply + kReplyNone) << ")\n";
  if (!r.info.tx.empty()) {
    // What the TX queue did with them: submitted = sent + dropped.
    o << "tx: submitted " << r.tx.submitted << " sent " << r.tx.packets << " dropped " << r.tx.errors << " (";
    for (size_t k = 0; k < kTxDropReasons; ++k)
      o << (k ? " " : "") << tx_drop_reason_name(static_cast<TxDropReason>(k)) << ' ' << r.tx.dropped[k];
    o << ")\n";
  }
  if (!r.info.capture.empty()) {
    // offered = written + dropped: the kernel's ring_full, then the writer's reasons.
    const uint64_t ring_full = r.count(counter::kCapture + 2);
    const uint64_t offered = r.count(counter::kCapture + 0) + r.count(counter::kCapture + 1) + ring_full;
    o << "capture " << escape_text(r.info.capture) << ": offered " << offered << " written " << r.capture.packets
      << " dropped " << ring_full + r.capture.errors << " (ring_full " << ring_full;
    for (size_t k = 0; k < kTxDropReasons; ++k)
      o << ' ' << tx_drop_reason_name(static_cast<TxDropReason>(k)) << ' ' << r.capture.dropped[k];
    o << "), cut to 2048 bytes " << r.count(counter::kCapture + 1) << "\n";
  }
  uint64_t l4_partial = 0, malformed = 0;
  for (uint32_t l = kCsumUdp; l < kCsumLayerCount; ++l) l4_partial += r.count(counter::kCsum + l * kCsumCount + kCsumPartial);
  for (uint32_t k = 1; k < kReasonCount; ++k) malformed += r.count(counter::kReason + k);
  o << "l4 checksum partial " << l4_partial << ", echo requests refused " << r.count(counter::kEchoRefused)
    << ", malformed or cut " << malformed << "\n";
  size_t dns = 0, http = 0, tls = 0;
  for (const Record& rec : r.records) (rec.kind == kRecordDns ? dns : rec.kind == kRecordHttp ? http : tls)++;
  o << "records handed to the host: dns " << dns << ", http " << http << ", tls sni " << tls;
  if (r.count(counter::kRecordsDropped) + r.records_lost != 0)
    o << " (not handed: " << r.count(counter::kRecordsDropped) + r.records_lost << ")";
  o << "\n";
  uint64_t missed = 0, other_drops = 0;
  for (const RxqStats& s : r.rx) {
    missed += s.rx_missed;
    for (size_t k = 0; k < kDropReasons; ++k) other_drops += s.dropped[k];
  }
  o << "drops: rx_missed " << missed << ", all reasons " << other_drops << "\n";
  // The one line that adds up exactly: offered = delivered + dropped, and
  // delivered = released + left in the ring (a stop by signal may leave some).
  uint64_t offered = 0, delivered = 0, released = 0;
  for (const RxqStats& s : r.rx) {
    offered += s.offered;
    delivered += s.packets;
    released += s.released;
  }
  o << "rx: offered " << offered << " delivered " << delivered << " dropped " << other_drops << " released "
    << released << " left_in_ring " << delivered - released << " kernel_packets " << r.kernel.packets << "\n";
  o << "flows: " << r.flows.size() << " tracked, " << r.count(counter::kFlow + kFlowEvicted) << " evicted, "
    << r.count(counter::kFlow + kFlowUntracked) << " packets untracked\n";
  for (size_t i = 0; i < r.flows.size() && i < top_flows; ++i) {
    const FlowEntry& e = r.flows[i];
    const char* open = e.key.version == 6 ? "[" : "";
    const char* close = e.key.version == 6 ? "]" : "";
    std::snprintf(line, sizeof(line), "  %-6s %s%s%s:%u <-> %s%s%s:%u  %llu/%llu pkts  %llu/%llu B %s",
                  proto_name(e.key.proto), open, address_text(e.key.a, e.key.version).c_str(), close, e.key.port_a,
                  open, address_text(e.key.b, e.key.version).c_str(), close, e.key.port_b, (unsigned long long)e.packets[0],
                  (unsigned long long)e.packets[1], (unsigned long long)e.bytes[0], (unsigned long long)e.bytes[1],
                  tcp_state(e).c_str());
    o << line;
    if (e.key.tunnel != kTunnelNone) {
      const std::string id = tunnel_id_text(e.key);
      o << " in " << tunnel_name(e.key.tunnel) << (id.empty() ? "" : " " + id);
    }
    o << "\n";
  }
  o << export_text(r.exported);
  return o.str();
}

}  // namespace gnio::app
