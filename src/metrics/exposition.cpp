// SPDX-License-Identifier: Apache-2.0
// The Prometheus text exposition format: writing, request handling, parsing.
#include <charconv>
#include <cmath>
#include <cstdio>

#include "gnio/text_escape.hpp"
#include "gnio/metrics.hpp"
#include "gnio/queue_counters.hpp"

namespace gnio::metrics {

namespace {

// The text format's escapes: backslash and newline in HELP text, also the
// double quote in a label value.
void append_escaped(std::string& out, std::string_view v, bool quote_too) {
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote_too) out += "\\\"";
    else out += c;
  }
}

void append_sample(std::string& out, std::string_view name, const Labels& labels, std::string_view value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i) out += ',';
      out += labels[i].first;
      out += "=\"";
      // A label value may come from the wire (a name, a path): written by the
      // rule of every gnio output first, so that it is valid UTF-8 (the format
      // requires it) and reads the same as in the report.
      append_escaped(out, escape_text(labels[i].second), true);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += value;
  out += '\n';
}

std::string double_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Writer::Family& Writer::family(std::string_view name, std::string_view help, std::string_view type) {
  for (Family& f : families_)
    if (f.name == name) return f;
  families_.push_back({std::string(name), std::string(help), std::string(type), {}});
  return families_.back();
}

void Writer::counter(std::string_view name, std::string_view help, const Labels& labels, uint64_t value) {
  append_sample(family(name, help, "counter").samples, name, labels, std::to_string(value));
}

void Writer::counter_seconds(std::string_view name, std::string_view help, const Labels& labels, double value) {
  append_sample(family(name, help, "counter").samples, name, labels, double_text(value));
}

void Writer::gauge(std::string_view name, std::string_view help, const Labels& labels, double value) {
  append_sample(family(name, help, "gauge").samples, name, labels, double_text(value));
}

std::string Writer::text() const {
  std::string out;
  for (const Family& f : families_) {
    out += "# HELP " + f.name + ' ';
    append_escaped(out, f.help, false);
    out += "\n# TYPE " + f.name + ' ' + f.type + '\n';
    out += f.samples;
  }
  return out;
}

std::string render(const Collector& collect) {
  Writer w;
  if (collect) collect(w);
  return w.text();
}

Reply handle_request(std::string_view method, std::string_view target, const Collector& collect) {
  const std::string_view path = target.substr(0, target.find('?'));
  if (method != "GET" && method != "HEAD")
    return {405, "text/plain; charset=utf-8", "method " + std::string(method) + " not allowed; use GET /metrics\n"};
  if (path == "/metrics") {
    Reply r{200, "text/plain; version=0.0.4; charset=utf-8", {}};
    if (method == "GET") r.body = render(collect);
    return r;
  }
  if (path == "/" || path.empty())
    return {200, "text/plain; charset=utf-8", "gnio metrics: GET /metrics (Prometheus text format 0.0.4)\n"};
  return {404, "text/plain; charset=utf-8", "no such path; the metrics are at /metrics\n"};
}

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

Status bad_line(size_t line_no, std::string_view line, std::string_view why) {
  std::string shown(line.substr(0, 120));
  return {Errc::InvalidValue, Layer::App,
          "metrics line " + std::to_string(line_no) + " '" + shown + "': " + std::string(why) +
              "; expected NAME{label=\"value\",...} VALUE (Prometheus text format 0.0.4)"};
}

}  // namespace

Result<std::vector<Sample>> parse(std::string_view text) {
  std::vector<Sample> out;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    size_t i = 0;
    if (!name_start(line[0])) return bad_line(line_no, line, "the metric name must start with a letter, _ or :");
    while (i < line.size() && name_char(line[i])) ++i;
    s.name = std::string(line.substr(0, i));
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (true) {
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        const size_t key_start = i;
        while (i < line.size() && name_char(line[i]) && line[i] != ':') ++i;
        if (i == key_start) return bad_line(line_no, line, "a label name is missing");
        std::string key(line.substr(key_start, i - key_start));
        if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"')
          return bad_line(line_no, line, "a label needs =\"value\"");
        i += 2;
        std::string value;
        bool closed = false;
        while (i < line.size()) {
          char c = line[i++];
          if (c == '"') {
            closed = true;
            break;
          }
          if (c == '\\') {
            if (i >= line.size()) break;
            char e = line[i++];
            value += e == 'n' ? '\n' : e;
          } else {
            value += c;
          }
        }
        if (!closed) return bad_line(line_no, line, "a label value is not closed");
        s.labels[key] = std::move(value);
        if (i < line.size() && line[i] == ',') ++i;
        else if (i >= line.size() || line[i] != '}') return bad_line(line_no, line, "labels must end with }");
      }
    }
    if (i >= line.size() || line[i] != ' ') return bad_line(line_no, line, "a space must separate name and value");
    while (i < line.size() && line[i] == ' ') ++i;
    std::string_view value = line.substr(i);
    value = value.substr(0, value.find(' '));  // an optional timestamp follows
    if (value == "NaN") s.value = NAN;
    else if (value == "+Inf") s.value = INFINITY;
    else if (value == "-Inf") s.value = -INFINITY;
    else {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), s.value);
      if (ec != std::errc() || end != value.data() + value.size() || value.empty())
        return bad_line(line_no, line, "the value is not a number");
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<Endpoint> parse_endpoint(std::string_view address) {
  auto invalid = [&](std::string_view why) {
    return Status(Errc::InvalidValue, Layer::App,
                  "metrics address '" + std::string(address) + "': " + std::string(why) +
                      "; give HOST:PORT, e.g. 127.0.0.1:9400 (port 0..65535, 0 picks a free one)");
  };
  Endpoint e;
  std::string_view port_text;
  if (!address.empty() && address[0] == '[') {
    const size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() || address[close + 1] != ':')
      return invalid("an IPv6 host must be written [ADDR]:PORT");
    e.host = std::string(address.substr(1, close - 1));
    port_text = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return invalid("the port is missing");
    e.host = std::string(address.substr(0, colon));
    port_text = address.substr(colon + 1);
  }
  if (e.host.empty()) return invalid("the host is missing");
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535)
    return invalid("port '" + std::string(port_text) + "' is not a number in 0..65535");
  e.port = static_cast<uint16_t>(port);
  e.loopback = e.host == "localhost" || e.host == "::1" || e.host.rfind("127.", 0) == 0;
  return e;
}

