// obs_runner's options, parsed in obs_runner_main.cpp (host C++ only) and
// used in obs_runner.cu.
#pragma once

#include <cstdint>
#include <string>

namespace obs_runner {

struct Options {
  std::string nic, gpu = "cpu", metrics, snapshot_dir, log_level;
  uint32_t burst = 32, strides = 1024, hang_timeout_ms = 0, duration_s = 0;
  uint64_t stall_after = 0;
  bool linger = false, allow_remote = false, stall_ignores_exit = false;
};

// Receives from every RX queue of o.nic until it ends or a signal; the exit status.
int run(const Options& o);

}  // namespace obs_runner
