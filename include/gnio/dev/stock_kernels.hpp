// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Stock persistent kernels: count what is received, echo it back.
///
/// Each is a functor templated on the cooperation scope, launched with
/// PersistentKernel::launch() (gnio/persistent_kernel.hpp) and with_scope()
/// (gnio/dev/config.hpp) for a scope chosen at run time. They are what the
/// examples run, what the tests check a queue with, and a starting point for
/// a kernel of one's own.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/filter.hpp"
#include "gnio/dev/headers.hpp"
#include "gnio/dev/kernel.hpp"
#include "gnio/dev/rxq.hpp"
#include "gnio/dev/txq.hpp"

namespace gnio::dev {

/// @brief What ReceiveKernel found, summed over all threads (the sums do not
/// depend on which thread saw which packet).
struct ReceiveTotals {
  uint64_t packets;      ///< Packets received that the kernel's filter matched (all of them without a filter).
  uint64_t bytes;        ///< Their bytes.
  uint64_t checksum;     ///< Sum of fnv1a64() of each of them.
  uint64_t bad_release;  ///< Releases the queue refused.
  uint64_t filtered;     ///< Packets received that the filter rejected: counted here only.
};

/// @brief How long the stock kernels wait in one receive or completion poll
/// (200 us): a stop request is seen within this.
inline constexpr uint64_t kPollNs = 200000;

/// @brief Packets up to this many bytes are turned into their reply in a
/// copy the thread holds (swap_addresses_staged()).
inline constexpr uint32_t kStagedReplyBytes = 256;

/// @brief Turns a packet into its reply (swap_addresses()), in a copy this
/// thread holds when it is short.
///
/// All of a short packet's bytes are read at once (independent loads, one
/// memory round trip), where parsing it where it lies waits a round trip per
/// header field read after the one before (over PCIe, about a microsecond
/// each when the ring is in host memory). The copy is written back whole;
/// longer packets are changed in place.
/// @param p The packet, changed in place.
/// @param len Its length in bytes.
/// @return What swap_addresses() returned; the packet is unchanged unless Ok.
GNIO_HD inline HeaderStatus swap_addresses_staged(uint8_t* p, uint32_t len) {
  if (len > kStagedReplyBytes) return swap_addresses(p, len);
#if GNIO_DEVICE_PASS
  uint4 copy[kStagedReplyBytes / 16];
  uint8_t* bytes = reinterpret_cast<uint8_t*>(copy);
  const bool aligned = (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
  const uint32_t words = aligned ? (len + 15) / 16 : 0;  // a ring stride is whole words
  for (uint32_t i = 0; i < words; ++i) copy[i] = reinterpret_cast<const uint4*>(p)[i];
  for (uint32_t i = words * 16; i < len; ++i) bytes[i] = p[i];
  const HeaderStatus st = swap_addresses(bytes, len);
  if (st != HeaderStatus::Ok) return st;  // refused before any change
  for (uint32_t i = 0; i < len / 16 && aligned; ++i) reinterpret_cast<uint4*>(p)[i] = copy[i];
  for (uint32_t i = aligned ? len / 16 * 16 : 0; i < len; ++i) p[i] = bytes[i];
  return st;
#else
  return swap_addresses(p, len);  // host memory: nothing to gain
#endif
}

/// @brief The RX queues of one port that a kernel serves, one per block:
/// block b receives from queue b % count (several blocks may share a queue).
struct RxQueueSet {
  static constexpr uint32_t kMax = 32;  ///< The most queues a set holds.
  Rxq rxq[kMax];                        ///< The queues; the first `count` are used.
  uint32_t count = 0;                   ///< How many queues the set holds.

  /// @brief A set of one queue.
  /// @param q The queue's device handle.
  /// @return The set.
  GNIO_HD static RxQueueSet of(const Rxq& q) {
    RxQueueSet s;
    s.rxq[0] = q;
    s.count = 1;
    return s;
  }
  /// @brief The queue the calling block receives from.
  /// @return rxq[block_index() % count].
  GNIO_HD const Rxq& for_this_block() const { return rxq[block_index() % count]; }
};

/// @brief Receives and releases every packet, counting packets and bytes and
/// summing a checksum of their bytes (what host_receive_totals() computes on
/// the host path); with a filter, only of the packets it matches, the others
/// counted as filtered and released without further work.
///
/// The kernel's own counters (KernelCtx::count_packets()) count every packet
/// received, filtered or not.
/// @tparam S The cooperation scope of receive() and release().
template <Scope S>
struct ReceiveKernel {
  RxQueueSet queues;      ///< The queues the blocks receive from.
  ReceiveTotals* totals;  ///< GpuCpu memory (atomics need device memory): added to once per thread at exit.
  uint32_t burst;         ///< Packets asked for per receive().
  /// The filter each packet must match (gnio::FilterProgram::handle()); the
  /// default matches every packet. Its wire length is the received length:
  /// a ring descriptor carries no other.
  FilterRef filter{};

  /// @brief The kernel body, run by every thread until the kernel is stopped.
  /// @param ctx The kernel's context.
  GNIO_HD void operator()(const KernelCtx& ctx) const {
    const Rxq& rxq = queues.for_this_block();
    uint64_t packets = 0, bytes = 0, checksum = 0, bad = 0, filtered = 0;
    while (scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t i = scope_rank<S>(); i < b.count(); i += scope_size<S>()) {
        Packet p = b[i];
        ++mine;
        my_bytes += p.size();
        if (filter.run(p.data(), p.size(), p.size()) == 0) {
          ++filtered;
          continue;
        }
        ++packets;
        bytes += p.size();
        checksum += fnv1a64(p.data(), p.size());
      }
      if (rxq.release<S>(b) != Status::Success) ++bad;
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
    fetch_add_relaxed(&totals->packets, packets);
    fetch_add_relaxed(&totals->bytes, bytes);
    fetch_add_relaxed(&totals->checksum, checksum);
    fetch_add_relaxed(&totals->bad_release, bad);
    fetch_add_relaxed(&totals->filtered, filtered);
  }
};

/// @brief Swaps the L2/L3/L4 addresses of every packet in place and sends it
/// back through the TX queue, zero-copy from the RX ring (any length the
/// queue sends, not bounded by its staging slots).
///
/// A burst is released only after its completions arrive, since the engine
/// reads the ring's bytes to send them.
/// @tparam S The cooperation scope of receive(), reserve() and commit().
template <Scope S>
struct EchoKernel {
  Rxq rxq;         ///< Where packets come from.
  Txq txq;         ///< Where their replies go.
  uint32_t burst;  ///< Packets asked for per receive().

  /// @brief The kernel body, run by every thread until the kernel is stopped.
  /// @param ctx The kernel's context.
  GNIO_HD void operator()(const KernelCtx& ctx) const {
    while (scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      RxBurst b = rxq.receive<S>(burst, kPollNs);
      if (b.count() == 0) continue;
      uint64_t mine = 0, my_bytes = 0;
      for (uint32_t i = scope_rank<S>(); i < b.count(); i += scope_size<S>()) {
        Packet p = b[i];
        ++mine;
        my_bytes += p.size();
        if (swap_addresses_staged(p.data(), p.size()) != HeaderStatus::Ok) ctx.count_error();
      }
      TxBatch t = txq.reserve<S>(b.count());
      while (t.status() == Status::Again && scope_all<S>(ctx.running())) {
        ctx.count_again();
        txq.wait_completions(txq.completed() + 1, kPollNs);  // drain, then retry
        t = txq.reserve<S>(b.count());
      }
      if (t.status() != Status::Success) break;
      for (uint32_t i = scope_rank<S>(); i < b.count(); i += scope_size<S>()) {
        Packet p = b[i];
        // Longer than the queue sends: refused, and counted by it as dropped(too_long).
        if (t.set(i, p.data(), p.size()) != Status::Success) ctx.count_error();
      }
      txq.commit<S>(t);
      if (scope_rank<S>() == 0) {
        txq.push();
        while (txq.wait_completions(t.first() + t.count(), kPollNs) == Status::Timeout && ctx.running()) {
        }
      }
      rxq.release<S>(b);
      ctx.count_packets(mine, my_bytes);
      ctx.count_burst<S>();
    }
  }
};

}  // namespace gnio::dev