// One family per counter of gnio/queue_counters.hpp: `<metric>_total`, a
// time in nanoseconds exposed in seconds.
#define GNIO_EXPOSE_COUNTER(field, metric, unit, help) expose_##unit(w, metric "_total", help, base, s.field);

namespace {

void expose_Count(Writer& w, std::string_view name, std::string_view help, const Labels& l, uint64_t v) {
  w.counter(name, help, l, v);
}

void expose_Nanoseconds(Writer& w, std::string_view name, std::string_view help, const Labels& l, uint64_t ns) {
  w.counter_seconds(name, help, l, static_cast<double>(ns) / 1e9);
}

}  // namespace

void add_rxq(Writer& w, const RxqStats& s, const Labels& base) {
  GNIO_RXQ_COUNTERS(GNIO_EXPOSE_COUNTER)
  w.counter("gnio_rx_missed_total", "Frames dropped at the NIC because the ring was full", base, s.rx_missed);
  for (size_t r = 0; r < kDropReasons; ++r) {
    Labels l = base;
    l.emplace_back("reason", std::string(drop_reason_name(static_cast<DropReason>(r))));
    w.counter("gnio_rx_dropped_total", "Frames offered but not delivered, by reason", l, s.dropped[r]);
  }
}

void add_txq(Writer& w, const TxqStats& s, const Labels& base) {
  GNIO_TXQ_COUNTERS(GNIO_EXPOSE_COUNTER)
  w.counter("gnio_tx_errors_total", "Descriptors completed with an error", base, s.errors);
  for (size_t r = 0; r < kTxDropReasons; ++r) {
    Labels l = base;
    l.emplace_back("reason", std::string(tx_drop_reason_name(static_cast<TxDropReason>(r))));
    w.counter("gnio_tx_dropped_total", "Descriptors completed without being sent, by reason", l, s.dropped[r]);
  }
}

#undef GNIO_EXPOSE_COUNTER

// A markdown table row per counter of one list.
#define GNIO_COUNTER_ROW(field, metric, unit, help)                                                      \
  out += std::string("| `") + metric + "_total` | `" #field "` | " +                                      \
         (std::string_view(#unit) == "Count" ? "count" : "seconds") + " | " + help + " |\n";

std::string queue_counters_markdown() {
  std::string out = "| family | field | unit | meaning |\n|---|---|---|---|\n";
  GNIO_RXQ_COUNTERS(GNIO_COUNTER_ROW)
  GNIO_TXQ_COUNTERS(GNIO_COUNTER_ROW)
  return out;
}

#undef GNIO_COUNTER_ROW

void add_kernel(Writer& w, const std::vector<dev::BlockCounters>& counters, const std::vector<BlockHealth>& health,
                const Labels& base) {
  for (size_t b = 0; b < counters.size(); ++b) {
    Labels l = base;
    l.emplace_back("block", std::to_string(b));
    const dev::BlockCounters& c = counters[b];
    w.counter("gnio_kernel_packets_total", "Packets a kernel block handled", l, c.packets);
    w.counter("gnio_kernel_bytes_total", "Bytes a kernel block handled", l, c.bytes);
    w.counter("gnio_kernel_bursts_total", "Bursts a kernel block received", l, c.bursts);
    w.counter("gnio_kernel_tx_again_total", "TX reservations refused because the ring was full", l, c.again);
    w.counter("gnio_kernel_errors_total", "Errors a kernel block counted", l, c.errors);
    w.counter("gnio_kernel_heartbeat_total", "Loop iterations of a kernel block", l, c.heartbeat);
    w.gauge("gnio_kernel_exited", "1 once the block left its loop", l, c.exited ? 1 : 0);
  }
  for (const BlockHealth& h : health) {
    Labels l = base;
    l.emplace_back("block", std::to_string(h.block));
    w.gauge("gnio_kernel_heartbeat_age_seconds", "Time since the block's heartbeat last moved", l,
            std::chrono::duration<double>(h.heartbeat_age).count());
    Labels staged = l;
    staged.emplace_back("stage", h.stage_name);
    w.gauge("gnio_kernel_stage", "The stage the block last reported (value: its number)", staged, h.stage);
    w.gauge("gnio_kernel_hung", "1 when the block's heartbeat stalled past the hang timeout with work waiting", l,
            h.hung ? 1 : 0);
  }
}

}  // namespace gnio::metrics
