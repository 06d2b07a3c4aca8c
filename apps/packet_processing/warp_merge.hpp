// SPDX-License-Identifier: Apache-2.0
// Work a warp does together so that fewer of its lanes touch shared
// memory: packets of one flow merged into one flow-table update, and one
// claim counter increment for all the lanes that hand a record over.
// Every lane of the warp calls these. On the emulated device a warp is one
// lane (one CPU thread per block), so they do that lane's work alone;
// merge_flow_lanes() is the same merge over n lanes given as arrays, for
// the host.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/thread.hpp"
#include "packet_processing/flow_table.hpp"

namespace gnio::dev::app {

// Lanes with `tracked` packets whose flow hashes are equal form a group
// with the lowest of them as leader; the lanes of the group whose key equals
// the leader's give it their packets, and a lane whose key differs despite
// the equal hash updates alone. On return `d` holds what this lane must
// apply to the table: the group's packets on its leader, its own packet on
// a lane alone; returns false where there is nothing to apply (not tracked,
// or merged into a leader). `d` comes in as this lane's one packet
// (FlowDelta::one).
GNIO_HD inline bool warp_merge_flow(const FlowKey& key, uint64_t h, bool tracked, FlowDelta& d) {
#if GNIO_DEVICE_PASS
  constexpr uint32_t kAll = 0xffffffffu;
  // hash() is odd: 0 stands for "no flow" and never matches a real one.
  const uint32_t peers = __match_any_sync(kAll, tracked ? h : uint64_t{0});
  if (!tracked) return false;
  if (__popc(peers) == 1) return true;
  const uint32_t lane = lane_index();
  const uint32_t leader = static_cast<uint32_t>(__ffs(peers)) - 1;
  const auto* words = reinterpret_cast<const uint32_t*>(&key);
  bool equal = true;
  for (uint32_t i = 0; i < sizeof(FlowKey) / sizeof(uint32_t); ++i)
    equal = (__shfl_sync(peers, words[i], static_cast<int>(leader)) == words[i]) && equal;
  const uint32_t group = __ballot_sync(peers, equal);
  if (!equal || __popc(group) == 1) return true;
  const int dir = d.packets[0] != 0 ? 0 : 1;
  const uint32_t len = static_cast<uint32_t>(d.bytes[dir]);
  const uint32_t flags = d.tcp_flags[dir];
  const uint32_t forward = __reduce_add_sync(group, dir == 0 ? 1u : 0u);
  d.packets[0] = forward;
  d.packets[1] = static_cast<uint32_t>(__popc(group)) - forward;
  // A packet is at most 64 KiB: 32 of them fit 32 bits.
  d.bytes[0] = __reduce_add_sync(group, dir == 0 ? len : 0u);
  d.bytes[1] = __reduce_add_sync(group, dir == 1 ? len : 0u);
  d.tcp_flags[0] = __reduce_or_sync(group, dir == 0 ? flags : 0u);
  d.tcp_flags[1] = __reduce_or_sync(group, dir == 1 ? flags : 0u);
  // 64-bit minimum and maximum from 32-bit ones: the high words first, then
  // the low words of the lanes that hold the extreme high word.
  const uint64_t now = d.first_ns;
  const uint32_t hi = static_cast<uint32_t>(now >> 32), lo = static_cast<uint32_t>(now);
  const uint32_t min_hi = __reduce_min_sync(group, hi), max_hi = __reduce_max_sync(group, hi);
  const uint32_t min_lo = __reduce_min_sync(group, hi == min_hi ? lo : ~0u);
  const uint32_t max_lo = __reduce_max_sync(group, hi == max_hi ? lo : 0u);
  d.first_ns = (uint64_t{min_hi} << 32) | min_lo;
  d.last_ns = (uint64_t{max_hi} << 32) | max_lo;
  return lane == leader;
#else
  (void)key;
  (void)h;
  (void)d;
  return tracked;
#endif
}

// warp_merge_flow() for a warp of n lanes (at most 32) held in arrays, lane
// by lane: on return lead[i] says whether lane i applies d[i].
GNIO_HD inline void merge_flow_lanes(const FlowKey* keys, const uint64_t* hashes, const bool* tracked,
                                     FlowDelta* d, bool* lead, uint32_t n) {
  FlowDelta in[32];
  for (uint32_t i = 0; i < n; ++i) in[i] = d[i];
  for (uint32_t i = 0; i < n; ++i) {
    lead[i] = false;
    if (!tracked[i]) continue;
    uint32_t leader = i;
    for (uint32_t j = 0; j < i; ++j)
      if (tracked[j] && hashes[j] == hashes[i]) {
        leader = j;
        break;
      }
    if (leader != i) {
      lead[i] = !FlowTable::same(keys[leader], keys[i]);  // alone despite the equal hash
      continue;
    }
    lead[i] = true;
    for (uint32_t j = i + 1; j < n; ++j)
      if (tracked[j] && hashes[j] == hashes[i] && FlowTable::same(keys[j], keys[i])) d[i].merge(in[j]);
  }
}

// fetch_add(counter, 1) for every lane whose `want` is true, as one
// fetch_add per warp: each such lane gets the value its own increment would
// have returned (lanes in rank order); the others get 0.
GNIO_HD inline uint64_t warp_claim(uint64_t* counter, bool want) {
#if GNIO_DEVICE_PASS
  constexpr uint32_t kAll = 0xffffffffu;
  const uint32_t wanting = __ballot_sync(kAll, want);
  if (wanting == 0) return 0;
  const uint32_t lane = lane_index();
  const uint32_t leader = static_cast<uint32_t>(__ffs(wanting)) - 1;
  uint64_t base = 0;
  if (lane == leader) base = fetch_add_relaxed(counter, uint64_t{static_cast<uint32_t>(__popc(wanting))});
  base = __shfl_sync(kAll, base, static_cast<int>(leader));
  return want ? base + static_cast<uint32_t>(__popc(wanting & ((1u << lane) - 1u))) : 0;
#else
  return want ? fetch_add_relaxed(counter, uint64_t{1}) : 0;
#endif
}

}  // namespace gnio::dev::app
