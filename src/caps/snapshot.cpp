// SPDX-License-Identifier: Apache-2.0
// Capability snapshots: the JSON a `gnio caps --save` writes, its parser,
// the leaf-by-leaf diff against a live report, and the readable table.
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "gnio/text_escape.hpp"
#include "gnio/capabilities.hpp"

namespace gnio {

namespace {

using nlohmann::json;

json caps_to_json(const EthCaps& c) {
  return json{
      {"driver", c.driver},
      {"max_rx_queues", c.max_rx_queues},
      {"max_tx_queues", c.max_tx_queues},
      {"max_burst", c.max_burst},
      {"max_packet_size", c.max_packet_size},
      {"min_stride", c.min_stride},
      {"max_stride", c.max_stride},
      {"max_ring_entries", c.max_ring_entries},
      {"rx_supported", c.rx_supported},
      {"tx_supported", c.tx_supported},
      {"rx_cyclic", c.rx_cyclic},
      {"tx_regular", c.tx_regular},
      {"tx_wait_on_time", c.tx_wait_on_time},
      {"rx_checksum_state", c.rx_checksum_state},
      {"rx_timestamp", c.rx_timestamp},
      {"rx_rss_hash", c.rx_rss_hash},
      {"drops_when_full", c.drops_when_full},
  };
}

json device_to_json(const CudaDeviceInfo& d) {
  return json{
      {"ordinal", d.ordinal},
      {"bus_id", d.bus_id},
      {"name", escape_text(d.name)},
      {"cc_major", d.cc_major},
      {"cc_minor", d.cc_minor},
      {"total_mem_bytes", d.total_mem_bytes},
      {"multiprocessors", d.multiprocessors},
      {"can_map_host_memory", d.can_map_host_memory},
      {"unified_addressing", d.unified_addressing},
      {"concurrent_managed_access", d.concurrent_managed_access},
      {"gpudirect_rdma", d.gpudirect_rdma},
      {"gpudirect_rdma_writes_ordering", d.gpudirect_rdma_writes_ordering},
      {"stream_mem_ops", d.stream_mem_ops},
      {"stream_mem_ops_64", d.stream_mem_ops_64},
      {"async_engines", d.async_engines},
      {"pcie_link_gen", d.pcie_link_gen},
      {"pcie_link_width", d.pcie_link_width},
  };
}

json axis_to_json(const AxisVerdict& a) {
  return json{{"verdict", verdict_name(a.verdict)}, {"reason", escape_text(a.reason)}};
}

std::vector<std::string> escaped_notes(const std::vector<std::string>& notes) {
  std::vector<std::string> out;
  for (const std::string& n : notes) out.push_back(escape_text(n));
  return out;
}

// The spec and the GPU are the user's text and the errors and reasons quote
// them: all are written by escape_text()'s rule (a file name may hold any
// bytes) and read back by unescape_text(), so that `gnio caps --diff` opens
// the very file the snapshot names.
json report_to_json(const CapabilityReport& r) {
  json nic{{"state", nic_state_name(r.nic.state)}, {"spec", escape_text(r.nic.spec)}};
  if (r.nic.state == NicAxis::State::Queried) nic["caps"] = caps_to_json(r.nic.caps);
  if (!r.nic.error.empty()) nic["error"] = escape_text(r.nic.error);

  json cuda{{"state", cuda_state_name(r.cuda.state)},
            {"gpu", escape_text(r.cuda.gpu)},
            {"runtime_version", r.cuda.runtime_version},
            {"driver_version", r.cuda.driver_version}};
  if (r.cuda.state == CudaAxis::State::Device) cuda["device"] = device_to_json(r.cuda.device);
  if (!r.cuda.error.empty()) cuda["error"] = escape_text(r.cuda.error);

  json features = json::object();
  for (const auto& v : r.features) {
    features[std::string(feature_name(v.feature))] = json{
        {"queue", feature_queue(v.feature)}, {"supported", verdict_name(v.overall())},
        {"nic", axis_to_json(v.nic)},        {"cuda", axis_to_json(v.cuda)},
        {"notes", escaped_notes(v.notes)},
    };
  }
  return json{{"schema_version", r.schema_version},
              {"gnio_version", r.gnio_version},
              {"nic", nic},
              {"cuda", cuda},
              {"features", features}};
}

// Reads one field into `out`, naming the path when it is missing or of the
// wrong type; absent optional fields keep their defaults.
class Reader {
 public:
  // A text field written by escape_text()'s rule, as its bytes.
  void get_text(const json& obj, const char* key, std::string& out, const std::string& where, bool required = true) {
    get(obj, key, out, where, required);
    out = unescape_text(out);
  }

