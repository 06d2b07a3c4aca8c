// SPDX-License-Identifier: Apache-2.0
#include "run_export.hpp"

#include <poll.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <thread>

#include <CLI/CLI.hpp>

#include "gnio/text_escape.hpp"
#include "packet_processing/metrics.hpp"
#include "run_options.hpp"

namespace gnio::cli {

namespace {

using dev::app::FlowEntry;
using dev::app::Record;
using ipfix::DataType;
using ipfix::Field;
using ipfix::Semantics;

std::atomic<bool> g_reopen{false};
extern "C" void on_sighup(int) { g_reopen.store(true, std::memory_order_relaxed); }

// IPFIX flowEndReason (IANA element 136).
constexpr uint8_t kIdleTimeout = 1, kActiveTimeout = 2, kEndOfFlow = 3, kForcedEnd = 4, kLackOfResources = 5;

// Template ids: flow, dns, http, tls, each for IPv4 then IPv6.
enum Kind : uint16_t { kFlow, kDns, kHttp, kTls };
constexpr uint16_t template_id(Kind k, bool v6) { return static_cast<uint16_t>(256 + 2 * k + (v6 ? 1 : 0)); }

// gnio's enterprise elements (ipfix::kGnioPen), docs/EXPORT.md lists them.
constexpr uint16_t kDnsQueryName = 1, kDnsQueryType = 2, kDnsResponseCode = 3, kDnsId = 4, kDnsIsResponse = 5,
                   kHttpMethod = 10, kHttpHost = 11, kHttpPath = 12, kHttpVersion = 13, kTlsServerName = 20;

std::vector<Field> endpoint_fields(bool v6) {
  return {{static_cast<uint16_t>(v6 ? 27 : 8), static_cast<uint16_t>(v6 ? 16 : 4), 0},
          {static_cast<uint16_t>(v6 ? 28 : 12), static_cast<uint16_t>(v6 ? 16 : 4), 0},
          {7, 2, 0},
          {11, 2, 0},
          {4, 1, 0}};
}

std::vector<ipfix::Template> run_templates() {
  std::vector<ipfix::Template> t;
  for (bool v6 : {false, true}) {
    auto f = endpoint_fields(v6);
    for (Field x : std::initializer_list<Field>{{152, 8, 0},  // flowStartMilliseconds
                                                {153, 8, 0},  // flowEndMilliseconds
                                                {2, 8, 0},    // packetDeltaCount
                                                {1, 8, 0},    // octetDeltaCount
                                                {6, 2, 0},    // tcpControlBits
                                                {2, 8, ipfix::kReversePen},
                                                {1, 8, ipfix::kReversePen},
                                                {6, 2, ipfix::kReversePen},
                                                {136, 1, 0}})  // flowEndReason
      f.push_back(x);
    t.push_back({template_id(kFlow, v6), f});
  }
  const uint16_t var = ipfix::kVariableLength;
  const uint32_t pen = ipfix::kGnioPen;
  for (bool v6 : {false, true}) {
    auto f = endpoint_fields(v6);
    f.push_back({323, 8, 0});  // observationTimeMilliseconds
    auto with = [&](std::initializer_list<Field> more) {
      auto g = f;
      g.insert(g.end(), more);
      return g;
    };
    t.push_back({template_id(kDns, v6),
                 with({{kDnsId, 2, pen}, {kDnsIsResponse, 1, pen}, {kDnsQueryName, var, pen}, {kDnsQueryType, 2, pen},
                       {kDnsResponseCode, 1, pen}})});
    t.push_back({template_id(kHttp, v6),
                 with({{kHttpMethod, var, pen}, {kHttpHost, var, pen}, {kHttpPath, var, pen}, {kHttpVersion, var, pen}})});
    t.push_back({template_id(kTls, v6), with({{kTlsServerName, var, pen}})});
  }
  return t;
}

std::vector<ipfix::ElementInfo> run_type_info() {
  const uint32_t pen = ipfix::kGnioPen;
  return {
      {kDnsQueryName, pen, DataType::String, Semantics::Default, "dnsQueryName", "DNS question name, escaped"},
      {kDnsQueryType, pen, DataType::Unsigned16, Semantics::Identifier, "dnsQueryType", "DNS question type"},
      {kDnsResponseCode, pen, DataType::Unsigned8, Semantics::Identifier, "dnsResponseCode", "DNS RCODE"},
      {kDnsId, pen, DataType::Unsigned16, Semantics::Identifier, "dnsId", "DNS message id"},
      {kDnsIsResponse, pen, DataType::Unsigned8, Semantics::Flags, "dnsIsResponse", "1 for a response, 0 for a query"},
      {kHttpMethod, pen, DataType::String, Semantics::Default, "httpMethod", "HTTP request method"},
      {kHttpHost, pen, DataType::String, Semantics::Default, "httpHost", "HTTP Host header, escaped"},
      {kHttpPath, pen, DataType::String, Semantics::Default, "httpPath", "HTTP request target, escaped"},
      {kHttpVersion, pen, DataType::String, Semantics::Default, "httpVersion", "HTTP version"},
      {kTlsServerName, pen, DataType::String, Semantics::Default, "tlsServerName", "TLS ClientHello SNI, escaped"},
  };
}


// ISO 8601 in UTC with microseconds, as EVE writes it.
std::string iso_time(uint64_t ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1000000000);
  std::tm utc{};
  gmtime_r(&s, &utc);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%06u+0000", static_cast<unsigned>(ns % 1000000000 / 1000));
  return buf;
}

const char* proto_text(uint8_t p) {
  switch (p) {
    case 1: return "ICMP";
    case 6: return "TCP";
    case 17: return "UDP";
    case 58: return "IPv6-ICMP";
    default: return "";
  }
}

constexpr const char* kEndReasonNames[6] = {"", "idle_timeout", "active_timeout", "end_of_flow", "forced_end",
                                            "lack_of_resources"};

}  // namespace

