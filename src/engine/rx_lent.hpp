// SPDX-License-Identifier: Apache-2.0
// Lent frames: what a backend with its own frame memory (rx_memory())
// lends the engine for RxDelivery::InPlace and RxDelivery::Dma, from
// rx_burst() until rx_release(). They go back in the order the backend lent
// them, each once the descriptors before it (a dropped frame) or its own (a
// delivered one) are released by the kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/backend.hpp"
#include "engine/rx_ring_writer.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/status.hpp"

namespace gnio::detail {

class LentFrames {
 public:
  LentFrames(backend::Backend& be, uint16_t queue) : be_(be), queue_(queue) {}

  // Frames must lie in `m`; room for `frames` lent at once before growing.
  void init(const backend::RxMemory& m, size_t frames);
  const uint8_t* base() const { return base_; }

  // Lends up to `n` more frames from the backend (fewer where the circular
  // buffer wraps: the rest comes with the next call); how many it lent.
  Result<size_t> take(size_t n);

  // Places the frames lent and not placed yet, in lent order, after the
  // checks every lent frame passes: an empty frame is dropped and goes back
  // after the `pi` descriptors before it; a frame outside the backend's
  // memory stops placing with an error; a longer one is cut to the queue's
  // max packet size and flagged RxFrameTruncated. Then
  // place_one(frame, len, flags, release_after) writes its descriptor or
  // drops it, sets the descriptor count after which it may go back, and
  // returns false to leave it and those after it unplaced (a pulled source
  // waiting for room). Dropped frames with nothing undelivered before them
  // go back at the end.
  template <class PlaceOne>
  GNIO_FORCEINLINE Status place(RxRingWriter& w, const uint64_t& pi, PlaceOne&& place_one);

  // Hands back, in lent order, the placed frames that may go back once
  // `released` descriptors are released.
  void release(uint64_t released);
  // stop_source(): the frames not placed yet go back unoffered, uncounted,
  // after the `pi` descriptors written.
  void give_back_unplaced(uint64_t pi, uint64_t released);

  bool all_placed() const { return placed_ == tail_; }
  uint64_t placed() const { return placed_; }

 private:
  bool in_region(const backend::RxFrame& f) const { return f.data >= base_ && f.data + f.len <= base_ + bytes_; }
  Status outside_region(const backend::RxFrame& f) const;
  // A dropped frame waits behind undelivered ones: more lent at once than planned for.
  void grow(size_t need);

  backend::Backend& be_;
  const uint16_t queue_;
  const uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
  // Circular, power-of-two size: rx_burst() writes into it, rx_release()
  // is given slices of it. release_after_ (same indices) is non-decreasing
  // in lent order.
  std::vector<backend::RxFrame> frames_;
  std::vector<uint64_t> release_after_;
  // Lent frames [head_, tail_): [head_, placed_) placed and not back yet.
  uint64_t head_ = 0, placed_ = 0, tail_ = 0;
};

template <class PlaceOne>
GNIO_FORCEINLINE Status LentFrames::place(RxRingWriter& w, const uint64_t& pi, PlaceOne&& place_one) {
  const uint64_t mask = frames_.size() - 1;
  Status bad;
  for (; placed_ < tail_; ++placed_) {
    const backend::RxFrame& f = frames_[placed_ & mask];
    uint64_t& release_after = release_after_[placed_ & mask];
    if (f.len == 0) {
      release_after = pi;
      w.drop(DropReason::Empty);
      continue;
    }
    if (!in_region(f)) {
      bad = outside_region(f);
      break;
    }
    uint32_t flags = f.flags;
    uint32_t len = f.len;
    if (len > w.max_frame) {
      len = w.max_frame;
      flags |= backend::RxFrameTruncated;
    }
    if (!place_one(f, len, flags, release_after)) break;
  }
  release(w.reclaimed);
  return bad;
}

}  // namespace gnio::detail
