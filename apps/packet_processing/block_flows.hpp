// SPDX-License-Identifier: Apache-2.0
// A block's flow updates of one burst gathered in shared memory before they
// reach the flow table: traffic of few flows otherwise sends every warp of
// every block to the same few table entries, each update a probe and a
// handful of atomics on them. Here the warps' merged updates
// (warp_merge_flow) meet in a small open-addressed table of the block;
// after the burst the block's threads apply one update per flow to the
// flow table (block_flows_flush). An update that finds no room in its probe
// window goes to the flow table directly. On the emulated device a block is
// one thread and the slots are its own.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/thread.hpp"
#include "packet_processing/flow_table.hpp"

namespace gnio::dev::app {

struct BlockFlowSlot {
  uint64_t tag;  // 0: empty; kFlowBusy: being claimed; otherwise the flow's FlowTable::hash()
  FlowKey key;
  FlowDelta delta;
};

// 256 slots (26 KiB of shared memory): a burst of 256 packets of distinct
// flows fits; a probe window of 16 keeps a miss short.
inline constexpr uint32_t kBlockFlowSlots = 256;
inline constexpr uint32_t kBlockFlowProbe = 16;

namespace detail {
template <typename T>
using BlockRef = cuda::atomic_ref<T, cuda::thread_scope_block>;
}  // namespace detail

// Empties the slots; every thread of the block calls it, then sync_block().
GNIO_HD inline void block_flows_clear(BlockFlowSlot* slots) {
  for (uint32_t s = thread_index(); s < kBlockFlowSlots; s += block_dim()) slots[s].tag = 0;
}

// Adds `d` (packets of the flow `key`, whose hash() is `h`) to the block's
// slots; false when its probe window holds other flows only (the caller
// applies `d` to the flow table itself).
GNIO_HD inline bool block_flows_add(BlockFlowSlot* slots, const FlowKey& key, uint64_t h, const FlowDelta& d) {
  using detail::BlockRef;
  for (uint32_t i = 0; i < kBlockFlowProbe; ++i) {
    BlockFlowSlot& s = slots[(h + i) & (kBlockFlowSlots - 1)];
    uint64_t t = BlockRef<uint64_t>(s.tag).load(cuda::std::memory_order_acquire);
    if (t == 0) {
      uint64_t expected = 0;
      if (BlockRef<uint64_t>(s.tag).compare_exchange_strong(expected, kFlowBusy, cuda::std::memory_order_acq_rel,
                                                             cuda::std::memory_order_acquire)) {
        s.key = key;
        s.delta = d;
        BlockRef<uint64_t>(s.tag).store(h, cuda::std::memory_order_release);
        return true;
      }
      t = expected;
    }
    // A thread between its claim and its release: a few stores away.
    while (t == kFlowBusy) t = BlockRef<uint64_t>(s.tag).load(cuda::std::memory_order_acquire);
    if (t != h || !FlowTable::same(s.key, key)) continue;
    FlowDelta& to = s.delta;
    for (uint32_t k = 0; k < 2; ++k) {
      if (d.packets[k] == 0) continue;
      BlockRef<uint32_t>(to.packets[k]).fetch_add(d.packets[k], cuda::std::memory_order_relaxed);
      BlockRef<uint64_t>(to.bytes[k]).fetch_add(d.bytes[k], cuda::std::memory_order_relaxed);
      if (d.tcp_flags[k] != 0)
        BlockRef<uint32_t>(to.tcp_flags[k]).fetch_or(d.tcp_flags[k], cuda::std::memory_order_relaxed);
    }
    BlockRef<uint64_t>(to.first_ns).fetch_min(d.first_ns, cuda::std::memory_order_relaxed);
    BlockRef<uint64_t>(to.last_ns).fetch_max(d.last_ns, cuda::std::memory_order_relaxed);
    return true;
  }
  return false;
}

// Applies each gathered flow to `table` in one update, the slots spread
// over the block's threads, and empties the slots. Every thread of the
// block calls it between two sync_block()s (after the adds of the burst,
// before the next burst's). Counts the outcomes of the calling thread's
// updates into per_outcome (count_outcome) and the updates into `updates`.
GNIO_HD inline void block_flows_flush(BlockFlowSlot* slots, const FlowTable& table, uint64_t* per_outcome,
                                      uint64_t& updates) {
  for (uint32_t i = thread_index(); i < kBlockFlowSlots; i += block_dim()) {
    BlockFlowSlot& s = slots[i];
    if (s.tag == 0) continue;
    count_outcome(per_outcome, table.apply(s.key, s.tag, s.delta), s.delta.count());
    updates += 1;
    s.tag = 0;
  }
}

}  // namespace gnio::dev::app
