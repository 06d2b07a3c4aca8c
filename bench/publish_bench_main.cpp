// SPDX-License-Identifier: Apache-2.0
// The command line of publish_bench. CLI11 is parsed in this host-only file
// so that nvcc never compiles it.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "publish/options.hpp"

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  publish_bench::Options o;
  CLI::App app{
      "publish_bench: how a ring in device memory can be published to a running persistent kernel, by "
      "publisher count: stream work per publisher, one shared stream, or the kernel copying from pinned memory"};
  app.add_option("--gpu", o.gpu, "PCIe bus id or auto (a CUDA device is needed)")->capture_default_str();
  app.add_option("--publishers", o.publishers, "publisher counts, one row each")
      ->delimiter(',')
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  app.add_option("--data-bytes", o.data_bytes, "packet bytes per publication")
      ->check(CLI::Range(1024u, 64u << 20))
      ->capture_default_str();
  app.add_option("--desc-bytes", o.desc_bytes, "descriptor bytes per publication")
      ->check(CLI::Range(32u, 16u << 20))
      ->capture_default_str();
  app.add_option("--depth", o.depth, "publications in flight per publisher")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  app.add_option("--window", o.window_s, "seconds measured per row")->check(CLI::Range(0.05, 60.0))->capture_default_str();
  app.add_option("--only", o.only, "variants to run: streams, shared, events, pinned-write, event-store, pull")
      ->check(CLI::IsMember({"streams", "shared", "events", "pinned-write", "event-store", "pull"}))
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  return publish_bench::run(o);
}
