// SPDX-License-Identifier: Apache-2.0
#include "engine/rx_metadata.hpp"

namespace gnio::detail {

RssTable::RssTable(const dev::RssKey& key) {
  // The 32-bit key window that starts at key bit k (bit 0: the top bit of
  // key byte 0); input bit k selects it.
  auto window = [&](uint32_t k) {
    const uint32_t byte = k / 8, shift = k % 8;
    uint64_t w = 0;
    for (uint32_t j = 0; j < 5; ++j)
      w = (w << 8) | (byte + j < sizeof(key.bytes) ? key.bytes[byte + j] : 0u);
    return static_cast<uint32_t>(w >> (8 - shift));
  };
  for (uint32_t i = 0; i < dev::kRssMaxInput; ++i)
    for (uint32_t v = 0; v < 256; ++v) {
      uint32_t h = 0;
      for (uint32_t b = 0; b < 8; ++b)
        if (v & (0x80u >> b)) h ^= window(8 * i + b);
      by_byte_[i][v] = h;
    }
}

uint32_t RssTable::hash(const uint8_t* in, uint32_t n) const noexcept {
  uint32_t h = 0;
  for (uint32_t i = 0; i < n; ++i) h ^= by_byte_[i][in[i]];
  return h;
}

const RssTable& default_rss_table() {
  static const RssTable table(dev::rss_default_key());
  return table;
}

RxMetadata describe_frame(const uint8_t* p, uint32_t len) {
  dev::ParsedPacket pp;
  const bool whole = dev::parse_packet(p, len, pp);
  uint8_t in[dev::kRssMaxInput];
  const uint32_t n = whole ? dev::rss_input(p, pp, in) : 0;
  // The checksum state also of cut packets: their IPv4 header may be whole.
  return {dev::checksum_state(p, pp), n ? default_rss_table().hash(in, n) : 0u};
}

uint32_t RxDescriber::with_offloads(const uint8_t* data, uint32_t len, uint32_t frame_flags,
                                   uint32_t* rss_hash) const {
  uint32_t out = flag_bits(frame_flags);
  const bool have_hash = (frame_flags & backend::RxFrameRssHash) != 0;
  const bool want_types = offloads_.packet_type || offloads_.checksum;
  const bool want_hash = offloads_.rss_hash && !have_hash;
  if (!offloads_.rss_hash) *rss_hash = 0;
  if (!want_types && !want_hash) return out;
  dev::ParsedPacket pp;
  const bool parsed = dev::parse_packet(data, len, pp);
  // The checksum state also of cut frames: their IPv4 header may be whole.
  if (want_types) out |= offloads_.checksum ? dev::checksum_state(data, pp) : pp.flags;
  if (want_hash) {
    uint8_t in[dev::kRssMaxInput];
    const uint32_t n = parsed ? dev::rss_input(data, pp, in) : 0;
    *rss_hash = n ? default_rss_table().hash(in, n) : 0u;
  }
  return out;
}

}  // namespace gnio::detail