Result<std::unique_ptr<RunExport>> RunExport::open(const ExportOptions& o) {
  auto x = std::make_unique<RunExport>();
  x->options_ = o;
  for (const std::string& url : o.ipfix) {
    auto c = ipfix::parse_collector(url);
    if (!c) return c.status();
    ipfix::ExporterOptions eo;
    eo.observation_domain = o.observation_domain;
    auto e = ipfix::Exporter::open(*c, run_templates(), run_type_info(), eo);
    if (!e) return e.status();
    x->exporters_.push_back(std::move(*e));
  }
  if (!o.events_out.empty()) {
    auto s = events::Sink::open(o.events_out);
    if (!s) return s.status();
    x->events_ = std::move(*s);
    x->events_target_ = o.events_out;
    struct sigaction sa{};
    sa.sa_handler = on_sighup;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, nullptr);
  }
  x->publish();
  return x;
}

void RunExport::add_records(const Record* records, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const Record& r = records[i];
    const bool v6 = r.version == 6;
    const Kind kind = r.kind == dev::app::kRecordDns ? kDns : r.kind == dev::app::kRecordHttp ? kHttp : kTls;
    const nlohmann::json fields = app::record_json(r);
    if (!exporters_.empty()) {
      record_.clear();
      const uint32_t n_addr = v6 ? 16 : 4;
      record_.bytes(r.src, n_addr);
      record_.bytes(r.dst, n_addr);
      record_.u16(r.sport);
      record_.u16(r.dport);
      record_.u8(r.proto);
      record_.u64(r.timestamp_ns / 1000000);
      if (kind == kDns) {
        record_.u16(r.dns_id);
        record_.u8(r.response ? 1 : 0);
        record_.varlen(fields["qname"].get<std::string>());
        record_.u16(r.qtype);
        record_.u8(r.rcode);
      } else if (kind == kHttp) {
        for (const char* k : {"method", "host", "path", "version"}) record_.varlen(fields[k].get<std::string>());
      } else {
        record_.varlen(fields["sni"].get<std::string>());
      }
      for (ipfix::Exporter& e : exporters_) e.add(template_id(kind, v6), record_.data());
    }
    counts_.app_records += 1;
    if (events_.is_open() || !events_target_.empty()) {
      static constexpr const char* kNames[] = {"flow", "dns", "http", "tls"};
      nlohmann::json ev{{"timestamp", iso_time(r.timestamp_ns)},
                        {"event_type", kNames[kind]},
                        {"src_ip", fields["src"]},
                        {"src_port", r.sport},
                        {"dest_ip", fields["dst"]},
                        {"dest_port", r.dport},
                        {"proto", proto_text(r.proto)},
                        {kNames[kind], fields}};
      events_.write_line(app::json_text(ev));
    }
  }
}

