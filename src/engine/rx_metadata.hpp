// SPDX-License-Identifier: Apache-2.0
// What the NIC engine writes into an RX descriptor besides length and
// position: the backend's flags and, as the offloads ask, packet type,
// checksum state and RSS hash, from one parse of the frame. The
// Toeplitz hash uses a table per input byte, built once for the default
// key; it equals dev::rss_hash() bit for bit.
#pragma once

#include <array>
#include <cstdint>

#include "backends/backend.hpp"
#include "gnio/dev/headers.hpp"
#include "gnio/eth.hpp"

namespace gnio::detail {

class RssTable {
 public:
  explicit RssTable(const dev::RssKey& key);
  uint32_t hash(const uint8_t* in, uint32_t n) const noexcept;

 private:
  // by_byte_[i][v]: the hash contribution of byte value v at input offset i.
  std::array<std::array<uint32_t, 256>, dev::kRssMaxInput> by_byte_{};
};

struct RxMetadata {
  uint32_t flags = 0;     // dev::PacketFlags, with checksum state
  uint32_t rss_hash = 0;  // 0 for non-IP, cut or malformed frames
};

// The default-key table, built on first use.
const RssTable& default_rss_table();

RxMetadata describe_frame(const uint8_t* p, uint32_t len);

// The descriptor flags and RSS hash of one frame as the queue's offloads
// ask for them. With none asked the frame is never parsed: the flags are
// the backend's (truncated, synthetic L2) and the hash 0.
class RxDescriber {
 public:
  explicit RxDescriber(const RxOffloads& offloads)
      : offloads_(offloads), plain_(!offloads.packet_type && !offloads.checksum && !offloads.rss_hash) {}

  // dev::PacketFlags of `len` bytes at `data` that the backend flagged
  // `frame_flags` (backend::RxFrameFlags); *rss_hash comes in as the
  // backend's hash (valid with RxFrameRssHash) and goes out as the
  // descriptor's.
  uint32_t operator()(const uint8_t* data, uint32_t len, uint32_t frame_flags, uint32_t* rss_hash) const {
    if (plain_) {
      *rss_hash = 0;
      return flag_bits(frame_flags);
    }
    return with_offloads(data, len, frame_flags, rss_hash);
  }

 private:
  // The PacketFlags a backend's RxFrameFlags stand for.
  static uint32_t flag_bits(uint32_t frame_flags) {
    uint32_t out = 0;
    if (frame_flags & backend::RxFrameTruncated) out |= dev::bit(dev::PacketFlags::FrameTruncated);
    if (frame_flags & backend::RxFrameSyntheticL2) out |= dev::bit(dev::PacketFlags::SyntheticL2);
    return out;
  }
  // Parses the frame for the offloads asked.
  uint32_t with_offloads(const uint8_t* data, uint32_t len, uint32_t frame_flags, uint32_t* rss_hash) const;

  RxOffloads offloads_;
  bool plain_;
};

}  // namespace gnio::detail
