// SPDX-License-Identifier: Apache-2.0
// Persistent kernels of gnio_bench. They run unchanged on a GPU and on the
// emulated device (where a block is one CPU thread).
#pragma once

#include <cstdint>
#include <cstring>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/bufarr.hpp"
#include "gnio/dev/kernel.hpp"
#include "gnio/dev/rxq.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/dev/txq.hpp"

namespace gnio::bench {

inline constexpr uint64_t kPollNs = 200000;  // a stop request is seen within 200 us
inline constexpr uint32_t kBurst = 256;

// Reads all `len` bytes at `p`, `lanes` cooperating threads (this one is
// `lane`), and folds them into a sum so that no read can be left out.
GNIO_HD inline uint64_t touch(const uint8_t* p, uint32_t len, uint32_t lane, uint32_t lanes) {
  uint64_t sum = 0;
  uint32_t done = 0;
#if GNIO_DEVICE_PASS
  if ((reinterpret_cast<uintptr_t>(p) & 15u) == 0) {
    const uint4* v = reinterpret_cast<const uint4*>(p);
    const uint32_t words = len / 16;
    for (uint32_t i = lane; i < words; i += lanes) {
      const uint4 w = v[i];
      sum += (static_cast<uint64_t>(w.x ^ w.z) << 32) | (w.y ^ w.w);
    }
    done = words * 16;
  }
#else
  const uint32_t words = len / 8;
  for (uint32_t i = lane; i < words; i += lanes) {
    uint64_t w;
    std::memcpy(&w, p + 8ull * i, 8);
    sum += w;
  }
  done = words * 8;
#endif
  for (uint32_t i = done + lane; i < len; i += lanes) sum += p[i];
  return sum;
}

// What the receive kernel found, summed at exit (GpuCpu memory: atomics need device memory).
struct TouchTotals {
  uint64_t packets;
  uint64_t bytes;
  uint64_t sum;
  uint64_t bad_release;
  // Where a block's time went, summed over its bursts (wait_clock_ns, thread
  // 0): from the last release to holding the next burst (waiting for the
  // engine, claiming), reading it (all warps done), and releasing it (the
  // wait for the bursts before it included).
  uint64_t bursts;
  uint64_t receive_ns;
  uint64_t read_ns;
  uint64_t release_ns;
};


#if defined(__CUDACC__)
// Reads every byte of up to 32 packets, one per lane (`len` 0: this lane has
// none). The warp's 16-byte words are numbered across all of its packets and
// dealt out lane by lane, kUnroll loads in flight per lane before any is
// used: a warp reading its packets one after the other waits one memory
// round trip per packet (over PCIe about a microsecond), which is what made
// 64-byte packets latency-bound. Bytes past the last whole word, and packets
// not 16-byte aligned, are read by their own lane.
template <uint32_t kUnroll>
__device__ inline uint64_t touch_words(const uint8_t* p, uint32_t len, uint32_t words, uint32_t end, uint32_t total) {
  constexpr uint32_t kAll = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t begin = end - words;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  uint64_t sum = 0;
  for (uint32_t base = 0; base < total; base += 32 * kUnroll) {
    uint4 w[kUnroll];
#pragma unroll
    for (uint32_t u = 0; u < kUnroll; ++u) {
      const uint32_t idx = base + u * 32 + lane;
      uint32_t owner = 0;  // the first lane whose words end after idx
#pragma unroll
      for (uint32_t step = 16; step > 0; step >>= 1)
        if (__shfl_sync(kAll, end, owner + step - 1) <= idx) owner += step;
      const uint32_t first = __shfl_sync(kAll, begin, owner & 31u);
      const uintptr_t at = __shfl_sync(kAll, addr, owner & 31u);
      w[u] = idx < total ? reinterpret_cast<const uint4*>(at)[idx - first] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (uint32_t u = 0; u < kUnroll; ++u) sum += (static_cast<uint64_t>(w[u].x ^ w[u].z) << 32) | (w[u].y ^ w[u].w);
  }
  for (uint32_t i = words * 16; i < len; ++i) sum += p[i];
  return sum;
}

// Four loads in flight per lane cover a warp of 64-byte packets in one
// round; larger packets take many rounds, each a memory latency, so they get
// sixteen (at 1500 B four left a block at about 10 GB/s from device memory).
__device__ inline uint64_t touch_warp(const uint8_t* p, uint32_t len) {
  constexpr uint32_t kAll = 0xffffffffu;
  const uint32_t lane = threadIdx.x & 31u;
  const bool aligned = (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
  const uint32_t words = aligned ? len / 16 : 0;
  uint32_t end = words;  // inclusive scan: this lane's words end at `end`
  for (uint32_t d = 1; d < 32; d <<= 1) {
    const uint32_t v = __shfl_up_sync(kAll, end, d);
    if (lane >= d) end += v;
  }
  const uint32_t total = __shfl_sync(kAll, end, 31);
  return total > 32 * 4 ? touch_words<16>(p, len, words, end, total) : touch_words<4>(p, len, words, end, total);
}
#endif

// Receives bursts at block scope and reads every byte of every packet. On a
// GPU each thread loads one descriptor (one round trip for the whole burst)
// and each warp reads the bytes of its 32 packets together (touch_warp); on
// the emulated device the block is one thread and reads them in turn.
// Several blocks may serve one queue (block b serves queue b % count): the
// queue hands each the next burst, so their round trips overlap. Packets
// and bytes are counted per burst in the kernel's counters, which the host
// samples while it runs.
// How much of each packet the receive kernel reads: the anatomy rows of
// gnio_bench leave stages out to see what each costs.
enum class Touch : uint32_t { Bytes, Descriptors, Nothing };

struct TouchKernel {
  dev::RxQueueSet queues;
  TouchTotals* totals;
  uint32_t burst;
  Touch touch = Touch::Bytes;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Block;
    const dev::Rxq& rxq = queues.for_this_block();
    uint64_t packets = 0, bytes = 0, sum = 0, bad = 0;
    uint64_t bursts = 0, receive_ns = 0, read_ns = 0, release_ns = 0;
    uint64_t last = dev::wait_clock_ns();
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      const uint64_t held = dev::wait_clock_ns();
      uint64_t burst_bytes = 0;
#if GNIO_DEVICE_PASS
      for (uint32_t first = threadIdx.x & ~31u; first < b.count(); first += blockDim.x) {
        const uint32_t i = first + (threadIdx.x & 31u);
        const uint8_t* data = nullptr;
        uint32_t len = 0;
        if (i < b.count() && touch != Touch::Nothing) {
          const dev::Packet p = b[i];
          data = p.data();
          len = p.size();
        }
        if (touch == Touch::Bytes) sum += touch_warp(data, len);
        uint32_t warp_bytes = len;
        for (uint32_t d = 16; d > 0; d >>= 1) warp_bytes += __shfl_down_sync(0xffffffffu, warp_bytes, d);
        if ((threadIdx.x & 31u) == 0) burst_bytes += warp_bytes;
      }
#else
      for (uint32_t i = 0; i < b.count() && touch != Touch::Nothing; ++i) {
        const dev::Packet p = b[i];
        if (touch == Touch::Bytes) sum += bench::touch(p.data(), p.size(), 0, 1);
        burst_bytes += p.size();
      }
#endif
      dev::sync_block();  // every warp has read the burst (the timing's only barrier)
      const uint64_t read = dev::wait_clock_ns();
      if (rxq.release<S>(b) != dev::Status::Success) ++bad;
      const uint64_t released = dev::wait_clock_ns();
      if (dev::thread_index() == 0) {
        ctx.count_packets(b.count(), 0);
        packets += b.count();
        ++bursts;
        receive_ns += held - last;
        read_ns += read - held;
        release_ns += released - read;
      }
      last = released;
      if (burst_bytes) ctx.count_packets(0, burst_bytes);
      bytes += burst_bytes;
    }
    dev::fetch_add_relaxed(&totals->packets, packets);
    dev::fetch_add_relaxed(&totals->bytes, bytes);
    dev::fetch_add_relaxed(&totals->sum, sum);
    dev::fetch_add_relaxed(&totals->bad_release, bad);
    if (bursts) {
      dev::fetch_add_relaxed(&totals->bursts, bursts);
      dev::fetch_add_relaxed(&totals->receive_ns, receive_ns);
      dev::fetch_add_relaxed(&totals->read_ns, read_ns);
      dev::fetch_add_relaxed(&totals->release_ns, release_ns);
    }
  }
};

// Answers the host's doorbell: waits for `ping` to change and writes the new
// value to `pong` (both pinned host memory), so the host measures one round
// trip of a store each way.
struct DoorbellKernel {
  uint64_t* ping;
  uint64_t* pong;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    if (dev::thread_index() != 0) return;
    uint64_t seen = 0;
    for (uint32_t idle = 0;;) {
      const uint64_t v = dev::load_acquire(ping);
      if (v != seen) {
        seen = v;
        dev::store_release(pong, v);
        idle = 0;
        continue;
      }
      // The exit flag and the heartbeat cross PCIe too: only now and then.
      if ((++idle & 1023u) == 0) {
        if (!ctx.running()) break;
        ctx.heartbeat();
      }
      // A GPU thread spins: that is the floor being measured. An emulated
      // one yields, never sleeps.
      if (!GNIO_DEVICE_PASS) dev::backoff(idle < 4096 ? idle : 4096);
    }
  }
};

