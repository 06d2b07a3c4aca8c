// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Device side of batch receive: a persistent kernel gathers the
/// packets of its RX queue into batch buffers in GPU memory (each packet's
/// first `snap` bytes zero-padded, or whole frames back to back with their
/// offsets) and hands each full or timed-out batch to the host through a
/// semaphore.
///
/// The host side (gnio::BatchReceiver, gnio/batch.hpp) allocates the pool,
/// launches BatchKernel, takes the batches and gives each buffer back by
/// setting its semaphore item to SemStatus::Free.
#pragma once

#include <cstdint>
#include <cstring>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/kernel.hpp"
#include "gnio/dev/rxq.hpp"
#include "gnio/dev/semaphore.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/dev/thread.hpp"

namespace gnio::dev {

/// @brief Why a batch was handed over (BatchInfo::flags).
enum BatchFlags : uint32_t {
  BatchFull = 1u << 0,      ///< It holds BatchPool::capacity packets.
  BatchTimedOut = 1u << 1,  ///< Its first packet waited the kernel's timeout.
  BatchFlushed = 1u << 2,   ///< The kernel was stopped with the batch partly filled.
  BatchBytesFull = 1u << 3, ///< Its flat data has no room for the next packet (BatchPool::flat_bytes).
};

/// @brief The semaphore payload of a handed-over batch: which buffer holds
/// what. Written by the kernel before it sets the item to SemStatus::Ready.
struct BatchInfo {
  uint32_t count;   ///< Packets in the batch, 1..capacity.
  uint32_t queue;   ///< The RX queue id they came from.
  uint32_t block;   ///< The block that filled it.
  uint32_t flags;   ///< BatchFlags.
  uint64_t seq;     ///< The block's batch number, from 0: batches of one block are handed over in this order.
  uint64_t bytes;   ///< Sum of the packets' lengths (before the snap cut; the flat bytes used).
};
static_assert(sizeof(BatchInfo) == 32);

/// @brief What one block counted, in pinned host memory: stored by the
/// block's leader only, read by the host while the kernel runs.
struct BatchBlockCounters {
  uint64_t received;   ///< Packets received from the queue.
  uint64_t handed;     ///< Of those, packets in batches set Ready (stored after the Ready status).
  uint64_t pool_full;  ///< Of those, packets dropped because every buffer of the block was held.
  uint64_t batches;    ///< Batches set Ready.
  uint64_t flat_oversize;  ///< Of those received, packets longer than BatchPool::flat_bytes (dropped).
};

/// @brief The batch buffers as the kernel sees them: `buffers` buffers of
/// `capacity` packets. Padded (flat_bytes 0): buffer i's packet j has `snap`
/// bytes at data[(i * capacity + j) * snap] (zero-padded after its length).
/// Flat: its whole frame is data[i * flat_stride + offsets[o + j],
/// i * flat_stride + offsets[o + j + 1]) with o = i * (capacity + 1).
/// Its length, timestamp, RSS hash and queue are at index i * capacity + j
/// of the other arrays. Every array is in one device allocation.
struct BatchPool {
  uint8_t* data = nullptr;          ///< buffers * capacity * snap bytes, or buffers * flat_stride.
  uint32_t* lengths = nullptr;      ///< Received length of each packet (may exceed snap).
  uint64_t* timestamps = nullptr;   ///< RxDesc::timestamp_ns of each packet.
  uint32_t* rss_hash = nullptr;     ///< RxDesc::rss_hash of each packet.
  uint16_t* queue = nullptr;        ///< The RX queue id of each packet.
  uint32_t capacity = 0;            ///< Packets per buffer.
  uint32_t snap = 0;                ///< Bytes kept per packet.
  uint32_t buffers = 0;             ///< Buffers in the pool; item i of the semaphore is buffer i.
  uint32_t* offsets = nullptr;      ///< Flat: buffers * (capacity + 1) byte offsets; null when padded.
  uint32_t flat_bytes = 0;          ///< Flat: the bytes a buffer's frames may fill; 0: the padded layout.
  uint64_t flat_stride = 0;         ///< Flat: bytes from one buffer's data to the next (>= flat_bytes).
};

/// @brief The value every thread of the block gets from thread 0.
/// @param v Thread 0's value (the others' are ignored).
/// @return Thread 0's value. On the emulated device a block is one thread.
GNIO_HD inline uint64_t block_broadcast(uint64_t v) {
#if GNIO_DEVICE_PASS
  __shared__ uint64_t shared;
  __syncthreads();
  if (threadIdx.x == 0) shared = v;
  __syncthreads();
  return shared;
#else
  return v;
#endif
}

/// @brief The batch-gathering persistent kernel: block b receives from
/// queue b % count (RxQueueSet::for_this_block()) with Scope::Block and
/// owns the buffers b, b + grid, b + 2 grid, ... of the pool.
///
/// A block fills one buffer at a time: it receives at most the room left,
/// copies each packet's first `snap` bytes (zero-padding the rest) and its
/// metadata, releases the burst, and sets the buffer's semaphore item
/// Ready when it is full or its first packet waited `timeout_ns`. The host
/// sets the item back to Free when it is done with the buffer. With no
/// Free buffer of its own, a block either leaves the packets in the ring
/// (`drop_when_full` false: the ring holds them back, a wire drops at the
/// ring as ring_full) or receives and counts them as pool_full.
/// Every packet received is in exactly one Ready batch or in pool_full; at
/// stop, a partly filled batch is set Ready with BatchFlushed.
///
/// With the flat layout (BatchPool::flat_bytes != 0) the block's leader
/// lays out the run of a burst's packets that fits the room left, by count
/// and by bytes, writing their offsets; the threads then copy the frames
/// whole. The packet that does not fit starts the next buffer, so a burst
/// may span two batches: the block holds it (unreleased) until it has a
/// buffer, or under `drop_when_full` counts the rest as pool_full. A frame
/// longer than flat_bytes is received and counted as flat_oversize. Packets
/// of a held burst count as received only once placed or dropped, so what a
/// stop leaves of it is still the ring's (dropped as closed by the host).
struct BatchKernel {
  RxQueueSet queues;                 ///< The queues, one per block (or shared).
  uint16_t queue_ids[RxQueueSet::kMax];  ///< The queue id of queues.rxq[i].
  Semaphore sem;                     ///< One item per buffer, payload BatchInfo.
  BatchPool pool;                    ///< The buffers.
  BatchBlockCounters* counters;      ///< One per block, pinned host memory.
  uint32_t burst;                    ///< Most packets asked for per receive().
  uint64_t timeout_ns;               ///< How long a batch's first packet may wait before it is handed over.
  bool drop_when_full;               ///< Receive and drop (pool_full) when no buffer is Free.

