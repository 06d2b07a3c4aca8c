// SPDX-License-Identifier: Apache-2.0
// RxDelivery::Dma: the backend's frame memory, registered with the GPU, is
// the source of copy-engine transfers into a ring in device memory. Frames
// are placed in the ring's strides as the sink places them and their
// descriptors written to the staging mirror; one transfer moves each run of
// frames that lie at the same distances in the backend's memory and in the
// ring. A frame goes back to the backend only once the kernel released its
// descriptor: the kernel sees a descriptor only after the producer index,
// which the stream writes after the transfers that read the frame, so a
// released descriptor means the copy of its frame has landed and the
// backend may reuse the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/rx_lent.hpp"
#include "engine/rx_ring_writer.hpp"
#include "gnio/status.hpp"

namespace gnio::detail {

class RxDmaPath {
 public:
  // One transfer: `bytes` from the backend's memory at `src` to byte `dst`
  // of the ring's data area.
  struct Run {
    const uint8_t* src;
    uint64_t dst;
    uint64_t bytes;
  };

  // drops_when_full: frames that find no room are dropped (a wire), not
  // kept for the next pull (a pulled source).
  RxDmaPath(RxRingWriter& w, LentFrames& lent, bool drops_when_full)
      : w_(w), lent_(lent), drops_when_full_(drops_when_full) {}

  // Places the frames that waited for room, then lends and places up to
  // `room` in all; how many it offered (delivered or dropped).
  Result<size_t> pull(uint32_t room);
  // The transfers since the last publish, the open run closed into them.
  const std::vector<Run>& close_runs();
  // After publish() queued them.
  void clear_runs() { runs_.clear(); }

 private:
  // Places the lent frames not placed yet, in order; how many it offered.
  Result<size_t> place_lent();
  // Closes the open run: a transfer at the next publish, or, when it is
  // short and copy_if_short, a CPU copy into the staging mirror now.
  void end_run(bool copy_if_short);

  RxRingWriter& w_;
  LentFrames& lent_;
  const bool drops_when_full_;
  Run open_run_{nullptr, 0, 0};
  std::vector<Run> runs_;
};

}  // namespace gnio::detail
