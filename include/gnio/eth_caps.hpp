// What an Ethernet device (a backend behind a queue spec) says it can do:
// the NIC axis of the two-axis capability question.
#pragma once

#include <cstdint>
#include <string>

namespace gnio {

// How packets reach RX memory. Cyclic: strided cyclic buffer (mlx5
// multi-packet RQ style), the only type gnio's engine implements today.
enum class RxqType : uint8_t { Cyclic };
// How the kernel submits TX: Regular = descriptor per packet;
// WaitOnTime = per-packet send time honoured by the NIC (engine).
enum class TxqType : uint8_t { Regular, WaitOnTime };

struct EthCaps {
  std::string driver;             // "pcap", "synthetic", "loop", ...
  uint16_t max_rx_queues = 1;
  uint16_t max_tx_queues = 1;
  uint32_t max_burst = 256;        // packets per engine burst
  uint32_t max_packet_size = 9216; // bytes of one frame, without FCS
  uint32_t min_stride = 64;        // RX stride bounds (power of two)
  uint32_t max_stride = 2048;
  uint32_t max_ring_entries = 1u << 20;  // RX strides / TX descriptors
  bool rx_supported = true;
  bool tx_supported = true;
  bool rx_cyclic = true;
  bool tx_regular = true;
  bool tx_wait_on_time = true;
  bool rx_checksum_state = true;  // descriptors carry L3/L4 checksum state
  bool rx_timestamp = true;       // descriptors carry a timestamp
  bool rx_rss_hash = true;        // descriptors carry an RSS hash
  bool drops_when_full = false;   // a wire: packets arriving at a full ring are lost
  // afxdp: the XDP mode the open device runs in, "skb" (generic, copies),
  // "drv" (native, copies) or "zc" (native, zero copy); mode=auto settles
  // it at open. Empty for drivers without XDP.
  std::string xdp_mode;
};

}  // namespace gnio
