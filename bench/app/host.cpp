// SPDX-License-Identifier: Apache-2.0
// app_bench's other bound: the packet-processing kernel's parsing, counting,
// flow table and records compiled for the host, on one core, over the same
// frames in memory.
#include <algorithm>
#include <cstring>

#include "compute_stage.hpp"
#include "sections.hpp"
#include "../common/clock.hpp"
#include "gnio/host_reference.hpp"
#include "packet_processing/records.hpp"

using namespace gnio;
namespace da = gnio::dev::app;
using bench::Clock;
using bench::secs_since;

namespace app_bench {
namespace {

volatile uint64_t g_sink = 0;  // record fields read, so that no record is left unbuilt

}  // namespace

Result<FrameImage> frame_image(const Traffic& t) {
  FrameImage img;
  std::vector<std::vector<uint8_t>> frames;
  GNIO_TRY(for_each_host_frame("mem:" + t.frames, [&](const std::vector<uint8_t>& f) { frames.push_back(f); }));
  img.bytes.assign(frames.size() * FrameImage::kStride, 0);
  for (size_t i = 0; i < frames.size(); ++i) {
    const size_t n = std::min<size_t>(frames[i].size(), FrameImage::kStride);
    std::memcpy(img.bytes.data() + i * FrameImage::kStride, frames[i].data(), n);
    img.lens.push_back(static_cast<uint32_t>(n));
  }
  return img;
}

Measured run_host(const FrameImage& img, uint64_t n) {
  Measured m;
  std::vector<uint64_t> c(app::counter::kCount, 0);
  std::vector<da::FlowEntry> slots(kFlowSlots);
  std::memset(static_cast<void*>(slots.data()), 0, slots.size() * sizeof(da::FlowEntry));
  const da::FlowTable table{slots.data(), kFlowSlots - 1};
  da::Record r;
  uint64_t sink = 0;
  const size_t frames = img.lens.size();
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    const size_t f = i % frames;
    const uint8_t* p = img.bytes.data() + f * FrameImage::kStride;
    const uint32_t len = img.lens[f];
    const da::Analysis an = da::analyze(p, len);
    c[app::counter::kPackets] += 1;
    c[app::counter::kBytes] += len;
    for (uint32_t k = 0; k < da::kProtoCount; ++k) c[app::counter::kProto + k] += (an.protocols >> k) & 1u;
    if (an.has(da::kIpv4)) c[app::counter::kCsum + uint32_t{da::kCsumIpv4} * da::kCsumCount + an.csum_l3] += 1;
    if (an.csum_l4_layer < da::kCsumLayerCount) c[app::counter::kCsum + an.csum_l4_layer * da::kCsumCount + an.csum_l4] += 1;
    c[app::counter::kReason + an.reason] += 1;
    if (an.key.version != 0) {
      const bool tcp = an.has(da::kTcp) && an.pp.payload_offset > an.pp.l4_offset;
      const uint32_t tcp_flags = tcp ? p[an.pp.l4_offset + 13] : 0u;
      c[app::counter::kFlow + table.update(an.key, an.direction, len, i, tcp_flags)] += 1;
    }
    if (an.record != da::kRecordNone) {
      da::fill_record(p, an, r);
      sink += static_cast<uint8_t>(r.name[0]) + r.sport;
      c[app::counter::kRecords] += 1;
    }
  }
  m.seconds = secs_since(t0);
  g_sink = sink;
  m.packets = m.timed_packets = n;
  m.timed_bytes = c[app::counter::kBytes];
  m.offered = n;
  m.counters = std::move(c);
  return m;
}

uint64_t expected_digest(const FrameImage& img, uint64_t n, uint32_t rounds) {
  const uint64_t frames = img.lens.size();
  uint64_t sum = 0;
  for (uint64_t f = 0; f < frames && f < n; ++f) {
    const uint64_t uses = n / frames + (f < n % frames ? 1 : 0);
    sum += uses * compute_stage(img.bytes.data() + f * FrameImage::kStride, img.lens[f], rounds);
  }
  return sum;
}

}  // namespace app_bench
