// SPDX-License-Identifier: Apache-2.0
// What the backend drivers share: the driver table (their open functions,
// dispatched by open_backend, and their NIC reports), the wall clock, rate
// pacing and a per-burst frame arena.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace gnio::backend {

Result<std::unique_ptr<Backend>> open_pcap(std::string_view spec);
Result<std::unique_ptr<Backend>> open_pcap_out(std::string_view spec);
Result<std::unique_ptr<Backend>> open_pcapng_out(std::string_view spec);
Result<std::unique_ptr<Backend>> open_synthetic(std::string_view spec);
Result<std::unique_ptr<Backend>> open_loop(std::string_view spec);
Result<std::unique_ptr<Backend>> open_afxdp(std::string_view spec);
Result<std::unique_ptr<Backend>> open_dpdk(std::string_view spec);
Result<std::unique_ptr<Backend>> open_fault(std::string_view spec);
Result<std::unique_ptr<Backend>> open_mem(std::string_view spec);
Result<std::unique_ptr<Backend>> open_null(std::string_view spec);

// The driver table, one row per driver: the name a spec starts with, the
// function that opens its specs, and the one that describes its NIC for
// `gnio caps` (gnio::describe_nic; nullptr where EthCaps says all there is).
// open_backend() (backend.cpp) reads the first two columns and
// describe_nic() (driver_report.cpp) the first and the third, each in its
// own file, so that a program that only opens specs (the fuzz targets)
// links no driver's report. The order is the one errors list drivers in.
#define GNIO_DRIVER_TABLE(ROW)                             \
  ROW("pcap", open_pcap, nullptr)                          \
  ROW("pcap-out", open_pcap_out, nullptr)                  \
  ROW("pcapng-out", open_pcapng_out, nullptr)              \
  ROW("synthetic", open_synthetic, nullptr)                \
  ROW("loop", open_loop, nullptr)                          \
  ROW("afxdp", open_afxdp, ::gnio::caps::afxdp_interface_report) \
  ROW("dpdk", open_dpdk, ::gnio::caps::dpdk_port_report)   \
  ROW("fault", open_fault, nullptr)                        \
  ROW("mem", open_mem, nullptr)                            \
  ROW("null", open_null, nullptr)

// The frame limit of the backends that make or carry frames (synthetic, mem,
// loop): the largest jumbo frame NICs commonly take. pcap replays frames as
// long as its file holds (its snaplen, up to kMaxPcapFrame).
inline constexpr uint32_t kMaxFrameSize = 9216;
// libpcap's MAXIMUM_SNAPLEN: the longest record a capture file holds, so
// the longest frame pcap-out and pcapng-out record (and what pcap replays at
// most).
inline constexpr uint32_t kMaxPcapFrame = 262144;
// Upper bound of the pps= options (a 100 GbE wire of 64-byte frames).
inline constexpr double kMaxPps = 200e6;

inline uint64_t realtime_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Releases a stream of frames at a fixed rate: frame i of the stream is due
// i / pps seconds after the first call to due(). Thread-safe.
class Pacer {
 public:
  explicit Pacer(double pps) : pps_(pps) {}

  // How many frames of the stream are due by now.
  uint64_t due() {
    std::call_once(started_, [this] { start_ = std::chrono::steady_clock::now(); });
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return static_cast<uint64_t>(elapsed * pps_) + 1;
  }

 private:
  double pps_;
  std::once_flag started_;
  std::chrono::steady_clock::time_point start_;
};

// Copies of the frames of one rx burst, kept until the next burst on the
// same queue (the lifetime RxFrame::data promises).
class FrameArena {
 public:
  void clear() {
    bytes_.clear();
    offsets_.clear();
  }
  void add(const uint8_t* data, uint32_t len) {
    offsets_.push_back(bytes_.size());
    bytes_.insert(bytes_.end(), data, data + len);
  }
  // Appends `len` bytes for the caller to fill and returns their offset.
  size_t append(uint32_t len) {
    offsets_.push_back(bytes_.size());
    bytes_.resize(bytes_.size() + len);
    return offsets_.back();
  }
  uint8_t* at(size_t offset) { return bytes_.data() + offset; }
  // Points out[i].data at the i-th frame added since clear(); call after
  // the last add (adding may move the bytes).
  void fix_pointers(std::span<RxFrame> out) {
    for (size_t i = 0; i < offsets_.size() && i < out.size(); ++i) out[i].data = bytes_.data() + offsets_[i];
  }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<size_t> offsets_;
};

}  // namespace gnio::backend
