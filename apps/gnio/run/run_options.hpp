// SPDX-License-Identifier: Apache-2.0
// The options of `gnio run packet-processing` (its command line is in
// run_options.cpp) and the run (cmd_run.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gnio::dev::app {
struct ReplyConfig;
}

namespace gnio::cli {

struct RunOptions {
  std::string rx;
  std::string tx;
  std::string gpu = "auto";
  uint32_t queues = 1;
  double duration_s = 0;
  uint64_t count = 0;
  std::string json_out;
  std::string flows_out;
  double flows_interval_s = 0;
  uint32_t top = 10;
  std::vector<std::string> ips;
  std::string mac;
  uint16_t udp_echo = 0;
  std::string print;
  std::string filter;
  std::string capture;              // --capture pcapng-out:FILE[,...]; empty: none
  uint32_t capture_depth = 4096;    // descriptors of each capture ring
  std::string decap = "all";
  std::string mem = "gpu";
  uint32_t block = 256, burst = 256, strides = 8192, flow_slots = 65536;
  uint32_t blocks = 0;  // per GPU; 0: one per queue
  std::string gpu_map;  // --gpu-map; empty: queues spread evenly
  bool require_gpu = false, quiet = false;
  std::string log_level;
  std::string metrics;
  bool metrics_allow_remote = false;
  double hang_timeout_s = 5;
  std::string snapshot_dir;
  // Export (run_export.hpp): --ipfix, --flow-active-timeout, --flow-idle-timeout, --events-out.
  std::vector<std::string> ipfix;
  double flow_active_timeout_s = 1800, flow_idle_timeout_s = 15;
  uint32_t observation_domain = 1;
  std::string events_out;
};

// The export's options on the packet-processing command (run_export.cpp).
void add_export_options(CLI::App& pp, RunOptions& o);

// What is wrong with `o` beyond what the command line checks (ranges that
// depend on each other, spec prefixes), as the message a user reads;
// nullopt when nothing is.
std::optional<std::string> check_run_options(const RunOptions& o);

// The reply addresses of --ip and --mac and the --udp-echo port into `c`;
// the message for the first that does not parse, nullopt when all do.
std::optional<std::string> parse_replies(const RunOptions& o, dev::app::ReplyConfig& c);

// Runs the reference application; the process's exit status.
int run_packet_processing(const RunOptions& o);

}  // namespace gnio::cli
