// SPDX-License-Identifier: Apache-2.0
// The persistent kernels the tests and benchmarks drive queues with: count
// what is received, echo it back. Each is a functor templated on the
// cooperation scope. They are the kernels the examples teach (kernels.hpp
// of the examples' common folder), in the tests' own copy and under the
// examples' namespace: a test runs what an example shows, and rewriting the
// example for its readers does not change what the tests check.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/headers.hpp"
#include "gnio/dev/kernel.hpp"
#include "gnio/dev/rxq.hpp"
#include "gnio/dev/txq.hpp"

namespace gnio::examples {

// What a receive kernel found, summed over all threads (order-independent).
struct ReceiveTotals {
  uint64_t packets;
  uint64_t bytes;
  uint64_t checksum;  // sum of fnv1a64 of every packet
  uint64_t bad_release;
};

inline constexpr uint64_t kPollNs = 200000;  // 200 us: a stop request is seen within this

// Turns a packet into its reply (dev::swap_addresses) in a copy this thread
// holds when it is short: all of its bytes are read at once (independent
// loads, one memory round trip), where parsing it where it lies waits a
// round trip per header field read after the one before (over PCIe, about a
// microsecond each when the ring is in host memory). The copy is written
// back whole; longer packets are changed in place.
inline constexpr uint32_t kStagedReplyBytes = 256;
GNIO_HD inline dev::HeaderStatus swap_addresses_staged(uint8_t* p, uint32_t len) {
  if (len > kStagedReplyBytes) return dev::swap_addresses(p, len);
#if GNIO_DEVICE_PASS
  uint4 copy[kStagedReplyBytes / 16];
  uint8_t* bytes = reinterpret_cast<uint8_t*>(copy);
  const bool aligned = (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
  const uint32_t words = aligned ? (len + 15) / 16 : 0;  // a ring stride is whole words
  for (uint32_t i = 0; i < words; ++i) copy[i] = reinterpret_cast<const uint4*>(p)[i];
  for (uint32_t i = words * 16; i < len; ++i) bytes[i] = p[i];
  const dev::HeaderStatus st = dev::swap_addresses(bytes, len);
  if (st != dev::HeaderStatus::Ok) return st;  // refused before any change
  for (uint32_t i = 0; i < len / 16 && aligned; ++i) reinterpret_cast<uint4*>(p)[i] = copy[i];
  for (uint32_t i = aligned ? len / 16 * 16 : 0; i < len; ++i) p[i] = bytes[i];
  return st;
#else
  return dev::swap_addresses(p, len);  // host memory: nothing to gain
#endif
}

// The RX queues of one port that a kernel serves, one per block: block b
// receives from queue b % count (several blocks may share a queue).
struct RxQueueSet {
  static constexpr uint32_t kMax = 16;
  dev::Rxq rxq[kMax];
  uint32_t count = 0;

  GNIO_HD static RxQueueSet of(const dev::Rxq& q) {
    RxQueueSet s;
    s.rxq[0] = q;
    s.count = 1;
    return s;
  }
  GNIO_HD const dev::Rxq& for_this_block() const { return rxq[dev::block_index() % count]; }
};

template <Scope S>
struct ReceiveKernel {
  RxQueueSet queues;
  ReceiveTotals* totals;  // GpuCpu memory (atomics need device memory): added to once per thread at exit
  uint32_t burst;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    const dev::Rxq& rxq = queues.for_this_block();
    uint64_t packets = 0, bytes = 0, checksum = 0, bad = 0;
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        dev::Packet p = b[i];
        ++mine;
        my_bytes += p.size();
        checksum += dev::fnv1a64(p.data(), p.size());
      }
      packets += mine;
      bytes += my_bytes;
      if (rxq.release<S>(b) != dev::Status::Success) ++bad;
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
    dev::fetch_add_relaxed(&totals->packets, packets);
    dev::fetch_add_relaxed(&totals->bytes, bytes);
    dev::fetch_add_relaxed(&totals->checksum, checksum);
    dev::fetch_add_relaxed(&totals->bad_release, bad);
  }
};

// Swaps L2/L3/L4 addresses of every packet in place and sends it back
// through the TX queue, zero-copy from the RX ring (any length the queue
// sends, not bounded by its staging slots); the burst is released only
// after its completions arrive (the engine reads the ring bytes).
template <Scope S>
struct EchoKernel {
  dev::Rxq rxq;
  dev::Txq txq;
  uint32_t burst;

  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        dev::Packet p = b[i];
        ++mine;
        my_bytes += p.size();
        if (swap_addresses_staged(p.data(), p.size()) != dev::HeaderStatus::Ok) ctx.count_error();
      }
      dev::TxBatch t = txq.reserve<S>(b.count());
      while (t.status() == dev::Status::Again && dev::scope_all<S>(ctx.running())) {
        ctx.count_again();
        txq.wait_completions(txq.completed() + 1, kPollNs);  // drain, then retry
        t = txq.reserve<S>(b.count());
      }
      if (t.status() != dev::Status::Success) break;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        dev::Packet p = b[i];
        // Longer than the queue sends: refused, and counted by it as dropped(too_long).
        if (t.set(i, p.data(), p.size()) != dev::Status::Success) ctx.count_error();
      }
      txq.commit<S>(t);
      if (dev::scope_rank<S>() == 0) {
        txq.push();
        while (txq.wait_completions(t.first() + t.count(), kPollNs) == dev::Status::Timeout && ctx.running()) {
        }
      }
      rxq.release<S>(b);
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
  }
};

}  // namespace gnio::examples
