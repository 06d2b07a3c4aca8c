// SPDX-License-Identifier: Apache-2.0
// One NIC queue of an afxdp port: its UMEM, XSK socket and rings, as
// libxdp's xsk.c keeps them. The UMEM holds `ring` RX frames (lent to the
// kernel through the fill ring) and `ring` TX frames; RX frames stay where
// the NIC (or the kernel, in copy mode) wrote them until rx_release().
//
// The RX engine thread owns the RX and fill rings, the TX engine thread the
// TX and completion rings; `mu_` guards what both touch: RX frames sent
// without a copy, which go back to the fill ring only once their send
// completed.
#pragma once

#include <xdp/xsk.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backends/afxdp/internal.hpp"
#include "backends/backend.hpp"

namespace gnio::backend::afxdp {

class XskQueue {
 public:
  XskQueue(const Options& o, uint32_t nic_queue);
  XskQueue(const XskQueue&) = delete;
  XskQueue& operator=(const XskQueue&) = delete;
  ~XskQueue();

  // Maps and registers the UMEM, binds a socket to the NIC queue (zero copy
  // or copy mode) and enters it into the XSKMAP. Errc::Again while another
  // socket still holds the queue; `driver` names the NIC's driver in a
  // refusal of zero copy.
  Status open(bool zero_copy, int xskmap_fd, const std::string& driver);

  uint32_t nic_queue() const { return nic_queue_; }
  RxMemory rx_memory() const { return RxMemory{area_, area_bytes_, o_.ring}; }

  // RX thread: frames the kernel wrote, pointing into the UMEM.
  size_t rx_burst(std::span<RxFrame> out);
  // RX thread: frames the engine is done with go back to the fill ring,
  // or wait for the sends that still read them.
  void rx_release(std::span<const RxFrame> frames);

  // TX thread: sends up to frames.size() frames, an RX frame of this UMEM
  // from where it is, any other copied into a free TX frame; returns how
  // many were queued.
  size_t tx_burst(std::span<const TxFrame> frames);
  // TX thread: waits (up to 100 ms) until everything queued has left.
  void flush();

  // What the kernel dropped before the socket: a full RX ring (frames not
  // released fast enough), an empty fill ring, invalid descriptors.
  void log_statistics() const;

 private:
  void set_busy_poll();
  void take_recycled();
  void refill();
  void complete();
  void kick();

  const Options o_;
  const uint32_t frame_shift_;
  uint32_t nic_queue_;
  uint8_t* area_ = nullptr;
  size_t area_bytes_ = 0;
  xsk_umem* umem_ = nullptr;
  xsk_socket* xsk_ = nullptr;
  int fd_ = -1;  // the XSK socket's
  xsk_ring_prod fill_{};
  xsk_ring_cons comp_{};
  xsk_ring_cons rx_{};
  xsk_ring_prod tx_{};

  // RX thread: frames waiting for room in the fill ring.
  std::vector<uint64_t> to_fill_;
  // TX thread: free TX frames (UMEM addresses), descriptors not yet completed.
  std::vector<uint64_t> tx_free_;
  uint32_t tx_outstanding_ = 0;

  // Shared: how many TX descriptors still read each RX frame, the frames
  // the RX side released meanwhile, and those completions freed again.
  std::mutex mu_;
  std::vector<uint16_t> tx_readers_;
  std::vector<uint8_t> released_while_read_;
  std::vector<uint64_t> recycled_;
  std::atomic<uint32_t> frames_read_{0};  // RX frames with tx_readers_ > 0
  std::atomic<bool> have_recycled_{false};
};

}  // namespace gnio::backend::afxdp
