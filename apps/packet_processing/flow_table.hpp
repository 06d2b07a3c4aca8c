// SPDX-License-Identifier: Apache-2.0
// A bounded, lock-free flow table in device memory (MemKind Gpu or GpuCpu:
// it uses read-modify-write atomics). Open addressing over a power-of-two
// number of slots with a short probe window; a slot is claimed by one
// compare-and-swap on its tag, so threads never wait on a lock. When the
// window is full, the slot seen least recently in it is taken over and the
// eviction counted (and, with an EvictionLog, the entry taken over written
// to it for the host to export); if another thread holds that slot at that
// instant the packets go uncounted in the table (and are counted as such).
// An update adds one packet or several of one flow merged (FlowDelta).
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "gnio/dev/thread.hpp"
#include "packet_processing/l2l4.hpp"

namespace gnio::dev::app {

struct FlowEntry {
  uint64_t tag;  // 0: empty; kFlowBusy: being (re)written; otherwise (hash | 1)
  FlowKey key;
  uint64_t packets[2];  // [0]: from endpoint a to b; [1]: from b to a
  uint64_t bytes[2];
  uint64_t first_ns;
  uint64_t last_ns;
  uint32_t tcp_flags[2];  // OR of the TCP flag bytes seen each way
};

inline constexpr uint64_t kFlowBusy = 2;
inline constexpr uint32_t kFlowProbe = 16;

// What the table did with one packet.
enum FlowOutcome : uint32_t { kFlowHit, kFlowNew, kFlowEvicted, kFlowUntracked };
inline constexpr uint32_t kFlowOutcomeCount = 4;

// Packets of one flow to add to its entry in one update: one packet, or
// several merged (a warp's packets of one flow, warp_merge.hpp).
struct FlowDelta {
  uint32_t packets[2] = {0, 0};  // per direction, as FlowEntry
  uint64_t bytes[2] = {0, 0};
  uint32_t tcp_flags[2] = {0, 0};
  uint64_t first_ns = ~0ull;  // earliest and latest time stamp of the packets
  uint64_t last_ns = 0;

  GNIO_HD static FlowDelta one(int direction, uint32_t len, uint64_t now, uint32_t tcp_flags) {
    FlowDelta d;
    d.packets[direction] = 1;
    d.bytes[direction] = len;
    d.tcp_flags[direction] = tcp_flags;
    d.first_ns = d.last_ns = now;
    return d;
  }

  GNIO_HD uint32_t count() const { return packets[0] + packets[1]; }

  GNIO_HD void merge(const FlowDelta& o) {
    for (uint32_t k = 0; k < 2; ++k) {
      packets[k] += o.packets[k];
      bytes[k] += o.bytes[k];
      tcp_flags[k] |= o.tcp_flags[k];
    }
    if (o.first_ns < first_ns) first_ns = o.first_ns;
    if (o.last_ns > last_ns) last_ns = o.last_ns;
  }
};

// Counts the packets of one update by outcome as if they had come one at a
// time: the first packet finds, creates or takes over the entry and the
// others find it; untracked, none of them is in the table.
GNIO_HD inline void count_outcome(uint64_t* per_outcome, FlowOutcome o, uint32_t packets) {
  if (o == kFlowNew || o == kFlowEvicted) {
    per_outcome[o] += 1;
    per_outcome[kFlowHit] += packets - 1;
  } else {
    per_outcome[o] += packets;
  }
}

// The entries evicted from a table, as they were when taken over: a ring in
// GpuCpu memory that the kernel writes and the host reads while it runs.
// Each item carries the index it was written for (+1) as a sequence word,
// stored last; the host copies an item and checks the word again, so that
// an item overwritten by a writer that lapped it is counted as lost, never
// read half-written.
struct EvictedFlow {
  uint64_t seq;  // 0: being written; else index + 1
  FlowEntry entry;
};

struct EvictionLog {
  EvictedFlow* items = nullptr;  // a power of two of them
  uint64_t* next = nullptr;      // items claimed so far
  uint32_t mask = 0;

  GNIO_HD void put(const FlowEntry& e) const {
    const uint64_t i = fetch_add_relaxed(next, uint64_t{1});
    EvictedFlow& item = items[i & mask];
    store_relaxed(&item.seq, uint64_t{0});
    fence_system(cuda::std::memory_order_release);
    item.entry = e;
    store_release(&item.seq, i + 1);
  }
};

// The host side of an EvictionLog: take(entry) for each item written since
// the last call, in order; items overwritten before they were read are
// added to `lost`. An item claimed but not yet written ends the call.
struct EvictionReader {
  uint64_t read = 0;
  uint64_t lost = 0;

  template <typename Take>
  void drain(const EvictionLog& log, Take&& take) {
    const uint64_t written = load_acquire(log.next);
    const uint64_t capacity = uint64_t{log.mask} + 1;
    if (written - read > capacity) {
      lost += written - read - capacity;
      read = written - capacity;
    }
    for (; read < written; ++read) {
      EvictedFlow& item = log.items[read & log.mask];
      const uint64_t before = load_acquire(&item.seq);
      if (before < read + 1) return;  // claimed, not yet written
      const FlowEntry copy = item.entry;
      fence_system(cuda::std::memory_order_acquire);
      if (before != read + 1 || load_relaxed(&item.seq) != before) {
        ++lost;
        continue;
      }
      take(copy);
    }
  }
};

struct FlowTable {
  FlowEntry* slots = nullptr;
  uint32_t mask = 0;  // slot count - 1
  EvictionLog evicted{};  // items == nullptr: evictions counted only