void RunExport::export_flow(const FlowEntry& e, Tracked& t, uint8_t reason) {
  uint64_t packets[2], bytes[2];
  for (int k = 0; k < 2; ++k) {
    packets[k] = e.packets[k] - t.packets[k];
    bytes[k] = e.bytes[k] - t.bytes[k];
  }
  if (packets[0] + packets[1] == 0) return;
  // The source is endpoint a, unless only b sent: then b (a one-way flow's
  // sender is its source).
  const int fwd = e.packets[0] == 0 ? 1 : 0, rev = 1 - fwd;
  const bool v6 = e.key.version == 6;
  const uint8_t* src = fwd == 0 ? e.key.a : e.key.b;
  const uint8_t* dst = fwd == 0 ? e.key.b : e.key.a;
  const uint16_t sport = fwd == 0 ? e.key.port_a : e.key.port_b, dport = fwd == 0 ? e.key.port_b : e.key.port_a;
  const uint64_t start_ns = std::max(t.since_ns, e.first_ns);
  if (!exporters_.empty()) {
    record_.clear();
    record_.bytes(src, v6 ? 16 : 4);
    record_.bytes(dst, v6 ? 16 : 4);
    record_.u16(sport);
    record_.u16(dport);
    record_.u8(e.key.proto);
    record_.u64(start_ns / 1000000);
    record_.u64(e.last_ns / 1000000);
    record_.u64(packets[fwd]);
    record_.u64(bytes[fwd]);
    record_.u16(static_cast<uint16_t>(e.tcp_flags[fwd]));
    record_.u64(packets[rev]);
    record_.u64(bytes[rev]);
    record_.u16(static_cast<uint16_t>(e.tcp_flags[rev]));
    record_.u8(reason);
    for (ipfix::Exporter& x : exporters_) x.add(template_id(kFlow, v6), record_.data());
  }
  counts_.flow_records += 1;
  counts_.flow_end_reasons[reason] += 1;
  if (events_.is_open() || !events_target_.empty()) {
    const std::string a = app::address_text(src, e.key.version), b = app::address_text(dst, e.key.version);
    nlohmann::json ev{{"timestamp", iso_time(e.last_ns)},
                      {"event_type", "flow"},
                      {"src_ip", a},
                      {"src_port", sport},
                      {"dest_ip", b},
                      {"dest_port", dport},
                      {"proto", proto_text(e.key.proto)},
                      {"proto_number", e.key.proto},
                      {"flow", {{"pkts_toserver", packets[fwd]},
                                {"pkts_toclient", packets[rev]},
                                {"bytes_toserver", bytes[fwd]},
                                {"bytes_toclient", bytes[rev]},
                                {"start", iso_time(start_ns)},
                                {"end", iso_time(e.last_ns)},
                                {"start_ns", start_ns},
                                {"end_ns", e.last_ns},
                                {"tcp_flags_ts", e.tcp_flags[fwd]},
                                {"tcp_flags_tc", e.tcp_flags[rev]},
                                {"reason", kEndReasonNames[reason]}}}};
    events_.write_line(app::json_text(ev));
  }
  for (int k = 0; k < 2; ++k) {
    t.packets[k] = e.packets[k];
    t.bytes[k] = e.bytes[k];
  }
  t.since_ns = e.last_ns;
}

size_t RunExport::KeyHash::operator()(const KeyBytes& k) const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (uint8_t b : k) h = (h ^ b) * 1099511628211ull;
  return static_cast<size_t>(h);
}

void RunExport::scan(const std::vector<std::span<const FlowEntry>>& tables, bool final) {
  ++generation_;
  auto occupied = [](const FlowEntry& e) { return e.tag != 0 && e.tag != dev::app::kFlowBusy && e.key.version != 0; };
  // The clock is the packets' own (a capture replayed runs on its times).
  uint64_t now = 0;
  for (auto table : tables)
    for (const FlowEntry& e : table)
      if (occupied(e)) now = std::max(now, e.last_ns);
  const auto active = static_cast<uint64_t>(options_.active_timeout_s * 1e9);
  const auto idle = static_cast<uint64_t>(options_.idle_timeout_s * 1e9);
  for (auto table : tables) {
    for (const FlowEntry& slot : table) {
      if (!occupied(slot)) continue;
      const FlowEntry e = slot;  // the kernel may be writing the slot: one copy, read once
      KeyBytes key;
      std::memcpy(key.data(), &e.key, key.size());
      Tracked& t = tracked_[key];
      if (t.generation == 0 || t.first_ns != e.first_ns) {
        // New, or the key came back into the table after it left it.
        t = Tracked{};
        t.first_ns = t.since_ns = e.first_ns;
      }
      t.generation = generation_;
      t.last = e;
      if (final) {
        constexpr uint32_t kFinRst = 0x01 | 0x04;
        export_flow(e, t, e.key.proto == 6 && ((e.tcp_flags[0] | e.tcp_flags[1]) & kFinRst) ? kEndOfFlow : kForcedEnd);
      } else if (now >= e.last_ns + idle) {
        export_flow(e, t, kIdleTimeout);
      } else if (now >= t.since_ns + active) {
        export_flow(e, t, kActiveTimeout);
      }
    }
  }
  // What the last scan saw and this one does not has left the table: its
  // packets up to that scan are exported; those after it were lost with it.
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    if (it->second.generation != generation_) {
      export_flow(it->second.last, it->second, kLackOfResources);
      it = tracked_.erase(it);
    } else {
      ++it;
    }
  }
  for (ipfix::Exporter& x : exporters_) x.flush();
  publish();
}

