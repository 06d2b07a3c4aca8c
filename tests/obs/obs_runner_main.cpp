// obs_runner's command line. CLI11 is parsed in this host-only file so that
// nvcc never compiles it.
#include <CLI/CLI.hpp>

#include "obs_runner_options.hpp"

int main(int argc, char** argv) {
  obs_runner::Options o;
  CLI::App app{"obs_runner: a persistent kernel on an RX spec with metrics, hang detection and clean stop"};
  app.add_option("--nic", o.nic, "RX spec")->required();
  app.add_option("--gpu", o.gpu, "GPU bus id or cpu")->capture_default_str();
  app.add_option("--metrics", o.metrics, "serve /metrics on HOST:PORT");
  app.add_flag("--metrics-allow-remote", o.allow_remote, "allow a non-loopback metrics address");
  app.add_option("--hang-timeout", o.hang_timeout_ms, "ms without a heartbeat before a block is hung (0: off)");
  app.add_option("--stall-after", o.stall_after, "a block stops beating after this many packets (0: never)");
  app.add_flag("--stall-ignores-exit", o.stall_ignores_exit, "the stalled block ignores the exit flag too");
  app.add_option("--duration", o.duration_s, "stop after this many seconds (0: when the source ends)");
  app.add_flag("--linger", o.linger, "keep serving after the source ended, until SIGINT/SIGTERM");
  app.add_option("--snapshot-dir", o.snapshot_dir, "save the capability snapshot of the start here");
  app.add_option("--log-level", o.log_level, "error|warn|info|debug|trace");
  app.add_option("--burst", o.burst, "packets per receive");
  app.add_option("--strides", o.strides, "RX ring strides");
  CLI11_PARSE(app, argc, argv);
  return obs_runner::run(o);
}