  GNIO_HD static uint64_t hash(const FlowKey& k) {
    uint64_t h = fnv1a64(reinterpret_cast<const uint8_t*>(&k), sizeof(FlowKey));
    return h | 1u;
  }

  GNIO_HD static bool same(const FlowKey& x, const FlowKey& y) {
    const uint8_t* a = reinterpret_cast<const uint8_t*>(&x);
    const uint8_t* b = reinterpret_cast<const uint8_t*>(&y);
    for (uint32_t i = 0; i < sizeof(FlowKey); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

  // Adds one packet of `len` bytes at time `now` going in `direction`.
  GNIO_HD FlowOutcome update(const FlowKey& key, int direction, uint32_t len, uint64_t now,
                             uint32_t tcp_flags) const {
    return apply(key, hash(key), FlowDelta::one(direction, len, now, tcp_flags));
  }

  // Adds the packets of `d` (of the flow `key`, whose hash() is `h`) in one
  // update; the outcome is the first packet's (count_outcome()).
  GNIO_HD FlowOutcome apply(const FlowKey& key, uint64_t h, const FlowDelta& d) const {
    uint32_t oldest = 0;
    uint64_t oldest_seen = ~0ull;
    uint64_t oldest_tag = 0;
    for (uint32_t i = 0; i < kFlowProbe; ++i) {
      FlowEntry& e = slots[(h + i) & mask];
      uint64_t t = load_tag(e);
      if (t == 0) {
        uint64_t expected = 0;
        if (compare_exchange(&e.tag, expected, kFlowBusy)) {
          claim(e, key, h, d);
          return kFlowNew;
        }
        t = expected;
      }
      for (uint32_t spins = 0; t == kFlowBusy; ++spins) {
        backoff(spins);
        t = load_tag(e);
      }
      if (t == h && same(e.key, key)) {
        add(e, d);
        return kFlowHit;
      }
      const uint64_t seen = load_relaxed(&e.last_ns);
      if (seen < oldest_seen) {
        oldest_seen = seen;
        oldest = (static_cast<uint32_t>(h) + i) & mask;
        oldest_tag = t;
      }
    }
    FlowEntry& victim = slots[oldest];
    uint64_t expected = oldest_tag;
    if (oldest_tag == 0 || !compare_exchange(&victim.tag, expected, kFlowBusy)) return kFlowUntracked;
    if (evicted.items != nullptr) {
      FlowEntry old = victim;
      old.tag = oldest_tag;
      evicted.put(old);
    }
    claim(victim, key, h, d);
    return kFlowEvicted;
  }

 private:
  // Called with e.tag == kFlowBusy, held by this thread: the entry holds
  // exactly `d` once the tag is published.
  GNIO_HD static void claim(FlowEntry& e, const FlowKey& key, uint64_t h, const FlowDelta& d) {
    e.key = key;
    for (uint32_t k = 0; k < 2; ++k) {
      store_relaxed(&e.packets[k], uint64_t{d.packets[k]});
      store_relaxed(&e.bytes[k], d.bytes[k]);
      store_relaxed(&e.tcp_flags[k], d.tcp_flags[k]);
    }
    store_relaxed(&e.first_ns, d.first_ns);
    store_relaxed(&e.last_ns, d.last_ns);
    DeviceRef<uint64_t>(e.tag).store(h, cuda::std::memory_order_release);
  }

  // The table is the GPU's alone while the kernel runs (the host reads it
  // when the kernel has stopped, or as a snapshot it may find half-written):
  // device scope, which on the GPU spares the system-wide fence a release at
  // system scope costs every claim.
  GNIO_HD static uint64_t load_tag(FlowEntry& e) {
    return DeviceRef<uint64_t>(e.tag).load(cuda::std::memory_order_acquire);
  }

  GNIO_HD static void add(FlowEntry& e, const FlowDelta& d) {
    for (uint32_t k = 0; k < 2; ++k) {
      if (d.packets[k] == 0) continue;
      fetch_add_relaxed(&e.packets[k], uint64_t{d.packets[k]});
      fetch_add_relaxed(&e.bytes[k], d.bytes[k]);
      if (d.tcp_flags[k] != 0)
        DeviceRef<uint32_t>(e.tcp_flags[k]).fetch_or(d.tcp_flags[k], cuda::std::memory_order_relaxed);
    }
    // Atomic min and max whose results go unused: on the GPU a reduction
    // the thread does not wait for, where a compare-and-swap loop waited
    // for a load and the swap on every packet.
    DeviceRef<uint64_t>(e.first_ns).fetch_min(d.first_ns, cuda::std::memory_order_relaxed);
    DeviceRef<uint64_t>(e.last_ns).fetch_max(d.last_ns, cuda::std::memory_order_relaxed);
  }
};

}  // namespace gnio::dev::app