void RunExport::add_evicted(const FlowEntry& e) {
  KeyBytes key;
  std::memcpy(key.data(), &e.key, key.size());
  auto it = tracked_.find(key);
  if (it != tracked_.end() && it->second.first_ns == e.first_ns) {
    export_flow(e, it->second, kLackOfResources);
    tracked_.erase(it);
    return;
  }
  Tracked t;
  t.first_ns = t.since_ns = e.first_ns;
  export_flow(e, t, kLackOfResources);
}

void RunExport::poll() {
  for (ipfix::Exporter& x : exporters_) {
    x.flush();
    x.poll();
  }
  if (g_reopen.exchange(false, std::memory_order_relaxed) && !events_target_.empty()) {
    if (Status s = events_.reopen(); !s)
      std::fprintf(stderr, "gnio run packet-processing: reopening --events-out on SIGHUP: %s\n", s.to_string().c_str());
  }
  publish();
}

void RunExport::finish(int wait_ms) {
  for (ipfix::Exporter& x : exporters_) x.flush();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    bool pending = false;
    for (ipfix::Exporter& x : exporters_) {
      x.poll();
      pending = pending || x.pending();
    }
    if (!pending) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (ipfix::Exporter& x : exporters_) x.drop_pending();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  publish();
}

void RunExport::publish() {
  counts_.collectors.clear();
  for (const ipfix::Exporter& x : exporters_) {
    app::ExportSummary::Collector c;
    c.url = x.collector().text();
    const ipfix::ExporterStats& s = x.stats();
    c.records_sent = s.records_sent;
    c.messages_sent = s.messages_sent;
    c.template_sends = s.template_sends;
    c.connects = s.connects;
    c.backpressure = s.backpressure;
    for (size_t k = 0; k < ipfix::kLossReasons; ++k) c.lost[k] = s.lost[k];
    counts_.collectors.push_back(c);
  }
  counts_.events_target = events_target_;
  counts_.event_lines = events_.stats().lines;
  counts_.events_lost = events_.stats().lost;
  counts_.event_reopens = events_.stats().reopens;
  std::lock_guard<std::mutex> lock(published_mutex_);
  published_ = counts_;
}

app::ExportSummary RunExport::summary() const {
  std::lock_guard<std::mutex> lock(published_mutex_);
  return published_;
}

void RunExport::write_metrics(metrics::Writer& w) const { app::add_export_counters(w, summary()); }

void add_export_options(CLI::App& pp, RunOptions& o) {
  pp.add_option("--ipfix", o.ipfix,
                "export flows and DNS/HTTP/TLS records as IPFIX to a collector (nfacctd, nfcapd, ...); repeat for "
                "several; see docs/EXPORT.md")
      ->type_name("udp://HOST:PORT|tcp://HOST:PORT");
  pp.add_option("--flow-active-timeout", o.flow_active_timeout_s,
                "export a flow that lasts at least every S seconds (of packet time)")
      ->capture_default_str();
  pp.add_option("--flow-idle-timeout", o.flow_idle_timeout_s,
                "export a flow once no packet came for S seconds (of packet time)")
      ->capture_default_str();
  pp.add_option("--observation-domain", o.observation_domain, "IPFIX observation domain id of this exporter")
      ->capture_default_str();
  pp.add_option("--events-out", o.events_out,
                "write one JSON line per DNS/HTTP/TLS record and per exported flow (EVE-like) to FILE, reopened on "
                "SIGHUP, or to unix:PATH (a listening stream socket)")
      ->type_name("FILE|unix:PATH");
}

ExportOptions export_options(const RunOptions& o) {
  ExportOptions e;
  e.ipfix = o.ipfix;
  e.active_timeout_s = o.flow_active_timeout_s;
  e.idle_timeout_s = o.flow_idle_timeout_s;
  e.observation_domain = o.observation_domain;
  e.events_out = o.events_out;
  return e;
}

}  // namespace gnio::cli