  /// @brief The kernel body, run by every thread until the kernel is stopped.
  /// @param ctx The kernel's context.
  GNIO_HD void operator()(const KernelCtx& ctx) const {
    if (pool.flat_bytes) run_flat(ctx);
    else run_padded(ctx);
  }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;

  GNIO_HD void run_padded(const KernelCtx& ctx) const {
    const uint32_t me = block_index(), grid = grid_dim();
    const uint32_t slot = me % queues.count;
    const Rxq& rxq = queues.rxq[slot];
    const uint16_t qid = queue_ids[slot];
    const bool leader = thread_index() == 0;
    BatchBlockCounters c{};  // the leader's copy is the one stored
    uint32_t cur = kNone, fill = 0, next_try = me;
    uint64_t started = 0, seq = 0, bytes = 0;
    const uint64_t poll_ns = timeout_ns < kPollNs ? (timeout_ns ? timeout_ns : 1) : kPollNs;
    while (scope_all<Scope::Block>(ctx.running())) {
      ctx.heartbeat();
      if (cur == kNone) cur = take_buffer(me, grid, next_try);
      if (cur == kNone && !drop_when_full) {
        backoff(8);
        continue;
      }
      const uint32_t room = cur == kNone ? burst : pool.capacity - fill;
      RxBurst b = rxq.receive<Scope::Block>(room < burst ? room : burst, poll_ns);
      const uint32_t n = b.count();
      if (n) {
        uint64_t mine = 0, my_bytes = 0;
        for (uint32_t i = thread_index(); i < n; i += block_dim()) {
          Packet p = b[i];
          ++mine;
          my_bytes += p.size();
          if (cur != kNone) gather(p, static_cast<uint64_t>(cur) * pool.capacity + fill + i, qid);
        }
        rxq.release<Scope::Block>(b);  // synchronises the block: every copy is done
        ctx.count_packets(mine, my_bytes);
        ctx.count_burst<Scope::Block>();
        c.received += n;
        if (cur == kNone) {
          c.pool_full += n;
        } else {
          if (fill == 0) started = wait_clock_ns();
          fill += n;
          if (leader) bytes += sum_lengths(cur, fill - n, fill);
        }
        if (leader) store_counters(me, c);
      }
      if (cur == kNone || fill == 0) continue;
      if (const uint32_t why = why_hand_over(fill, false, started)) {
        hand_over(me, cur, fill, qid, why, seq++, bytes, c);
        cur = kNone;
        fill = 0;
        bytes = 0;
      }
    }
    if (cur != kNone && fill > 0) hand_over(me, cur, fill, qid, BatchFlushed, seq, bytes, c);
  }

