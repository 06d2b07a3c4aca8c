// What the NIC engine writes into an RX descriptor besides length and
// position: checksum state and RSS hash, from one parse of the frame. The
// Toeplitz hash uses a table per input byte, built once for the default
// key; it equals dev::rss_hash() bit for bit.
#pragma once

#include <array>
#include <cstdint>

#include "gnio/dev/headers.hpp"

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

}  // namespace gnio::detail
