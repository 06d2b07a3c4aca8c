// SPDX-License-Identifier: Apache-2.0
// RxDelivery::Dma: the backend's frame memory, registered with the GPU, is
// read by the receivers of a ring in device memory. Frames are given
// strides in the ring as the sink gives them; their descriptors go to the
// staging mirror with the frame's device-visible address beside each
// (RxRing::stage_src), and the scope that receives a burst copies the
// frames into their strides (dev::Rxq::stage_in()). A frame goes back to
// the backend only once the kernel released its descriptor: the copy
// happens before the release, so a released descriptor means the frame
// has been read and the backend may reuse the buffer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/rx_lent.hpp"
#include "engine/rx_ring_writer.hpp"
#include "gnio/status.hpp"

namespace gnio::detail {

class RxDmaPath {
 public:
  // drops_when_full: frames that find no room are dropped (a wire), not
  // kept for the next pull (a pulled source).
  RxDmaPath(RxRingWriter& w, LentFrames& lent, bool drops_when_full)
      : w_(w), lent_(lent), drops_when_full_(drops_when_full) {}

  // The backend's frame memory as the host and the GPU address it.
  void map(const uint8_t* host_base, const uint8_t* device_base) {
    host_base_ = host_base;
    device_base_ = device_base;
  }

  // Places the frames that waited for room, then lends and places up to
  // `room` in all; how many it offered (delivered or dropped).
  Result<size_t> pull(uint32_t room);

 private:
  // Places the lent frames not placed yet, in order; how many it offered.
  Result<size_t> place_lent();

  RxRingWriter& w_;
  LentFrames& lent_;
  const bool drops_when_full_;
  const uint8_t* host_base_ = nullptr;
  const uint8_t* device_base_ = nullptr;
};

}  // namespace gnio::detail
