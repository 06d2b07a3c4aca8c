// SPDX-License-Identifier: Apache-2.0
// The RX engine's side of one ring: where it writes bytes and descriptors,
// its indices, and what it wrote since the last publish. Every delivery
// path (RxDelivery) writes through it; RxEngine publishes what it holds.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/rx_metadata.hpp"
#include "gnio/dev/ring.hpp"
#include "gnio/drop_reason.hpp"

namespace gnio::detail {

// Strides of 2^shift bytes a packet of `len` bytes takes.
inline uint32_t strides_for(uint32_t len, uint32_t shift) { return (len + (1u << shift) - 1) >> shift; }

// The first of `need` contiguous strides at or after `head` in a ring of
// `nstrides`: a packet does not wrap, it starts over at slot 0.
inline uint64_t stride_pos(uint64_t head, uint32_t need, uint64_t nstrides) {
  const uint64_t slot = head & (nstrides - 1);
  return slot + need > nstrides ? head + nstrides - slot : head;
}

struct RxRingWriter {
  explicit RxRingWriter(const RxOffloads& offloads, uint32_t max_frame) : describe(offloads), max_frame(max_frame) {}

  // A frame offered but not delivered, counted under its reason.
  void drop(DropReason why) {
    ++new_dropped[static_cast<size_t>(why)];
    ++new_offered;
  }

  const RxDescriber describe;
  const uint32_t max_frame;  // the queue's max packet size: longer frames are cut to it

  // Where the engine writes: the ring itself, or its pinned staging mirror
  // when the ring is in device memory (the receivers copy from there:
  // RxRing::stage_desc). No bytes with frames in place: `data` is null
  // there. Frames copied from backend memory into a ring in device memory
  // leave their device-visible address in `src`.
  uint8_t* data = nullptr;
  dev::RxDesc* desc = nullptr;
  const uint8_t** src = nullptr;

  uint32_t nstrides = 0, stride_shift = 0, ndesc = 0;
  // Free-running indices: strides written up to `stride_head` and free from
  // `stride_tail`; descriptors written (`pi`), published, and released by
  // the kernel (`reclaimed`).
  uint64_t stride_head = 0, stride_tail = 0;
  uint64_t pi = 0, published = 0, reclaimed = 0;
  std::vector<uint64_t> span_end;  // absolute stride end of each descriptor (none in place)

  // Counts since the last publish, added to the queue's counters by it.
  uint64_t new_offered = 0, new_bytes = 0, new_truncated = 0;
  DropCounts new_dropped{};
};

}  // namespace gnio::detail