  GNIO_HD void run_flat(const KernelCtx& ctx) const {
    const uint32_t me = block_index(), grid = grid_dim();
    const uint32_t slot = me % queues.count;
    const Rxq& rxq = queues.rxq[slot];
    const uint16_t qid = queue_ids[slot];
    const bool leader = thread_index() == 0;
    BatchBlockCounters c{};
    uint32_t cur = kNone, fill = 0, next_try = me, used = 0;  // used: the leader's bytes of cur's data
    uint64_t started = 0, seq = 0;
    RxBurst b;          // the burst being placed
    uint32_t done = 0;  // its packets placed or dropped
    const uint64_t poll_ns = timeout_ns < kPollNs ? (timeout_ns ? timeout_ns : 1) : kPollNs;
    while (scope_all<Scope::Block>(ctx.running())) {
      ctx.heartbeat();
      if (cur == kNone) cur = take_buffer(me, grid, next_try);
      if (done == b.count()) {
        if (cur == kNone && !drop_when_full) {
          backoff(8);
          continue;
        }
        const uint32_t room = cur == kNone ? burst : pool.capacity - fill;
        b = rxq.receive<Scope::Block>(room < burst ? room : burst, poll_ns);
        done = 0;
        uint64_t mine = 0, my_bytes = 0;
        for (uint32_t i = thread_index(); i < b.count(); i += block_dim()) {
          ++mine;
          my_bytes += b[i].size();
        }
        if (b.count()) {
          ctx.count_packets(mine, my_bytes);
          ctx.count_burst<Scope::Block>();
        }
      }
      const uint32_t n = b.count();
      bool no_room = false;
      if (done < n) {
        if (cur == kNone) {
          if (!drop_when_full) {  // hold the burst until the host gives a buffer back
            backoff(8);
            continue;
          }
          c.received += n - done;
          c.pool_full += n - done;
          done = n;
        } else {
          uint64_t plan = 0;  // k | too_long << 32 | no_room << 33, from the leader
          if (leader) plan = lay_out(b, done, cur, fill, used);
          plan = block_broadcast(plan);  // also orders the leader's offsets before the copies
          const uint32_t k = static_cast<uint32_t>(plan);
          const uint32_t too_long = static_cast<uint32_t>(plan >> 32) & 1u;
          no_room = (plan >> 33) & 1u;
          const uint64_t base = static_cast<uint64_t>(cur) * (pool.capacity + 1);
          for (uint32_t i = thread_index(); i < k; i += block_dim())
            gather_flat(b[done + i], cur, fill + i, pool.offsets[base + fill + i], qid);
          if (k && fill == 0) started = wait_clock_ns();
          if (leader && k) used = pool.offsets[base + fill + k];
          fill += k;
          done += k + too_long;
          c.received += k + too_long;
          c.flat_oversize += too_long;
        }
        if (done == n) rxq.release<Scope::Block>(b);  // synchronises the block: every copy is done
        if (leader) store_counters(me, c);
      }
      if (cur == kNone || fill == 0) continue;
      if (const uint32_t why = why_hand_over(fill, no_room, started)) {
        hand_over(me, cur, fill, qid, why, seq++, used, c);
        cur = kNone;
        fill = 0;
        used = 0;
      }
    }
    if (done < b.count()) rxq.release<Scope::Block>(b);
    if (cur != kNone && fill > 0) hand_over(me, cur, fill, qid, BatchFlushed, seq, used, c);
  }

