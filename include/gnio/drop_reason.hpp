// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Why an RX queue did not deliver a frame its backend offered, and
/// why a TX queue did not send a descriptor it was given.
///
/// Every frame offered is either delivered or counted under exactly one
/// reason, so that offered == delivered + sum(dropped) holds for every RX
/// queue (RxqStats); the same holds for TX descriptors (TxqStats).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace gnio {

/// @brief Why an RX queue did not deliver a frame its backend offered.
/// Indexes DropCounts (RxqStats::dropped); drop_reason_name() names it.
enum class DropReason : uint8_t {
  RingFull,   ///< Arrived at a full ring from a wire (rx_missed, as a NIC counts it).
  Empty,      ///< A zero-length record.
  Oversize,   ///< Larger than the whole ring can ever hold.
  Malformed,  ///< Its link-layer framing could not be turned into Ethernet.
  Count,      ///< The number of reasons; not a reason.
};

/// @brief The number of RX drop reasons: the size of DropCounts.
inline constexpr size_t kDropReasons = static_cast<size_t>(DropReason::Count);

/// @brief Stable lower-case name of an RX drop reason, used in stats, reports and metrics labels.
/// @param r The reason (not Count).
/// @return "ring_full", "empty", "oversize" or "malformed".
constexpr std::string_view drop_reason_name(DropReason r) {
  constexpr std::array<std::string_view, kDropReasons> names{"ring_full", "empty", "oversize", "malformed"};
  return names[static_cast<size_t>(r)];
}

/// @brief Frames not delivered, one count per DropReason (index: the reason's value).
using DropCounts = std::array<uint64_t, kDropReasons>;

/// @brief Why a TX queue completed a pushed descriptor without sending it.
/// Every descriptor pushed is sent or counted under exactly one reason, so
/// that submitted == sent + sum(dropped) holds for every queue once the
/// engine completed what was pushed (TxqStats).
enum class TxDropReason : uint8_t {
  /// Over the queue's max packet size, or staged over its slot (refused by
  /// the device or the engine).
  TooLong,
  Empty,          ///< Zero bytes.
  NotRegistered,  ///< Its payload is not in memory registered with the queue's GPU.
  CopyFailed,     ///< The engine's copy of its device-memory payload failed.
  BackendError,   ///< The backend's transmit call failed.
  /// The queue stopped before it was sent (a send time still ahead, a
  /// backend that did not take it).
  Stopped,
  Count,  ///< The number of reasons; not a reason.
};

/// @brief The number of TX drop reasons: the size of TxDropCounts.
inline constexpr size_t kTxDropReasons = static_cast<size_t>(TxDropReason::Count);

/// @brief Stable lower-case name of a TX drop reason, used in stats, reports and metrics labels.
/// @param r the reason (not Count)
/// @return "too_long", "empty", "not_registered", "copy_failed", "backend_error" or "stopped"
constexpr std::string_view tx_drop_reason_name(TxDropReason r) {
  constexpr std::array<std::string_view, kTxDropReasons> names{"too_long",      "empty",         "not_registered",
                                                               "copy_failed",   "backend_error", "stopped"};
  return names[static_cast<size_t>(r)];
}

/// @brief Descriptors completed unsent, one count per TxDropReason (index: the reason's value).
using TxDropCounts = std::array<uint64_t, kTxDropReasons>;

}  // namespace gnio
