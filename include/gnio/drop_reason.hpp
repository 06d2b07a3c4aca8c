// Why an RX queue did not deliver a frame its backend offered. Every frame
// offered is either delivered or counted under exactly one reason, so that
// offered == delivered + sum(dropped) holds for every queue.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace gnio {

enum class DropReason : uint8_t {
  RingFull,   // arrived at a full ring from a wire (rx_missed, as a NIC counts it)
  Empty,      // a zero-length record
  Oversize,   // larger than the whole ring can ever hold
  Malformed,  // its link-layer framing could not be turned into Ethernet
  Count,
};

inline constexpr size_t kDropReasons = static_cast<size_t>(DropReason::Count);

// Stable lower-case names, used in stats, reports and metrics labels.
constexpr std::string_view drop_reason_name(DropReason r) {
  constexpr std::array<std::string_view, kDropReasons> names{"ring_full", "empty", "oversize", "malformed"};
  return names[static_cast<size_t>(r)];
}

using DropCounts = std::array<uint64_t, kDropReasons>;

}  // namespace gnio