  // The block's next free buffer (kNone while every one is held), taken by
  // the leader and broadcast.
  GNIO_HD uint32_t take_buffer(uint32_t me, uint32_t grid, uint32_t& next_try) const {
    uint32_t found = kNone;
    if (thread_index() == 0) found = take_free(me, grid, next_try);
    const uint32_t cur = static_cast<uint32_t>(block_broadcast(found));
    if (cur != kNone) next_try = cur + grid;
    return cur;
  }

  // Why the block hands its buffer of `fill` packets over now (0: it goes
  // on filling), decided by the leader and broadcast: full by count, by
  // bytes (no_room: the next packet did not fit), or timed out.
  GNIO_HD uint32_t why_hand_over(uint32_t fill, bool no_room, uint64_t started) const {
    uint32_t why = 0;
    if (thread_index() == 0) {
      if (fill == pool.capacity) why = BatchFull;
      else if (no_room) why = BatchBytesFull;
      else if (wait_clock_ns() - started >= timeout_ns) why = BatchTimedOut;
    }
    return static_cast<uint32_t>(block_broadcast(why));
  }

  // The leader's plan for packets done.. of `b` in buffer `buf` holding
  // `fill` packets and `used` bytes: the k that fit by count and bytes (their
  // end offsets written), whether the next is longer than a whole buffer
  // (too_long, only when k == 0) and whether the next found no room.
  GNIO_HD uint64_t lay_out(const RxBurst& b, uint32_t done, uint32_t buf, uint32_t fill, uint32_t used) const {
    uint32_t* off = pool.offsets + static_cast<uint64_t>(buf) * (pool.capacity + 1);
    if (fill == 0) off[0] = 0;
    uint32_t k = 0, at = used;
    uint64_t too_long = 0, no_room = 0;
    while (done + k < b.count() && fill + k < pool.capacity) {
      const uint32_t len = b[done + k].size();
      if (len > pool.flat_bytes) {
        too_long = k == 0;
        break;
      }
      if (len > pool.flat_bytes - at) {
        no_room = 1;
        break;
      }
      at += len;
      ++k;
      off[fill + k] = at;
    }
    return k | too_long << 32 | no_room << 33;
  }

  GNIO_HD void gather_flat(const Packet& p, uint32_t buf, uint32_t j, uint32_t offset, uint16_t qid) const {
    const uint32_t len = p.size();
    uint8_t* dst = pool.data + static_cast<uint64_t>(buf) * pool.flat_stride + offset;
    const uint8_t* src = p.data();
#if GNIO_DEVICE_PASS
    // Frames lie back to back, so the two sides share an 8-byte phase only
    // sometimes; then the middle goes in whole words.
    uint32_t k = 0;
    if (((reinterpret_cast<uintptr_t>(src) ^ reinterpret_cast<uintptr_t>(dst)) & 7u) == 0) {
      for (; k < len && (reinterpret_cast<uintptr_t>(dst + k) & 7u); ++k) dst[k] = src[k];
      for (; k + 8 <= len; k += 8)
        *reinterpret_cast<uint64_t*>(dst + k) = *reinterpret_cast<const uint64_t*>(src + k);
    }
    for (; k < len; ++k) dst[k] = src[k];
#else
    std::memcpy(dst, src, len);
#endif
    note(p, static_cast<uint64_t>(buf) * pool.capacity + j, qid);
  }