  template <typename T>
  void get(const json& obj, const char* key, T& out, const std::string& where, bool required = true) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(where + "." + key + " is missing");
      return;
    }
    try {
      out = it->template get<T>();
    } catch (const json::exception&) {
      fail(where + "." + key + " has the wrong type (" + it->dump() + ")");
    }
  }
  void fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
  }
  std::string error;
};

std::optional<Verdict> verdict_from_name(const std::string& s) {
  for (Verdict v : {Verdict::Yes, Verdict::No, Verdict::Unknown, Verdict::NotApplicable})
    if (verdict_name(v) == s) return v;
  return std::nullopt;
}

void flatten(const json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out[prefix] = j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

std::string bytes_text(uint64_t b) {
  char buf[64];
  if (b >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / (1ull << 30));
  else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(b));
  return buf;
}

std::string version_text(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

}  // namespace

// Every text of outside origin is escaped (report_to_json()); replacing what
// still is not UTF-8 keeps the dump from throwing whatever a driver says.
std::string to_json(const CapabilityReport& report, int indent) {
  return report_to_json(report).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<CapabilityReport> capability_report_from_json(std::string_view text) {
  auto bad = [](const std::string& what) {
    return Status(Errc::InvalidValue, Layer::Caps,
                  "capability snapshot is not usable: " + what +
                      "; write a fresh one with `gnio caps --save FILE` (same --nic/--gpu)");
  };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("the text is not a JSON object");

  Reader rd;
  CapabilityReport r;
  rd.get(j, "schema_version", r.schema_version, "$");
  if (!rd.error.empty()) return bad(rd.error);
  if (r.schema_version != CapabilityReport::kSchemaVersion)
    return bad("schema_version " + std::to_string(r.schema_version) + " is not the supported " +
               std::to_string(CapabilityReport::kSchemaVersion));
  rd.get(j, "gnio_version", r.gnio_version, "$", false);

  const json& nic = j.contains("nic") ? j["nic"] : json::object();
  std::string nic_state;
  rd.get(nic, "state", nic_state, "nic");
  rd.get_text(nic, "spec", r.nic.spec, "nic");
  rd.get_text(nic, "error", r.nic.error, "nic", false);
  if (nic_state == "queried") {
    r.nic.state = NicAxis::State::Queried;
    const json& c = nic.contains("caps") ? nic["caps"] : json::object();
    EthCaps& e = r.nic.caps;
    rd.get(c, "driver", e.driver, "nic.caps");
    rd.get(c, "max_rx_queues", e.max_rx_queues, "nic.caps");
    rd.get(c, "max_tx_queues", e.max_tx_queues, "nic.caps");
    rd.get(c, "max_burst", e.max_burst, "nic.caps");
    rd.get(c, "max_packet_size", e.max_packet_size, "nic.caps");
    rd.get(c, "min_stride", e.min_stride, "nic.caps");
    rd.get(c, "max_stride", e.max_stride, "nic.caps");
    rd.get(c, "max_ring_entries", e.max_ring_entries, "nic.caps");
    rd.get(c, "rx_supported", e.rx_supported, "nic.caps");
    rd.get(c, "tx_supported", e.tx_supported, "nic.caps");
    rd.get(c, "rx_cyclic", e.rx_cyclic, "nic.caps");
    rd.get(c, "tx_regular", e.tx_regular, "nic.caps");
    rd.get(c, "tx_wait_on_time", e.tx_wait_on_time, "nic.caps");
    rd.get(c, "rx_checksum_state", e.rx_checksum_state, "nic.caps");
    rd.get(c, "rx_timestamp", e.rx_timestamp, "nic.caps");
    rd.get(c, "rx_rss_hash", e.rx_rss_hash, "nic.caps");
    rd.get(c, "drops_when_full", e.drops_when_full, "nic.caps");
  } else if (nic_state == "unavailable") {
    r.nic.state = NicAxis::State::Unavailable;
  } else if (nic_state == "not_queried") {
    r.nic.state = NicAxis::State::NotQueried;
  } else if (rd.error.empty()) {
    rd.fail("nic.state '" + nic_state + "' is not one of not_queried, queried, unavailable");
  }

  const json& cuda = j.contains("cuda") ? j["cuda"] : json::object();
  std::string cuda_state;
  rd.get(cuda, "state", cuda_state, "cuda");
  rd.get_text(cuda, "gpu", r.cuda.gpu, "cuda");
  rd.get(cuda, "runtime_version", r.cuda.runtime_version, "cuda", false);
  rd.get(cuda, "driver_version", r.cuda.driver_version, "cuda", false);
  rd.get_text(cuda, "error", r.cuda.error, "cuda", false);
  if (cuda_state == "device") {
    r.cuda.state = CudaAxis::State::Device;
    const json& d = cuda.contains("device") ? cuda["device"] : json::object();
    CudaDeviceInfo& i = r.cuda.device;
    rd.get(d, "ordinal", i.ordinal, "cuda.device");
    rd.get(d, "bus_id", i.bus_id, "cuda.device");
    rd.get_text(d, "name", i.name, "cuda.device");
    rd.get(d, "cc_major", i.cc_major, "cuda.device");
    rd.get(d, "cc_minor", i.cc_minor, "cuda.device");
    rd.get(d, "total_mem_bytes", i.total_mem_bytes, "cuda.device");
    rd.get(d, "multiprocessors", i.multiprocessors, "cuda.device");
    rd.get(d, "can_map_host_memory", i.can_map_host_memory, "cuda.device");
    rd.get(d, "unified_addressing", i.unified_addressing, "cuda.device");
    rd.get(d, "concurrent_managed_access", i.concurrent_managed_access, "cuda.device");
    rd.get(d, "gpudirect_rdma", i.gpudirect_rdma, "cuda.device");
    rd.get(d, "gpudirect_rdma_writes_ordering", i.gpudirect_rdma_writes_ordering, "cuda.device");
    rd.get(d, "stream_mem_ops", i.stream_mem_ops, "cuda.device");
    rd.get(d, "stream_mem_ops_64", i.stream_mem_ops_64, "cuda.device");
    rd.get(d, "async_engines", i.async_engines, "cuda.device");
    rd.get(d, "pcie_link_gen", i.pcie_link_gen, "cuda.device");
    rd.get(d, "pcie_link_width", i.pcie_link_width, "cuda.device");
  } else if (cuda_state == "emulated") {
    r.cuda.state = CudaAxis::State::Emulated;
  } else if (cuda_state == "unavailable") {
    r.cuda.state = CudaAxis::State::Unavailable;
  } else if (rd.error.empty()) {
    rd.fail("cuda.state '" + cuda_state + "' is not one of device, emulated, unavailable");
  }

  // The verdicts are kept as saved (they are what that gnio version said),
  // so a diff also shows a changed rule.
  const json& feats = j.contains("features") ? j["features"] : json::object();
  for (auto it = feats.begin(); it != feats.end(); ++it) {
    auto f = feature_from_name(it.key());
    if (!f) continue;
    FeatureVerdict v;
    v.feature = *f;
    const std::string where = "features." + it.key();
    for (auto [key, axis] : {std::pair{"nic", &v.nic}, std::pair{"cuda", &v.cuda}}) {
      const json& a = it.value().contains(key) ? it.value()[key] : json::object();
      std::string verdict;
      rd.get(a, "verdict", verdict, where + "." + key);
      rd.get_text(a, "reason", axis->reason, where + "." + key, false);
      auto parsed = verdict_from_name(verdict);
      if (parsed) axis->verdict = *parsed;
      else if (rd.error.empty()) rd.fail(where + "." + key + ".verdict '" + verdict + "' is not a verdict");
    }
    rd.get(it.value(), "notes", v.notes, where, false);
    for (std::string& n : v.notes) n = unescape_text(n);
    r.features.push_back(std::move(v));
  }
  if (!rd.error.empty()) return bad(rd.error);
  return r;
}

std::vector<CapsChange> diff(const CapabilityReport& before, const CapabilityReport& after) {
  std::map<std::string, std::string> a, b;
  flatten(report_to_json(before), "", a);
  flatten(report_to_json(after), "", b);
  std::vector<CapsChange> out;
  for (const auto& [path, value] : a) {
    auto it = b.find(path);
    if (it == b.end()) out.push_back({path, value, "(absent)"});
    else if (it->second != value) out.push_back({path, value, it->second});
  }
  for (const auto& [path, value] : b)
    if (!a.contains(path)) out.push_back({path, "(absent)", value});
  return out;
}

std::string format_report(const CapabilityReport& r) {
  std::string s;
  auto line = [&s](const std::string& k, const std::string& v) { s += "  " + pad(k, 20) + v + "\n"; };

  s += "NIC axis";
  if (r.nic.state == NicAxis::State::NotQueried) {
    s += ": not queried (pass --nic SPEC, e.g. --nic synthetic:count=10)\n";
  } else if (r.nic.state == NicAxis::State::Unavailable) {
    s += " (" + r.nic.spec + "): unavailable: " + r.nic.error + "\n";
  } else {
    const EthCaps& c = r.nic.caps;
    s += " (" + r.nic.spec + ")\n";
    line("driver", c.driver);
    line("RX / TX queues", std::to_string(c.max_rx_queues) + " / " + std::to_string(c.max_tx_queues));
    line("max burst", std::to_string(c.max_burst) + " packets");
    line("max packet size", std::to_string(c.max_packet_size) + " bytes");
    line("RX stride", std::to_string(c.min_stride) + ".." + std::to_string(c.max_stride) + " bytes");
    line("max ring entries", std::to_string(c.max_ring_entries));
    std::string rxq = c.rx_supported ? (c.rx_cyclic ? "cyclic" : "none exposable") : "no RX path";
    std::string txq;
    if (!c.tx_supported) txq = "no TX path";
    else {
      if (c.tx_regular) txq = "regular";
      if (c.tx_wait_on_time) txq += txq.empty() ? "wait_on_time" : ", wait_on_time";
      if (txq.empty()) txq = "none exposable";
    }
    line("RX queue types", rxq);
    line("TX queue types", txq);
    std::string off;
    for (auto [on, name] : {std::pair{c.rx_checksum_state, "checksum state"}, std::pair{c.rx_timestamp, "timestamp"},
                            std::pair{c.rx_rss_hash, "RSS hash"}})
      if (on) off += off.empty() ? name : std::string(", ") + name;
    line("RX offloads", off.empty() ? "none" : off);
    line("drops when full", c.drops_when_full ? "yes (a wire)" : "no");
  }

  s += "\nCUDA axis";
  if (r.cuda.state == CudaAxis::State::Emulated) {
    s += " (gpu cpu): emulated device, kernel code runs on CPU threads\n";
  } else if (r.cuda.state == CudaAxis::State::Unavailable) {
    s += " (gpu " + r.cuda.gpu + "): unavailable: " + r.cuda.error + "\n";
    line("CUDA runtime", version_text(r.cuda.runtime_version));
    line("CUDA driver", version_text(r.cuda.driver_version));
  } else {
    const CudaDeviceInfo& d = r.cuda.device;
    s += " (gpu " + r.cuda.gpu + ")\n";
    line("device", "#" + std::to_string(d.ordinal) + " " + d.name);
    line("PCIe bus id", d.bus_id);
    line("PCIe link", d.pcie_link_gen > 0 ? "gen " + std::to_string(d.pcie_link_gen) + " x" +
                                                std::to_string(d.pcie_link_width)
                                          : "unknown (sysfs does not say)");
    line("compute capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
    line("memory", bytes_text(d.total_mem_bytes));
    line("multiprocessors", std::to_string(d.multiprocessors));
    line("map host memory", d.can_map_host_memory ? "yes" : "no");
    line("unified addressing", d.unified_addressing ? "yes" : "no");
    line("GPUDirect RDMA", d.gpudirect_rdma ? "yes" : "no");
    line("RDMA writes order", std::to_string(d.gpudirect_rdma_writes_ordering));
    line("stream mem ops", std::string(d.stream_mem_ops ? "wait NOR yes" : "wait NOR no") +
                               (d.stream_mem_ops_64 ? ", 64-bit yes" : ", 64-bit no"));
    line("async engines", std::to_string(d.async_engines));
    line("CUDA runtime", version_text(r.cuda.runtime_version));
    line("CUDA driver", version_text(r.cuda.driver_version));
  }

  s += "\n  " + pad("feature", 19) + pad("queue", 18) + pad("NIC", 9) + pad("CUDA", 9) + "supported\n";
  // One line per distinct reason, listing the features it concerns, so an
  // axis that could not be queried is explained once.
  std::vector<std::pair<std::string, std::string>> why;  // (tag and reason, features)
  auto add_why = [&why](const std::string& text, const std::string& feature) {
    for (auto& [t, fs] : why)
      if (t == text) {
        fs += ", " + feature;
        return;
      }
    why.emplace_back(text, feature);
  };
  for (const auto& v : r.features) {
    std::string name(feature_name(v.feature));
    s += "  " + pad(name, 19) + pad(std::string(feature_queue(v.feature)), 18) +
         pad(std::string(verdict_name(v.nic.verdict)), 9) + pad(std::string(verdict_name(v.cuda.verdict)), 9) +
         std::string(verdict_name(v.overall())) + "\n";
    for (auto [axis, av] : {std::pair{"nic", &v.nic}, std::pair{"cuda", &v.cuda}})
      if (av->verdict == Verdict::No || av->verdict == Verdict::Unknown)
        add_why("[" + std::string(axis) + " axis, " + std::string(verdict_name(av->verdict)) + "] " + av->reason,
                name);
    for (const auto& n : v.notes) add_why("[info] " + n, name);
  }
  if (!why.empty()) {
    s += "\nWhy:\n";
    for (const auto& [text, fs] : why) s += "  " + fs + " " + text + "\n";
  }
  return s;
}

}  // namespace gnio