// Sends packets from a buffer pool as fast as the TX queues take them:
// bursts at block scope, buffer i of the pool for descriptor i of a queue.
struct TxKernel {
  static constexpr uint32_t kMaxQueues = 8;
  dev::Txq txq[kMaxQueues];  // block b sends on txq[b % queues]
  uint32_t queues;
  dev::BufArr pool;
  uint32_t len;
  uint32_t burst;
  // How a payload goes: sent in place, copied into its staging slot by one
  // thread (TxBatch::stage), or by a group of TxBatch::staging_lanes(len)
  // threads (TxBatch::stage_part).
  enum class Fill : uint32_t { InPlace, StagedByThread, StagedByLanes };
  Fill fill;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    constexpr Scope S = Scope::Block;
    const dev::Txq& q = txq[dev::block_index() % queues];
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::TxBatch t = q.reserve<S>(burst);
      if (t.status() == dev::Status::Again) {
        if (dev::thread_index() == 0) {
          ctx.count_again();
          q.wait_completions(q.completed() + burst, kPollNs);
        }
        continue;
      }
      if (t.status() != dev::Status::Success) {
        ctx.count_error();
        break;
      }
      if (fill == Fill::StagedByLanes) {
        const uint32_t size = dev::scope_size<S>(), want = dev::TxBatch::staging_lanes(len);
        const uint32_t lanes = want < size ? want : size, groups = size / lanes;
        const uint32_t rank = dev::scope_rank<S>(), lane = rank % lanes;
        if (rank < groups * lanes)  // a block size that is no multiple of `lanes` leaves the last threads out
          for (uint32_t i = rank / lanes; i < t.count(); i += groups)
            t.stage_part(i, pool.elem(static_cast<uint32_t>((t.first() + i) % pool.count)), len, lane, lanes);
      } else {
        for (uint32_t i = dev::scope_rank<S>(); i < t.count(); i += dev::scope_size<S>()) {
          const void* payload = pool.elem(static_cast<uint32_t>((t.first() + i) % pool.count));
          if (fill == Fill::StagedByThread) t.stage(i, payload, len);
          else t.set(i, payload, len);
        }
      }
      q.commit<S>(t);
      if (dev::thread_index() == 0) {
        q.push();
        ctx.count_packets(t.count(), static_cast<uint64_t>(t.count()) * len);
      }
    }
  }
};

}  // namespace gnio::bench
