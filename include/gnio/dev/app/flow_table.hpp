// A bounded, lock-free flow table in device memory (MemKind Gpu or GpuCpu:
// it uses read-modify-write atomics). Open addressing over a power-of-two
// number of slots with a short probe window; a slot is claimed by one
// compare-and-swap on its tag, so threads never wait on a lock. When the
// window is full, the slot seen least recently in it is taken over and the
// eviction counted; if another thread holds that slot at that instant the
// packet goes uncounted in the table (and is counted as such).
#pragma once

#include <cstdint>

#include "gnio/dev/app/analyze.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "gnio/dev/thread.hpp"

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

struct FlowTable {
  FlowEntry* slots = nullptr;
  uint32_t mask = 0;  // slot count - 1

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
    const uint64_t h = hash(key);
    uint32_t oldest = 0;
    uint64_t oldest_seen = ~0ull;
    uint64_t oldest_tag = 0;
    for (uint32_t i = 0; i < kFlowProbe; ++i) {
      FlowEntry& e = slots[(h + i) & mask];
      uint64_t t = load_tag(e);
      if (t == 0) {
        uint64_t expected = 0;
        if (compare_exchange(&e.tag, expected, kFlowBusy)) {
          claim(e, key, h, now);
          add(e, direction, len, now, tcp_flags);
          return kFlowNew;
        }
        t = expected;
      }
      for (uint32_t spins = 0; t == kFlowBusy; ++spins) {
        backoff(spins);
        t = load_tag(e);
      }
      if (t == h && same(e.key, key)) {
        add(e, direction, len, now, tcp_flags);
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
    claim(victim, key, h, now);
    add(victim, direction, len, now, tcp_flags);
    return kFlowEvicted;
  }

 private:
  // Called with e.tag == kFlowBusy, held by this thread.
  GNIO_HD static void claim(FlowEntry& e, const FlowKey& key, uint64_t h, uint64_t now) {
    e.key = key;
    store_relaxed(&e.packets[0], uint64_t{0});
    store_relaxed(&e.packets[1], uint64_t{0});
    store_relaxed(&e.bytes[0], uint64_t{0});
    store_relaxed(&e.bytes[1], uint64_t{0});
    store_relaxed(&e.first_ns, now);
    store_relaxed(&e.last_ns, now);
    store_relaxed(&e.tcp_flags[0], 0u);
    store_relaxed(&e.tcp_flags[1], 0u);
    DeviceRef<uint64_t>(e.tag).store(h, cuda::std::memory_order_release);
  }

  // The table is the GPU's alone while the kernel runs (the host reads it
  // when the kernel has stopped, or as a snapshot it may find half-written):
  // device scope, which on the GPU spares the system-wide fence a release at
  // system scope costs every claim.
  GNIO_HD static uint64_t load_tag(FlowEntry& e) {
    return DeviceRef<uint64_t>(e.tag).load(cuda::std::memory_order_acquire);
  }

  GNIO_HD static void add(FlowEntry& e, int direction, uint32_t len, uint64_t now, uint32_t tcp_flags) {
    fetch_add_relaxed(&e.packets[direction], uint64_t{1});
    fetch_add_relaxed(&e.bytes[direction], uint64_t{len});
    uint64_t first = load_relaxed(&e.first_ns);
    while (now < first && !compare_exchange(&e.first_ns, first, now)) {
    }
    uint64_t last = load_relaxed(&e.last_ns);
    while (now > last && !compare_exchange(&e.last_ns, last, now)) {
    }
    if (tcp_flags != 0) DeviceRef<uint32_t>(e.tcp_flags[direction]).fetch_or(tcp_flags, cuda::std::memory_order_relaxed);
  }
};

}  // namespace gnio::dev::app
