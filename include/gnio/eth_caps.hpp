// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief What an Ethernet device (a backend behind a queue spec) says it
/// can do: the NIC axis of the two-axis capability question.
#pragma once

#include <cstdint>
#include <string>

namespace gnio {

/// @brief How packets reach RX memory.
enum class RxqType : uint8_t {
  /// A strided cyclic buffer (multi-packet receive queue style): frames fill
  /// consecutive strides of one ring. The only type gnio's engine implements.
  Cyclic,
};
/// @brief How the kernel submits TX.
enum class TxqType : uint8_t {
  Regular,     ///< One descriptor per packet, sent as soon as the engine sees it.
  WaitOnTime,  ///< One descriptor per packet with a send time that the engine honours.
};

/// @brief The capabilities and limits an Ethernet device reports
/// (EthDevice::caps()); queue setters are checked against them.
///
/// Plain data; the defaults are those of gnio's software backends.
struct EthCaps {
  std::string driver;               ///< The backend: "pcap", "synthetic", "loop", "afxdp", "dpdk", ...
  uint16_t max_rx_queues = 1;       ///< RX queues the device offers (queue ids 0..max_rx_queues-1).
  uint16_t max_tx_queues = 1;       ///< TX queues the device offers.
  uint32_t max_burst = 256;         ///< Packets per engine burst, at most.
  uint32_t max_packet_size = 9216;  ///< Bytes of one frame, without FCS, at most.
  uint32_t min_stride = 64;         ///< Smallest RX stride, bytes (a power of two).
  uint32_t max_stride = 2048;       ///< Largest RX stride, bytes (a power of two).
  uint32_t max_ring_entries = 1u << 20;  ///< RX strides or TX descriptors per queue, at most.
  bool rx_supported = true;         ///< The device can receive.
  bool tx_supported = true;         ///< The device can send.
  bool rx_cyclic = true;            ///< RxqType::Cyclic is offered.
  bool tx_regular = true;           ///< TxqType::Regular is offered.
  bool tx_wait_on_time = true;      ///< TxqType::WaitOnTime is offered.
  bool rx_checksum_state = true;    ///< RX descriptors can carry the L3/L4 checksum state.
  bool rx_timestamp = true;         ///< RX descriptors carry a timestamp.
  bool rx_rss_hash = true;          ///< RX descriptors can carry an RSS hash.
  bool drops_when_full = false;     ///< A wire: packets arriving at a full ring are lost, not held back.
  /// afxdp: the XDP mode the open device runs in, "skb" (generic, copies),
  /// "drv" (native, copies) or "zc" (native, zero copy); mode=auto settles
  /// it at open. Empty for drivers without XDP.
  std::string xdp_mode;
};

}  // namespace gnio
