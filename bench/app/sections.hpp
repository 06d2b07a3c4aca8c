// SPDX-License-Identifier: Apache-2.0
// app_bench's sections: the traffic each row is offered, what a row
// measures, and one function per section, each in its own file.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../app_bench_options.hpp"
#include "gnio/gpu.hpp"
#include "gnio/status.hpp"
#include "packet_processing/pp_kernel.hpp"

namespace app_bench {

inline constexpr uint32_t kMaxQueues = gnio::app::PpArgs::kMaxQueues;
inline constexpr uint32_t kFlowSlots = 65536;  // gnio run's default --flow-slots
inline constexpr double kTarget = 0.70;  // the application costs no more than 30 % of receive-only
inline constexpr double kScalingTarget = 0.80;  // compute-heavy rows: of linear scaling from one block

struct Traffic {
  std::string name;    // table label
  std::string frames;  // mem: spec without count/ring/queues
  uint64_t packets;
};

// FilterShort, FilterLong: receive-only with a tcpdump filter run on every
// packet (kShortFilter, kLongFilter). Capture: the packet-processing kernel
// recording every packet to pcapng-out: in the temporary folder.
// ComputeHeavy: receive-only plus compute_stage() on every packet, its
// digests summed (Measured::digest).
enum class Variant { ReceiveOnly, ParseOnly, PacketProcessing, FilterShort, FilterLong, Capture, ComputeHeavy };
inline constexpr const char* kShortFilter = "udp port 53";
inline constexpr const char* kLongFilter =
    "(udp and (port 53 or port 123 or portrange 5000-5100)) or (tcp and (port 80 or port 443) and "
    "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0) or (ip and net 10.0.0.0/8 and not icmp) or (ip6 and udp) or vlan";

struct Measured {
  uint64_t packets = 0;                       // the kernel finished in all
  uint64_t offered = 0, delivered = 0, dropped = 0;
  uint64_t timed_packets = 0, timed_bytes = 0;  // finished inside the timed window
  double seconds = 0;
  std::vector<uint64_t> counters;  // ParseOnly: proto + reason; PacketProcessing, Capture: app::counter::kCount
  uint64_t matched = 0, filtered = 0;  // FilterShort, FilterLong: the filter's verdicts
  // Capture: frames and bytes written to the file, those not written (the
  // kernel's ring_full and the writer's drops), and the seconds from the
  // first packet finished to the writer's last write.
  uint64_t written = 0, written_bytes = 0, capture_dropped = 0;
  double write_seconds = 0;
  uint64_t digest = 0;  // ComputeHeavy: the sum of every packet's compute_stage()
  std::string error;
  double mpps() const { return seconds > 0 ? timed_packets / seconds / 1e6 : 0; }
  double gbps() const { return seconds > 0 ? timed_bytes * 8.0 / seconds / 1e9 : 0; }
};

struct TrafficResult {
  Traffic traffic;
  Measured base, parse, pp, host;  // the kernel rows' median runs
  std::vector<Measured> base_runs, parse_runs, pp_runs;
  // 64 B only: the filter and capture rows, one run each after the others'
  // median receive-only run of the same traffic.
  std::vector<std::pair<Variant, Measured>> extra;
};

// The compute-heavy rows: one queue, 1, 2, 4, ... blocks, each offered
// packets in proportion to its blocks.
struct ScalingRow {
  uint32_t blocks = 0;
  uint64_t expected_digest = 0;  // expected_digest() over the row's packets
  Measured m;
};
struct ScalingResult {
  uint32_t rounds = 0;
  std::vector<ScalingRow> rows;
};

// traffic.cpp: a pcap (Ethernet link type) of every frame of the captures
// in `dir`, in file-name order, as the pcap driver reads them (mem: replays
// one file), with "file frames, ..." appended to `listing`; and the mem:
// spec of a traffic with the options' ring and queues.
gnio::Result<std::string> merge_captures(const std::string& dir, std::string& listing);
std::string mem_spec(const Options& o, const Traffic& t);

inline const char* variant_name(Variant v) {
  switch (v) {
    case Variant::ReceiveOnly: return "receive-only";
    case Variant::ParseOnly: return "parse only";
    case Variant::PacketProcessing: return "packet-processing";
    case Variant::FilterShort: return "receive + filter 'udp port 53'";
    case Variant::FilterLong: return "receive + long filter";
    case Variant::Capture: return "packet-processing + capture to pcapng";
    case Variant::ComputeHeavy: return "compute-heavy";
  }
  return "";
}

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
// The sum of compute_stage() over packets 0..n-1 of the traffic (frame i % frames).
uint64_t expected_digest(const FrameImage& img, uint64_t n, uint32_t rounds);

// report.cpp: the machine line, the setup, the table of median runs, the
// spread of the runs, and every check (exact counts, the host core's
// counters against the kernels'); false if a check failed.
bool print_report(const gnio::Gpu& gpu, const Options& o, const std::vector<TrafficResult>& results,
                  const std::string& legend);
// The compute-heavy rows against linear scaling from one block; false if a
// row failed or its digest is not the host's.
bool print_scaling(const ScalingResult& s, const Measured& receive_only);

}  // namespace app_bench