  GNIO_HD void note(const Packet& p, uint64_t at, uint16_t qid) const {
    pool.lengths[at] = p.size();
    pool.timestamps[at] = p.timestamp_ns();
    pool.rss_hash[at] = p.rss_hash();
    pool.queue[at] = qid;
  }

  // The first Free buffer of this block's own, starting at `from`.
  GNIO_HD uint32_t take_free(uint32_t me, uint32_t grid, uint32_t from) const {
    const uint32_t mine = (pool.buffers - me + grid - 1) / grid;  // buffers me, me + grid, ...
    uint32_t k = from >= me ? (from - me) / grid : 0;
    for (uint32_t tried = 0; tried < mine; ++tried, ++k) {
      const uint32_t i = me + (k % mine) * grid;
      if (sem.get_status(i) == SemStatus::Free) return i;
    }
    return 0xffffffffu;
  }

  GNIO_HD void gather(const Packet& p, uint64_t at, uint16_t qid) const {
    const uint32_t len = p.size();
    const uint32_t keep = len < pool.snap ? len : pool.snap;
    uint8_t* dst = pool.data + at * pool.snap;
    const uint8_t* src = p.data();
#if GNIO_DEVICE_PASS
    // Whole 8-byte words where both sides allow (a stride-aligned frame and
    // a snap of whole words): an eighth of the memory operations.
    uint32_t k = 0;
    const bool words = ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) & 7u) == 0;
    if (words)
      for (; k + 8 <= keep; k += 8)
        *reinterpret_cast<uint64_t*>(dst + k) = *reinterpret_cast<const uint64_t*>(src + k);
    for (; k < keep; ++k) dst[k] = src[k];
    uint32_t z = keep;  // the zero padding after the packet's bytes
    if (words) {
      for (; z < ((keep + 7) & ~7u) && z < pool.snap; ++z) dst[z] = 0;
      for (; z + 8 <= pool.snap; z += 8) *reinterpret_cast<uint64_t*>(dst + z) = 0;
    }
    for (; z < pool.snap; ++z) dst[z] = 0;
#else
    std::memcpy(dst, src, keep);
    std::memset(dst + keep, 0, pool.snap - keep);
#endif
    note(p, at, qid);
  }

  GNIO_HD uint64_t sum_lengths(uint32_t buf, uint32_t from, uint32_t to) const {
    uint64_t s = 0;
    for (uint32_t j = from; j < to; ++j) s += pool.lengths[static_cast<uint64_t>(buf) * pool.capacity + j];
    return s;
  }

  GNIO_HD void store_counters(uint32_t me, const BatchBlockCounters& c) const {
    store_relaxed(&counters[me].received, c.received);
    store_relaxed(&counters[me].pool_full, c.pool_full);
    store_relaxed(&counters[me].flat_oversize, c.flat_oversize);
  }

  // Every thread calls; the leader publishes. Ready is stored before
  // `handed`, so a host that sees the new `handed` also sees the item Ready.
  GNIO_HD void hand_over(uint32_t me, uint32_t buf, uint32_t fill, uint16_t qid, uint32_t why,
                         uint64_t seq, uint64_t bytes, BatchBlockCounters& c) const {
    sync_block();  // every thread's copies land before the leader's release
    c.handed += fill;
    c.batches += 1;
    if (thread_index() != 0) return;
    BatchInfo info{fill, qid, me, why, seq, bytes};
    uint8_t* dst = sem.payload(buf);
    const uint8_t* src = reinterpret_cast<const uint8_t*>(&info);
    for (uint32_t k = 0; k < sizeof(BatchInfo); ++k) dst[k] = src[k];
    // Pairs with the host's acquire of the status (GpuSemaphore::status()):
    // the payload and the block's copies into the buffer are visible to it.
    sem.set_status(buf, SemStatus::Ready);
    store_release(&counters[me].batches, c.batches);
    store_release(&counters[me].handed, c.handed);
  }
};

}  // namespace gnio::dev
