// SPDX-License-Identifier: Apache-2.0
// Batch receive from C++: gnio::BatchReceiver's next()/release() loop for a
// fixed window, the baseline that bench/python/batch_bench.py compares the
// Python module against. Prints one JSON line.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include "gnio/batch.hpp"

int main(int argc, char** argv) {
  CLI::App app{"C++ batch receive for a window: packets, batches and the rate, as one JSON line"};
  gnio::BatchConfig c;
  double seconds = 1.0;
  app.add_option("--spec", c.spec, "RX spec, e.g. mem:count=0,frames=1024,size=64,ring=8192")->required();
  app.add_option("--gpu", c.gpu, "auto, a PCIe bus id, or cpu")->capture_default_str();
  app.add_option("--batch", c.batch, "packets per batch")->capture_default_str();
  app.add_option("--snap", c.snap, "bytes kept per packet")->capture_default_str();
  app.add_option("--queues", c.queues, "RX queues")->capture_default_str();
  app.add_option("--seconds", seconds, "measured window")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto rx = gnio::BatchReceiver::open(c);
  if (!rx) {
    std::fprintf(stderr, "batch_bench: %s\n", rx.status().to_string().c_str());
    return 1;
  }
  uint64_t packets = 0, batches = 0;
  bool started = false;
  auto t0 = std::chrono::steady_clock::now(), end = t0;
  for (;;) {
    auto n = rx->next(std::chrono::milliseconds(1000));
    if (!n) {
      std::fprintf(stderr, "batch_bench: %s\n", n.status().to_string().c_str());
      return 1;
    }
    if (n->what != gnio::BatchNext::What::Batch) break;
    const auto now = std::chrono::steady_clock::now();
    if (!started) {  // the window opens at the first batch: the kernel's start is not measured
      started = true;
      t0 = now;
      end = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    } else {
      packets += n->batch.count;
      ++batches;
    }
    if (auto s = rx->release(n->batch.buffer); !s) {
      std::fprintf(stderr, "batch_bench: %s\n", s.to_string().c_str());
      return 1;
    }
    if (now >= end) break;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  (void)rx->close();
  const nlohmann::json out = {{"packets", packets}, {"batches", batches}, {"seconds", secs},
                              {"mpps", secs > 0 ? static_cast<double>(packets) / secs / 1e6 : 0.0},
                              {"emulated", rx->emulated()}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
