// SPDX-License-Identifier: Apache-2.0
// What `gnio run packet-processing` exports while it runs: flows of the GPU
// flow table as IPFIX biflow records (RFC 5103) at their active and idle
// timeouts, when they leave the table (evicted) and at the end of the run;
// DNS/HTTP/TLS records as they arrive, each to every --ipfix collector; and
// the same as JSON lines to --events-out, reopened on SIGHUP.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "gnio/events.hpp"
#include "gnio/ipfix.hpp"
#include "gnio/metrics.hpp"
#include "packet_processing/records.hpp"
#include "packet_processing/report.hpp"

namespace gnio::cli {

struct ExportOptions {
  std::vector<std::string> ipfix;  // udp://HOST:PORT, tcp://HOST:PORT
  double active_timeout_s = 1800;  // a flow is exported at least this often while it lasts
  double idle_timeout_s = 15;      // and once no packet came for this long
  uint32_t observation_domain = 1;
  std::string events_out;          // FILE or unix:PATH
};

struct RunOptions;
ExportOptions export_options(const RunOptions& o);

class RunExport {
 public:
  // Opens the collectors and the event sink; installs the SIGHUP handler
  // when there is an event sink.
  static Result<std::unique_ptr<RunExport>> open(const ExportOptions& o);

  bool active() const { return !exporters_.empty() || events_.is_open(); }
  // Records the kernel handed over since the last call.
  void add_records(const dev::app::Record* r, size_t n);
  // The flow tables now (every slot; the empty and busy ones are skipped):
  // exports what timed out and what left the table since the last scan;
  // `final` exports every flow.
  void scan(const std::vector<std::span<const dev::app::FlowEntry>>& tables, bool final);
  // An entry the table evicted (its flow is exported with the packets it
  // held, flowEndReason lackOfResources).
  void add_evicted(const dev::app::FlowEntry& e);
  // Evicted entries overwritten before the host read them (their packets
  // since the last scan were not exported).
  void set_evictions_lost(uint64_t n) { counts_.evictions_lost = n; publish(); }
  // Progress of the transports, SIGHUP's reopen; the summary for /metrics.
  void poll();
  // The end: what is queued is written, waiting at most `wait_ms` for TCP.
  void finish(int wait_ms);
  app::ExportSummary summary() const;
  // For /metrics, from the server's thread.
  void write_metrics(metrics::Writer& w) const;

 private:
  struct Tracked {
    uint64_t packets[2] = {0, 0}, bytes[2] = {0, 0};  // exported so far
    uint64_t since_ns = 0;                           // start of the part not yet exported
    uint64_t first_ns = 0;
    uint64_t generation = 0;
    dev::app::FlowEntry last{};                      // as the last scan saw it
  };
  void export_flow(const dev::app::FlowEntry& e, Tracked& t, uint8_t reason);
  void publish();

  std::vector<ipfix::Exporter> exporters_;
  events::Sink events_;
  std::string events_target_;
  ExportOptions options_;
  using KeyBytes = std::array<uint8_t, sizeof(dev::app::FlowKey)>;
  struct KeyHash {
    size_t operator()(const KeyBytes& k) const;
  };
  std::unordered_map<KeyBytes, Tracked, KeyHash> tracked_;
  uint64_t generation_ = 0;
  ipfix::RecordWriter record_;
  app::ExportSummary counts_;
  mutable std::mutex published_mutex_;
  app::ExportSummary published_;
};

}  // namespace gnio::cli
