// SPDX-License-Identifier: Apache-2.0
// What a run of `gnio run packet-processing` found, and its three outputs:
// the summary table, the JSON report (schema versioned) and the flow export
// (CSV or JSON lines).
//
// Text from the wire (DNS qname, HTTP host, path and version, TLS SNI) and
// the specs' file names are written by escape_text()'s rule
// (src/core/text_escape.hpp): printable ASCII and well-formed UTF-8 as they
// are (C1 controls excepted), `\\` for a backslash, `\xNN` for every other
// byte. The JSON strings are therefore always valid UTF-8 and the bytes can
// be read back from them.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/eth.hpp"
#include "gnio/persistent_kernel.hpp"
#include "packet_processing/analyze.hpp"
#include "packet_processing/flow_table.hpp"
#include "packet_processing/pp_kernel.hpp"

namespace gnio::app {

// 2: names escaped by escape_text()'s rule, run.input_error.
// 3: tunnels: run.decap, the tunnels object, tunnel and tunnel_id of each
//    flow (report, JSON lines and two CSV columns at the end) and record,
//    the tunnel reasons in malformed.
// 4: the capture object (with --capture).
inline constexpr int kReportSchemaVersion = 4;

// Why a run stopped: every source at its end, a stop signal, --duration or
// --count reached, or a source that ended in a read error.
enum class StopReason : uint8_t { EndOfInput, Signal, Duration, Count, InputError };

// A reason's name in the JSON report (run.stop_reason) and in the summary's
// first line (which names the signal instead when one asked to stop).
constexpr std::string_view stop_reason_name(StopReason r) {
  constexpr std::array<std::string_view, 5> names{"end of input", "signal", "duration", "count", "input error"};
  return names[static_cast<size_t>(r)];
}

struct RunInfo {
  std::string rx, tx, gpu, device;
  bool emulated = false;
  uint32_t queues = 1;
  double seconds = 0;
  StopReason stop_reason = StopReason::EndOfInput;
  int signal = 0;           // the signal that asked to stop (SIGINT, SIGTERM), else 0
  std::string input_error;  // with StopReason::InputError: what the source said (file, byte offset, reason)
  std::string filter;       // the --filter expression; empty: every packet analysed
  std::string decap = "all";  // the --decap set, as decap_text() writes it
  std::string capture;        // the --capture spec; empty: none
};

// One GPU's part of the run: its queues and kernel, and its counters.
struct GpuPart {
  std::string gpu, device;
  bool emulated = false;
  std::vector<uint32_t> queues;
  uint32_t blocks = 0;
  KernelTotals kernel{};
  std::vector<uint64_t> counters;  // counter::kCount
};

// What the run exported (--ipfix, --events-out): per collector, the
// records sent and those lost by reason (ipfix::LossReason order).
struct ExportSummary {
  struct Collector {
    std::string url;
    uint64_t records_sent = 0, messages_sent = 0, template_sends = 0, connects = 0, backpressure = 0;
    std::array<uint64_t, 3> lost{};  // collector_down, socket_buffer_full, queue_full
  };
  std::vector<Collector> collectors;
  uint64_t flow_records = 0;   // flow records made (each to every collector)
  uint64_t app_records = 0;    // DNS/HTTP/TLS records made
  std::array<uint64_t, 6> flow_end_reasons{};  // by IPFIX flowEndReason (1 idle .. 5 lack of resources)
  uint64_t evictions_lost = 0;  // evicted entries overwritten in the eviction log before the host read them
  std::string events_target;   // --events-out; empty: none
  uint64_t event_lines = 0, events_lost = 0, event_reopens = 0;
  bool any() const { return !collectors.empty() || !events_target.empty(); }
};
inline constexpr const char* kLossReasonNames[3] = {"collector_down", "socket_buffer_full", "queue_full"};

struct RunResult {
  RunInfo info;
  std::vector<GpuPart> gpus;  // one per GPU, in --gpu order; counters add up to `counters`
  std::vector<uint64_t> counters;  // counter::kCount
  std::vector<dev::app::Record> records;
  uint64_t records_lost = 0;  // claimed by the kernel but never made ready (stopped while the host was behind)
  std::vector<dev::app::FlowEntry> flows;  // the table's occupied slots at the end
  std::vector<RxqStats> rx;
  TxqStats tx{};
  TxqStats capture{};  // the --capture queues' counters: written (packets) and dropped by the writer
  KernelTotals kernel{};
  nlohmann::json capabilities;
  ExportSummary exported;

  uint64_t count(uint32_t index) const { return counters[index]; }
  double mpps() const { return info.seconds > 0 ? count(counter::kPackets) / info.seconds / 1e6 : 0; }
  double gbps() const { return info.seconds > 0 ? count(counter::kBytes) * 8.0 / info.seconds / 1e9 : 0; }
};

std::string address_text(const uint8_t* a, uint8_t version);
// The id of the tunnel a flow came out of: the VNI, TEID or GRE key in
// decimal, MPLS labels top first as "16/1001"; "" out of no tunnel or IP in IP.
std::string tunnel_id_text(uint32_t tunnel, uint32_t labels, uint64_t id);
inline std::string tunnel_id_text(const dev::app::FlowKey& k) { return tunnel_id_text(k.tunnel, k.labels, k.tunnel_id); }
// "syn", "established", "closing", "closed", "reset" from the TCP flags seen
// each way; "" for other protocols.
std::string tcp_state(const dev::app::FlowEntry& e);
// Occupied slots, busiest (bytes both ways) first.
std::vector<dev::app::FlowEntry> sorted_flows(const dev::app::FlowEntry* slots, uint32_t count);

/// @brief The bytes of a record's name (qname, host, SNI) and path, by their
/// lengths: either may hold any byte, 0x00 included.
std::string_view record_name(const dev::app::Record& r);
std::string_view record_path(const dev::app::Record& r);

nlohmann::json record_json(const dev::app::Record& r);
/// @brief The line --print shows for a record (no newline), its text as in
/// record_json(): no byte from the wire reaches the terminal as a control.
std::string record_line(const dev::app::Record& r);
/// @brief JSON as text for a file or a line: never throws on a string that is
/// not UTF-8 (replaced by U+FFFD; escape_text() keeps them out in the first place).
std::string json_text(const nlohmann::json& j, int indent = -1);
nlohmann::json flow_json(const dev::app::FlowEntry& e);
nlohmann::json report_json(const RunResult& r, uint32_t top_flows);
/// @brief The report's "export" object: per collector the records sent and
/// lost by reason, the flow and record counts, the event stream's lines.
nlohmann::json export_json(const ExportSummary& e);
/// @brief The report's "capture" object (--capture): offered = written +
/// dropped, the kernel's ring_full and the writer's reasons.
nlohmann::json capture_json(const RunResult& r);
/// @brief The summary's lines about the export ("" when nothing was exported).
std::string export_text(const ExportSummary& e);
std::string summary_text(const RunResult& r, uint32_t top_flows);
// One line of the flow export; csv_header() first for CSV.
std::string csv_header();
std::string flow_csv(const dev::app::FlowEntry& e, uint64_t snapshot, double at_s);

}  // namespace gnio::app
