// SPDX-License-Identifier: Apache-2.0
// gnio_bench's sections: the Row each fills, the helpers they share
// (measure.cu) and one function per section, each in its own file. A
// section appends its rows to the table in order, each with its bound and
// the ratio to it, and returns the rows later sections and the targets read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../gnio_bench_options.hpp"
#include "gnio/eth.hpp"
#include "gnio/persistent_kernel.hpp"

namespace gnio::bench {
struct TouchTotals;
}

namespace gnio_bench {

// One line of the table. Throughput rows fill packets/bytes/seconds;
// floors and latency rows put their measurement in `result`.
struct Row {
  Row() = default;
  explicit Row(std::string n, uint32_t sz = 0, uint32_t q = 0) : name(std::move(n)), size(sz), queues(q) {}
  std::string name;
  uint32_t size = 0, queues = 0;
  uint64_t packets = 0, bytes = 0;
  double seconds = 0;
  std::string result;  // floors and latency
  std::string bound;   // what bounds the row
  double ratio = 0;    // row / bound (latency: bound / row)
  bool ok = true;
  double mpps() const { return seconds > 0 ? packets / seconds / 1e6 : 0; }
  double gbps() const { return seconds > 0 ? bytes * 8.0 / seconds / 1e9 : 0; }
};

// The floors the other rows are read against.
struct Floors {
  double h2d_gbs = 0, d2h_gbs = 0, pinned_read_gbs = 0, doorbell_us = 0;
  double h2d_gbit() const { return h2d_gbs * 8; }
  double d2h_gbit() const { return d2h_gbs * 8; }
  double pinned_read_gbit() const { return pinned_read_gbs * 8; }
};

// One line of the targets table, read off the rows.
struct Target {
  std::string what, measured, goal;
  bool met;
};

// ---- shared by the sections (measure.cu) -----------------------------------

// Where sums of bytes read on the host go, so that no read is left out.
extern volatile uint64_t g_touch_sink;

// A row whose kernel did not launch (e.g. too many registers for --block):
// it stays not ok, and stderr says why.
Row not_launched(const Row& r, const gnio::Status& s);

// A block's burst on average, from the receive kernel's own clock: its
// size and where the block's time went.
std::string burst_anatomy(const gnio::bench::TouchTotals& t);

// `count` frames of `size` bytes from the generator: the packets every
// ceiling and anti-pattern row carries (gnio's rows prebuild the same ones).
std::string generator_spec(uint32_t size, uint64_t count, uint32_t queues);
std::vector<std::vector<uint8_t>> make_frames(uint32_t size, uint32_t n);

// A ring buffer's size for frames of `size` bytes: a power of two, >= 64.
uint32_t buffer_size(uint32_t size);

gnio::LaunchConfig launch_config(uint32_t grid, uint32_t block, const char* name);

// Waits until the kernel has finished packets (the source delivers), then
// counts what it finishes in the window into `r`; `at_start` runs when the
// window opens (to take the first of two samples). False if nothing finished.
bool measure(const gnio::PersistentKernel& k, double window_s, Row& r, const std::function<void()>& at_start = {});
// The same for several kernels at once (one per device): one window, each
// kernel's count into its row of `rows`; false if one finished nothing.
bool measure_kernels(const std::vector<const gnio::PersistentKernel*>& kernels, double window_s,
                     const std::vector<Row*>& rows, const std::function<void()>& at_start = {});

struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0;
  size_t n = 0;
};
Percentiles percentiles(std::vector<double> v);

// "host" or "gpu", as the rows name their ring memory.
const char* mem_name(gnio::RingMem m);

// The ceiling row of `size` and ring memory `m`; an empty row (0 Mpps, so a
// ratio of 0) where the ceilings did not run.
const Row& ceiling_of(const std::vector<Row>& ceilings, uint32_t size, gnio::RingMem m);

// The row's bound is the ceiling `c`: its rate and the row's share of it.
void bound_by_ceiling(Row& r, const Row& c);

// ---- the sections, in table order --------------------------------------------

// floors.cu: host<->device copies, a kernel reading pinned memory, the
// doorbell round trip, a kernel launch. They always run.
Floors floor_rows(gnio::Gpu& gpu, const Options& o, std::vector<Row>& table);

// ceiling.cu: the bare ring by frame size and ring memory; then the anatomy
// of its 64 B rows (fewer stages or more blocks in the kernel).
std::vector<Row> ceiling_rows(gnio::Gpu& gpu, const Options& o, const Floors& f, std::vector<Row>& table);
void ceiling_anatomy_rows(gnio::Gpu& gpu, const Options& o, const std::vector<Row>& ceilings, std::vector<Row>& table);

// rx.cu: the NIC engine by size, ring memory, source and queue count; then
// the anatomy of its 64 B rows (the kernel only receives and releases).
// With several devices each row's queues are spread over them, and a row
// per device follows the total's.
std::vector<Row> gnio_rx_rows(const std::vector<gnio::Gpu*>& gpus, const Options& o, const std::vector<Row>& ceilings,
                              std::vector<Row>& table);

// One receive row of rx.cu: frame size, ring memory, queues, source.
struct RxCase {
  uint32_t size;
  gnio::RingMem mem;
  uint32_t queues;
  bool prebuilt;
  bool reads_nothing = false;  // an anatomy row: the kernel only receives and releases
};
// A receive run over one or more devices: the total, and one row per device
// that had queues (its bound the total, its ratio its share).
struct RxRun {
  Row total;
  std::vector<Row> per_device;
};
// Queues of one source, queues_of[d] of them (in queue order) on gpus[d],
// one receive kernel per device, measured in one window.
RxRun gnio_rx_on(const std::vector<gnio::Gpu*>& gpus, const std::vector<uint32_t>& queues_of, const Options& o,
                 const RxCase& c);
// `queues` spread evenly over `devices` in contiguous runs, as gnio run does.
std::vector<uint32_t> spread_queues(uint32_t queues, size_t devices);

// gpus.cpp: with two devices or more, whether the second slows the first
// (the first alone, then beside the second, same queues each) and one
// device against two (the same queues on the first, then spread).
void gpus_rows(const std::vector<gnio::Gpu*>& gpus, const Options& o, std::vector<Row>& table);
void gnio_anatomy_rows(gnio::Gpu& gpu, const Options& o, const std::vector<Row>& ceilings, std::vector<Row>& table);

// anti_patterns.cu: a launch per packet, a host copy and a launch per burst.
std::vector<Row> anti_pattern_rows(gnio::Gpu& gpu, const Options& o, const std::vector<Row>& ceilings,
                                   std::vector<Row>& table);

// tx.cu: TX from device and from pinned host memory payloads.
void tx_rows(gnio::Gpu& gpu, const Options& o, const Floors& f, std::vector<Row>& table);

// echo.cu: echo round trips at low load, back-off then busy poll, each
// with mem=host then mem=gpu.
std::vector<Row> echo_rows(gnio::Gpu& gpu, const Options& o, const Floors& f, std::vector<Row>& table);

// targets.cpp: the goals of a full run, read off the rows above.
std::vector<Target> read_targets(const Floors& f, const std::vector<Row>& ceilings, const std::vector<Row>& gnio_rows,
                                 const std::vector<Row>& anti, const std::vector<Row>& echoes);

// table.cpp: the machine line, the setup, the rows and the targets.
void print_table(const std::string& machine_line, const Options& o, const std::vector<Row>& rows,
                 const std::vector<Target>& targets);

}  // namespace gnio_bench
