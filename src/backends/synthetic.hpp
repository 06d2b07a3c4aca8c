// SPDX-License-Identifier: Apache-2.0
// The synthetic traffic generator, exposed so that tests and benchmarks can
// compute the exact frames a "synthetic:..." queue produces.
//
// Frame i (0-based, over all queues) belongs to flow i % flows. A flow fixes
// the IP version, the protocol and the 5-tuple; the frame carries the
// 8-byte big-endian index i at the start of its L4 payload (after the UDP,
// TCP or ICMP echo header), then seeded filler bytes. All checksums are valid.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gnio/status.hpp"

namespace gnio::backend {

struct SyntheticOptions {
  enum class Proto : uint8_t { Udp, Tcp, Icmp, Mix };
  enum class Ip : uint8_t { V4, V6, Mix };

  uint64_t count = 1000;    // frames in total; 0 = endless
  uint32_t size_min = 128;  // frame size in bytes (without FCS); a range when min < max
  uint32_t size_max = 128;
  uint32_t flows = 16;
  uint64_t seed = 1;
  Proto proto = Proto::Udp;
  Ip ip = Ip::V4;
  double pps = 0;           // 0 = as fast as pulled
  uint16_t queues = 1;
};

// Parses "synthetic:[count=N][,size=S|S1-S2][,flows=F][,seed=X]
// [,proto=udp|tcp|icmp|mix][,ipv6=0|1|mix][,pps=R][,queues=Q]".
Result<SyntheticOptions> parse_synthetic_spec(std::string_view spec);

// The smallest frame that fits the headers of every flow of `o` plus the
// 8-byte sequence number.
uint32_t synthetic_min_frame_size(const SyntheticOptions& o);

// Frame `index` of the stream `o` describes.
std::vector<uint8_t> make_synthetic_frame(const SyntheticOptions& o, uint64_t index);

// How a source spreads a frame over `queues` RX queues, as a NIC's RSS
// does: the frame's Toeplitz hash (default key), handed over with the frame
// (RxFrameRssHash) so the engine does not hash it again, and the queue that
// hash selects (hash modulo the queue count).
struct RssSpread {
  uint32_t hash;
  uint16_t queue;
};
RssSpread rss_spread(const uint8_t* frame, uint32_t len, uint16_t queues);

}  // namespace gnio::backend
