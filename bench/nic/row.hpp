// SPDX-License-Identifier: Apache-2.0
// One row of nic_bench's table: a receiver at one frame size, what the
// sender sent into it, what it received and every drop by reason, and how
// the row is read against the others of its size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gnio/eth.hpp"
#include "traffic.hpp"

namespace nic_bench {

struct Row {
  std::string receiver;
  std::string spec;
  uint32_t size = 0;
  std::string status = "ok";  // ok | not built | not available: ... | failed: ...
  gnio::nicbench::SendTotals send;
  uint64_t received = 0, received_bytes = 0;  // everything, after the drain
  uint64_t window_received = 0;               // while the sender ran
  gnio::DropCounts gnio_dropped{};
  gnio::nicbench::SocketDrops kernel;  // the kernel's drops before gnio's sockets
  uint64_t socket_dropped = 0;  // baseline: the socket's queue was full
  // The veth dropped on transmit without telling the sender (kernels that
  // drop on a full queue and return success): its tx_dropped beyond the
  // sends it refused.
  uint64_t veth_silent_drops = 0;
  // A tool's own count of frames it lost (testpmd's RX-missed and RX-nombuf).
  uint64_t tool_dropped = 0;
  bool is_baseline = false;
  std::string tool;  // the program that received, for a tool's baseline row; "" for this bench's own receivers

  uint64_t drops() const {
    uint64_t d = kernel.xsk_no_fill_frame + kernel.xsk_rx_ring_full + kernel.packet_ring_full + socket_dropped +
                 veth_silent_drops + tool_dropped;
    for (uint64_t v : gnio_dropped) d += v;
    return d;
  }
  bool measured() const { return status == "ok"; }
  bool accounted() const { return received + drops() == send.sent; }
  double mpps() const { return send.seconds > 0 ? window_received / send.seconds / 1e6 : 0; }
  double gbps() const { return mpps() * size * 8 / 1e3; }
  double sender_mpps() const { return send.seconds > 0 ? send.sent / send.seconds / 1e6 : 0; }
};

// The row the others of its size are compared with: the tool that received
// the most, else this bench's own AF_PACKET socket; nullptr where none was
// measured.
const Row* ratio_base(const std::vector<Row>& rows, uint32_t size);

// Which side bounds the row, sender or receiver, and the numbers that say so.
std::string limited_by(const Row& r, const std::vector<Row>& rows);

// The row's drops by reason, "0" where there are none.
std::string drops_text(const Row& r);

}  // namespace nic_bench
