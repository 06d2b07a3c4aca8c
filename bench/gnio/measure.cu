// SPDX-License-Identifier: Apache-2.0
// What gnio_bench's sections share: frames, launch settings, the measuring
// window, percentiles and the ceiling a row is read against.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <thread>

#include "sections.hpp"
#include "../bench_kernels.hpp"
#include "../common/clock.hpp"
#include "../common/table.hpp"
#include "gnio/host_reference.hpp"

using namespace gnio;
using bench::Clock;
using bench::fmt;

namespace gnio_bench {

volatile uint64_t g_touch_sink = 0;

Row not_launched(const Row& r, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", r.name.c_str(), s.to_string().c_str());
  return r;
}

std::string burst_anatomy(const bench::TouchTotals& t) {
  if (t.bursts == 0) return {};
  const double n = static_cast<double>(t.bursts);
  return fmt("; a block's burst: %.0f packets,", static_cast<double>(t.packets) / n) +
         fmt(" %.1f us to hold,", static_cast<double>(t.receive_ns) / n / 1e3) +
         fmt(" %.1f to read,", static_cast<double>(t.read_ns) / n / 1e3) +
         fmt(" %.1f to release", static_cast<double>(t.release_ns) / n / 1e3);
}

std::string generator_spec(uint32_t size, uint64_t count, uint32_t queues) {
  return "synthetic:count=" + std::to_string(count) + ",flows=1024,size=" + std::to_string(size) +
         ",queues=" + std::to_string(queues);
}

std::vector<std::vector<uint8_t>> make_frames(uint32_t size, uint32_t n) {
  std::vector<std::vector<uint8_t>> frames;
  for_each_host_frame(generator_spec(size, n, 1), [&](const std::vector<uint8_t>& f) { frames.push_back(f); });
  return frames;
}

uint32_t buffer_size(uint32_t size) { return std::max(64u, std::bit_ceil(size)); }

LaunchConfig launch_config(uint32_t grid, uint32_t block, const char* name) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.name = name;
  return c;
}

bool measure(const PersistentKernel& k, double window_s, Row& r, const std::function<void()>& at_start) {
  return measure_kernels({&k}, window_s, {&r}, at_start);
}

bool measure_kernels(const std::vector<const PersistentKernel*>& kernels, double window_s,
                     const std::vector<Row*>& rows, const std::function<void()>& at_start) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (const PersistentKernel* k : kernels)
    while (k->totals().packets == 0)
      if (Clock::now() > deadline) return false;
      else std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::duration<double>(window_s / 4));  // past the ramp
  if (at_start) at_start();
  std::vector<KernelTotals> a, b(kernels.size());
  for (const PersistentKernel* k : kernels) a.push_back(k->totals());
  const auto t0 = Clock::now();
  // A window in which a kernel finished nothing (threads of a busy emulated
  // device not scheduled) is extended, up to 2 s; a row still at 0 fails.
  bool all_moved = false;
  do {
    std::this_thread::sleep_for(std::chrono::duration<double>(window_s));
    all_moved = true;
    for (size_t i = 0; i < kernels.size(); ++i) {
      b[i] = kernels[i]->totals();
      all_moved = all_moved && b[i].packets > a[i].packets;
    }
  } while (!all_moved && bench::secs_since(t0) < 2.0);
  const double seconds = bench::secs_since(t0);
  for (size_t i = 0; i < kernels.size(); ++i) {
    rows[i]->seconds = seconds;
    rows[i]->packets = b[i].packets - a[i].packets;
    rows[i]->bytes = b[i].bytes - a[i].bytes;
  }
  return all_moved;
}

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.n = v.size();
  p.p50 = v[v.size() / 2];
  p.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  p.p999 = v[std::min(v.size() - 1, v.size() * 999 / 1000)];
  return p;
}

const char* mem_name(RingMem m) { return m == RingMem::Gpu ? "gpu" : "host"; }

const Row& ceiling_of(const std::vector<Row>& ceilings, uint32_t size, RingMem m) {
  static const Row kNoCeiling;
  for (const Row& c : ceilings)
    if (c.size == size && c.name.find(std::string("mem=") + mem_name(m)) != std::string::npos) return c;
  return kNoCeiling;
}

void bound_by_ceiling(Row& r, const Row& c) {
  r.bound = fmt("ceiling %.2f Mpps", c.mpps());
  r.ratio = bench::ratio(r.mpps(), c.mpps());
}

}  // namespace gnio_bench
