// SPDX-License-Identifier: Apache-2.0
// Batch receive from C++: gnio::BatchReceiver's next()/release() loop for a
// fixed window, the baseline that bench/python/batch_bench.py compares the
// Python module against. Prints one JSON line: the rate, and the age of each
// batch's newest packet when next() returned it (its receive timestamp
// against CLOCK_REALTIME; with a source that stamps frames as it makes them,
// such as synthetic:, that is the hand-off latency plus the ring's transit).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "gnio/batch.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The receive timestamp of packet `i` of a batch: one 8-byte copy on a GPU
// (the Python side pays the same through its DLPack consumer).
uint64_t timestamp_of(const gnio::BatchReceiver& rx, uint32_t buffer, uint32_t i) {
  const auto* ts = static_cast<const uint64_t*>(rx.arrays(buffer).timestamps) + i;
  if (rx.emulated()) return *ts;
  uint64_t v = 0;
#if GNIO_HAVE_CUDA
  if (cudaMemcpy(&v, ts, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) return 0;
#endif
  return v;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"C++ batch receive for a window: packets, batches and the rate, as one JSON line"};
  gnio::BatchConfig c;
  double seconds = 1.0;
  double timeout_us = 1000.0;
  std::string layout = "padded";
  app.add_option("--spec", c.spec, "RX spec, e.g. mem:count=0,frames=1024,size=64,ring=8192")->required();
  app.add_option("--gpu", c.gpu, "auto, a PCIe bus id, or cpu")->capture_default_str();
  app.add_option("--batch", c.batch, "packets per batch")->capture_default_str();
  app.add_option("--snap", c.snap, "bytes kept per packet (layout padded)")->capture_default_str();
  app.add_option("--layout", layout, "padded (snap bytes a packet) or flat (whole frames with offsets)")
      ->check(CLI::IsMember({"padded", "flat"}))
      ->capture_default_str();
  app.add_option("--flat-bytes", c.flat_bytes, "bytes of a flat batch (layout flat; 0: batch * 1536)")
      ->capture_default_str();
  app.add_option("--queues", c.queues, "RX queues")->capture_default_str();
  app.add_option("--seconds", seconds, "measured window")->capture_default_str();
  app.add_option("--timeout-us", timeout_us, "a partly filled batch is handed over after this")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  c.timeout = std::chrono::microseconds(static_cast<int64_t>(timeout_us));
  c.layout = layout == "flat" ? gnio::BatchLayout::Flat : gnio::BatchLayout::Padded;

  auto rx = gnio::BatchReceiver::open(c);
  if (!rx) {
    std::fprintf(stderr, "batch_bench: %s\n", rx.status().to_string().c_str());
    return 1;
  }
  uint64_t packets = 0, batches = 0, bytes = 0;
  std::vector<double> age_us;
  bool started = false;
  auto t0 = std::chrono::steady_clock::now(), end = t0;
  for (;;) {
    auto n = rx->next(std::chrono::milliseconds(1000));
    if (!n) {
      std::fprintf(stderr, "batch_bench: %s\n", n.status().to_string().c_str());
      return 1;
    }
    if (n->what != gnio::BatchNext::What::Batch) break;
    const uint64_t newest = timestamp_of(*rx, n->batch.buffer, n->batch.count - 1);
    const uint64_t seen = realtime_ns();
    const auto now = std::chrono::steady_clock::now();
    if (!started) {  // the window opens at the first batch: the kernel's start is not measured
      started = true;
      t0 = now;
      end = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    } else {
      packets += n->batch.count;
      bytes += n->batch.bytes;
      ++batches;
      if (newest && seen >= newest) age_us.push_back(static_cast<double>(seen - newest) / 1e3);
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
                              {"gbps", secs > 0 ? static_cast<double>(bytes) * 8 / secs / 1e9 : 0.0},
                              {"layout", layout},
                              {"age_p50_us", percentile(age_us, 0.50)}, {"age_p99_us", percentile(age_us, 0.99)},
                              {"emulated", rx->emulated()}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
