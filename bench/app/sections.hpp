// SPDX-License-Identifier: Apache-2.0
// app_bench's sections: the traffic each row is offered, what a row
// measures, and one function per section, each in its own file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../app_bench_options.hpp"
#include "gnio/gpu.hpp"
#include "gnio/status.hpp"
#include "packet_processing/pp_kernel.hpp"

namespace app_bench {

inline constexpr uint32_t kMaxQueues = gnio::app::PpArgs::kMaxQueues;
inline constexpr uint32_t kFlowSlots = 65536;  // gnio run's default --flow-slots
inline constexpr double kTarget = 0.70;  // the application costs no more than 30 % of receive-only

struct Traffic {
  std::string name;    // table label
  std::string frames;  // mem: spec without count/ring/queues
  uint64_t packets;
};

enum class Variant { ReceiveOnly, ParseOnly, PacketProcessing };

struct Measured {
  uint64_t packets = 0;                       // the kernel finished in all
  uint64_t offered = 0, delivered = 0, dropped = 0;
  uint64_t timed_packets = 0, timed_bytes = 0;  // finished inside the timed window
  double seconds = 0;
  std::vector<uint64_t> counters;  // ParseOnly: proto + reason; PacketProcessing: app::counter::kCount
  std::string error;
  double mpps() const { return seconds > 0 ? timed_packets / seconds / 1e6 : 0; }
  double gbps() const { return seconds > 0 ? timed_bytes * 8.0 / seconds / 1e9 : 0; }
};

struct TrafficResult {
  Traffic traffic;
  Measured base, parse, pp, host;  // the kernel rows' median runs
  std::vector<Measured> base_runs, parse_runs, pp_runs;
};

// traffic.cpp: a pcap (Ethernet link type) of every frame of the captures
// in `dir`, in file-name order, as the pcap driver reads them (mem: replays
// one file), with "file frames, ..." appended to `listing`; and the mem:
// spec of a traffic with the options' ring and queues.
gnio::Result<std::string> merge_captures(const std::string& dir, std::string& listing);
std::string mem_spec(const Options& o, const Traffic& t);

// device.cu: one variant over one traffic: its own device and queues (the
// same settings for every variant), the kernel, the timed window, the counts.
Measured run_device(gnio::Gpu& gpu, const Options& o, const Traffic& t, Variant v);

// host.cpp: the frames of one pass over the traffic, laid out one per
// 2048-byte buffer as a ring would hold them; and the packet-processing
// kernel's per-packet work (without replies) by one host thread over
// packets 0..n-1 of the traffic (frame i % frames), the stream the mem:
// source offers.
struct FrameImage {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> lens;
  static constexpr uint32_t kStride = 2048;
};
gnio::Result<FrameImage> frame_image(const Traffic& t);
Measured run_host(const FrameImage& img, uint64_t n);

// report.cpp: the machine line, the setup, the table of median runs, the
// spread of the runs, and every check (exact counts, the host core's
// counters against the kernels'); false if a check failed.
bool print_report(const gnio::Gpu& gpu, const Options& o, const std::vector<TrafficResult>& results,
                  const std::string& legend);

}  // namespace app_bench
