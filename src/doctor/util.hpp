// SPDX-License-Identifier: Apache-2.0
// Small helpers of the doctor: files under fake roots, child processes with
// a deadline, /proc/self/status capability bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gnio::doctor::detail {

// The whole file; nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);
std::string first_line(std::string_view text);
std::string trim(std::string_view s);
bool path_exists(const std::string& path);

struct CommandResult {
  bool started = false;  // false: the executable could not be run
  bool timed_out = false;
  int exit_code = -1;
  std::string output;    // stdout and stderr together
};
// Runs argv[0] (searched on PATH) with extra environment variables set,
// killing it after timeout_ms so that the doctor never hangs.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env = {},
                          int timeout_ms = 3000);

// "CapEff:\t000001fffeffffff" from <proc_root>/self/status; nullopt when
// unreadable.
std::optional<uint64_t> effective_capabilities(const std::string& proc_root);

// "1.5 GiB", "8 MiB", "512 bytes".
std::string bytes_text(uint64_t bytes);

}  // namespace gnio::doctor::detail
