// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Device TX: reserve descriptors, fill them (a pointer into registered
/// memory, e.g. an RX packet modified in place, or bytes written into the
/// descriptor's staging slot), commit them, and push them to the NIC engine.
///
/// A fill the queue cannot send (too long, empty) returns InvalidValue at
/// once; its descriptor completes in order, counted as dropped.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/ring.hpp"
#include "gnio/dev/status.hpp"
#include "gnio/dev/thread.hpp"

namespace gnio::dev {

/// @brief Descriptors [first, first + count) reserved by one caller.
///
/// Returned by Txq::reserve(); every thread of the reserving scope holds the
/// same batch and may fill any of its descriptors (set(), stage() or
/// set_staged(), one per descriptor), before Txq::commit() of the batch.
class TxBatch {
 public:
  /// @brief An empty batch (count() == 0).
  TxBatch() = default;
  /// @brief The batch of descriptors [first, first + count) of `ring`
  ///        (Txq::reserve() makes these).
  /// @param ring The queue's ring.
  /// @param first The index of the batch's first descriptor.
  /// @param count The number of descriptors.
  /// @param status The outcome of the reservation.
  GNIO_HD TxBatch(const TxRing& ring, uint64_t first, uint32_t count, Status status)
      : ring_(ring), first_(first), count_(count), status_(status) {}

  /// @brief The number of descriptors in the batch.
  /// @return Descriptors; 0 when the reservation failed.
  GNIO_HD uint32_t count() const { return count_; }
  /// @brief The free-running index of the batch's first descriptor.
  /// @return The index; the batch is sent once Txq::completed() passes
  ///         first() + count().
  GNIO_HD uint64_t first() const { return first_; }
  /// @brief The outcome of the reservation that made the batch.
  /// @return Success; Again when the ring had too few free descriptors;
  ///         InvalidValue when 0 or more than Txq::depth() were asked for.
  GNIO_HD Status status() const { return status_; }

  /// @brief Sends `len` bytes at `data` (device-visible, in memory registered
  /// with the queue's GPU, e.g. an RX packet modified in place), zero-copy:
  /// any length up to max_len(), not bounded by the staging slot.
  /// @param i descriptor of the batch, < count()
  /// @param data The payload's device-visible address; it must stay unchanged
  ///        until the descriptor completes (Txq::completed()).
  /// @param len Bytes to send, 1..max_len().
  /// @param send_time_ns != 0: the engine holds it until then (CLOCK_REALTIME ns)
  /// @return Success; InvalidValue when len is 0 or over max_len(). A refused
  /// descriptor is still committed and pushed with the batch (the ring stays in
  /// order); the engine completes it unsent and counts it as dropped
  /// (TxDropReason::Empty or TooLong).
  GNIO_HD Status set(uint32_t i, const void* data, uint32_t len, uint64_t send_time_ns = 0) const {
    if (len == 0 || len > ring_.max_len) return refuse(i, len);
    TxDesc* d = desc(i);
    d->addr = reinterpret_cast<uint64_t>(data);
    d->len = len;
    d->flags = send_time_ns ? TxWaitOnTime : 0u;
    d->send_time_ns = send_time_ns;
    return Status::Success;
  }

  /// @brief Staging slot of descriptor i (slot_size() bytes, pinned host memory).
  /// @param i descriptor of the batch, < count()
  /// @return The slot's first byte, 64-byte aligned; write the frame there,
  ///         then set_staged().
  GNIO_HD uint8_t* staging(uint32_t i) const {
    return ring_.staging + ((first_ + i) & ring_.desc_mask) * static_cast<uint64_t>(ring_.slot_size);
  }
  /// @brief The size of each staging slot (EthTxq::staging_slot_size()).
  /// @return Bytes, a multiple of 64: the longest frame stage() and
  ///         set_staged() send.
  GNIO_HD uint32_t slot_size() const { return ring_.slot_size; }
  /// @brief The longest frame the queue sends (EthTxq::max_packet_size()).
  /// @return Bytes: the longest len that set() accepts.
  GNIO_HD uint32_t max_len() const { return ring_.max_len; }

  /// @brief Copies `len` bytes at `src` (e.g. a packet in device memory) into
  /// staging(i) and sends them from there. The engine then reads mapped
  /// memory and copies nothing: for small packets the GPU's posted writes
  /// cost less than the engine's DMA and its wait. Frames longer than a slot
  /// go with set() instead.
  /// @param i descriptor of the batch, < count()
  /// @param src The bytes to copy, readable by the calling thread.
  /// @param len Bytes to send, 1..min(slot_size(), max_len()).
  /// @param send_time_ns != 0: the engine holds it until then (CLOCK_REALTIME ns)
  /// @return Success; InvalidValue, copying nothing, when len is 0 or over
  /// slot_size() or max_len(): refused as in set()
  GNIO_HD Status stage(uint32_t i, const void* src, uint32_t len, uint64_t send_time_ns = 0) const {
    if (!fits_slot(len)) return refuse(i, len);
    copy_to_slot(i, src, len);
    return set_staged(i, len, send_time_ns);
  }

  /// @brief One lane's share of stage(), for `lanes` threads staging one
  /// payload together: a thread copies a big payload with too few loads in
  /// flight to keep the bus busy. Lane `lane` copies the 16-byte words
  /// lane, lane + lanes, ... (bytes, when `src` is not 16-byte aligned)
  /// and lane 0 also fills the descriptor. Every lane must belong to the
  /// scope that then commits the batch: the commit's barrier orders the
  /// lanes' copies before its fence.
  /// @param i descriptor of the batch, < count()
  /// @param src The bytes to copy, readable by the calling thread.
  /// @param len Bytes to send, 1..min(slot_size(), max_len()).
  /// @param lane This thread's place in the group, < lanes.
  /// @param lanes The threads staging this payload (staging_lanes(len) is
  ///        a good number), at least 1.
  /// @param send_time_ns != 0: the engine holds it until then (CLOCK_REALTIME ns)
  /// @return Success; InvalidValue, copying nothing, when len is 0 or over
  /// slot_size() or max_len() (lane 0 refuses the descriptor as in set()),
  /// or when lane >= lanes (that thread copies nothing)
  GNIO_HD Status stage_part(uint32_t i, const void* src, uint32_t len, uint32_t lane, uint32_t lanes,
                            uint64_t send_time_ns = 0) const {
    if (lane >= lanes) return Status::InvalidValue;
    if (!fits_slot(len)) return lane == 0 ? refuse(i, len) : Status::InvalidValue;
    copy_to_slot(i, src, len, lane, lanes);
    return lane == 0 ? set_staged(i, len, send_time_ns) : Status::Success;
  }

  /// @brief How many lanes stage_part() wants for a payload of `len`
  /// bytes: a power of two, at most 32, giving each lane about two 16-byte
  /// words.
  /// @param len The payload's bytes.
  /// @return 1..32.
  GNIO_HD static uint32_t staging_lanes(uint32_t len) {
    uint32_t lanes = 1;
    while (lanes < 32 && lanes * 32 < len) lanes *= 2;
    return lanes;
  }

  /// @brief Sends the first `len` bytes written into staging(i).
  /// @param i descriptor of the batch, < count()
  /// @param len Bytes to send, 1..min(slot_size(), max_len()).
  /// @param send_time_ns != 0: the engine holds it until then (CLOCK_REALTIME ns)
  /// @return Success; InvalidValue when len is 0 or over slot_size() or
  /// max_len(): refused as in set()
  GNIO_HD Status set_staged(uint32_t i, uint32_t len, uint64_t send_time_ns = 0) const {
    if (!fits_slot(len)) return refuse(i, len);
    TxDesc* d = desc(i);
    d->addr = 0;
    d->len = len;
    d->flags = TxStaged | (send_time_ns ? TxWaitOnTime : 0u);
    d->send_time_ns = send_time_ns;
    return Status::Success;
  }

  /// @brief Records a received frame: copies its first min(len,
  /// slot_size()) bytes into staging(i) and marks the descriptor a capture
  /// (TxCapture), carrying its RX queue, RX timestamp, pcapng epb_flags and
  /// whole length to the backend (pcapng-out writes them into the frame's
  /// Enhanced Packet Block). Nothing waits: the RX frame may be released as
  /// soon as this returns.
  /// @param i descriptor of the batch, < count()
  /// @param src The frame's bytes, readable by the calling thread.
  /// @param len The frame's length, >= 1; bytes past slot_size() are left out
  ///        (the record's captured length is then shorter than its length).
  /// @param rx_queue The RX queue the frame came from (its pcapng interface).
  /// @param rx_timestamp_ns The frame's RX timestamp (CLOCK_REALTIME ns).
  /// @param epb_flags The Enhanced Packet Block's epb_flags (direction,
  ///        checksum and error bits, dev::epb in capture.hpp).
  /// @return Success; InvalidValue when len is 0 (refused as in set()).
  GNIO_HD Status stage_capture(uint32_t i, const void* src, uint32_t len, uint16_t rx_queue,
                               uint64_t rx_timestamp_ns, uint32_t epb_flags) const {
    const uint32_t kept = len < ring_.slot_size ? len : ring_.slot_size;
    if (len == 0 || kept > ring_.max_len) return refuse(i, len);
    copy_to_slot(i, src, kept);
    TxDesc* d = desc(i);
    d->addr = rx_queue;
    d->len = kept;
    d->flags = TxStaged | TxCapture;
    d->send_time_ns = rx_timestamp_ns;
    d->reserved = uint64_t{epb_flags} | (uint64_t{len} << 32);
    return Status::Success;
  }

 private:
  GNIO_HD TxDesc* desc(uint32_t i) const { return &ring_.desc[(first_ + i) & ring_.desc_mask]; }
  GNIO_HD bool fits_slot(uint32_t len) const { return len != 0 && len <= ring_.slot_size && len <= ring_.max_len; }
  // Lane `lane` of `lanes` copies its share: the 16-byte words lane, lane +
  // lanes, ... when `src` is aligned (slots are 64-byte aligned), then the
  // bytes left likewise.
  GNIO_HD void copy_to_slot(uint32_t i, const void* src, uint32_t len, uint32_t lane = 0, uint32_t lanes = 1) const {
    struct alignas(16) Chunk {
      uint64_t lo, hi;
    };
    uint8_t* dst = staging(i);
    const auto* from = static_cast<const uint8_t*>(src);
    uint32_t j = 0;
    if ((reinterpret_cast<uint64_t>(from) & 15u) == 0) {
      const uint32_t words = len / 16;
      for (uint32_t w = lane; w < words; w += lanes)
        *reinterpret_cast<Chunk*>(dst + w * 16) = *reinterpret_cast<const Chunk*>(from + w * 16);
      j = words * 16;
    }
    for (j += lane; j < len; j += lanes) dst[j] = from[j];
  }
  // Marks descriptor i refused: the engine completes it as dropped, unsent.
  GNIO_HD Status refuse(uint32_t i, uint32_t len) const {
    TxDesc* d = desc(i);
    d->addr = 0;
    d->len = len;
    d->flags = TxRefused;
    d->send_time_ns = 0;
    return Status::InvalidValue;
  }

  TxRing ring_{};
  uint64_t first_ = 0;
  uint32_t count_ = 0;
  Status status_ = Status::Success;
};

/// @brief The device view of a started TX queue: reserve, fill, commit and
/// push descriptors, then wait for their completions.
///
/// From gnio::GpuTxq::handle(); trivially copyable, pass it to a kernel by
/// value. Valid while the GpuTxq is alive. On the host the queue goes:
/// EthDevice::create_txq(), the EthTxq setters (with EthTxq::set_gpu()),
/// EthTxq::start(), GpuTxq::create(), the kernel launched; then the kernel
/// stopped, GpuTxq::destroy(), EthTxq::stop() (which waits up to its timeout
/// for what was pushed), EthTxq::destroy(). In the kernel each batch goes reserve(), its
/// descriptors filled (TxBatch), commit(), then push(); nothing is sent
/// before push(), and a descriptor's payload and staging slot are free
/// again once completed() passes it. Host and device (the emulated device
/// runs the same code on CPU threads).
///
/// The device and the TX engine (src/engine/tx_engine.cpp) exchange three
/// indices in pinned host memory: TxRing::producer (device to engine),
/// TxRing::completed and TxRing::errors (engine to device); each access
/// below names the access on the other side it pairs with.
class Txq {
 public:
  /// @brief An empty queue; not usable by a kernel.
  Txq() = default;
  /// @brief The view of a queue's ring (gnio::GpuTxq makes these).
  /// @param ring The ring the TX engine made at EthTxq::start().
  explicit Txq(const TxRing& ring) : ring_(ring) {}

  /// @brief Reserves n descriptors.
  ///
  /// Again when the ring has fewer than n free: the caller drains
  /// completions (wait_completions) and retries. Every thread of the scope
  /// must call it and gets the same batch. Whether the ring has room is
  /// read from the device's copy of the completion count, and from
  /// TxRing::completed in host memory (an acquire that pairs with the
  /// engine's release in TxEngine::poll() and TxEngine::stop(),
  /// src/engine/tx_engine.cpp) only when the copy says the ring is full.
  /// @tparam S The scope that reserves together (Scope::Thread, Warp or Block).
  /// @param n The number of descriptors, 1..depth().
  /// @return The batch: Success with n descriptors; Again (no descriptors)
  ///         when fewer than n are free; InvalidValue when n is 0 or over depth().
  template <Scope S>
  GNIO_HD TxBatch reserve(uint32_t n) const {
    if constexpr (S == Scope::Thread) {
      return reserve_one(n);
    } else if constexpr (S == Scope::Warp) {
#if GNIO_DEVICE_PASS
      uint64_t first = 0;
      int32_t st = 0;
      if (lane_index() == 0) {
        TxBatch b = reserve_one(n);
        first = b.first();
        st = static_cast<int32_t>(b.status());
      }
      first = __shfl_sync(0xffffffffu, first, 0);
      st = __shfl_sync(0xffffffffu, st, 0);
      return TxBatch(ring_, first, st == 0 ? n : 0, static_cast<Status>(st));
#else
      return reserve_one(n);
#endif
    } else {
#if GNIO_DEVICE_PASS
      __shared__ uint64_t first;
      __shared__ int32_t st;
      __syncthreads();
      if (threadIdx.x == 0) {
        TxBatch b = reserve_one(n);
        first = b.first();
        st = static_cast<int32_t>(b.status());
      }
      __syncthreads();
      return TxBatch(ring_, first, st == 0 ? n : 0, static_cast<Status>(st));
#else
      return reserve_one(n);
#endif
    }
  }

  /// @brief Marks the batch's descriptors ready once every thread of the
  ///        scope has filled its part. Nothing is sent until push().
  ///
  /// One system-scope fence and one mark per batch, by the leader after the barrier: the
  /// barrier orders the other threads' descriptor and payload writes before
  /// the leader's fence, and a fence is cumulative (PTX memory model), so it
  /// makes them visible to the host before any mark. A fence per thread
  /// before the barrier as well would wait for host memory once more on
  /// every batch's path (a PCIe round trip each). The marks (TxRing::ready)
  /// pair with their reads before the device-scope fence in push(); the
  /// host's reads of the descriptors and payloads in TxEngine::poll()
  /// (src/engine/tx_engine.cpp) follow its acquire of TxRing::producer.
  /// @tparam S The scope the batch was reserved with.
  /// @param b The batch, from reserve<S>() of this queue, every descriptor filled.
  template <Scope S>
  GNIO_HD void commit(const TxBatch& b) const {
    if constexpr (S == Scope::Warp) {
      sync_warp();
      if (lane_index() != 0) return;
    } else if constexpr (S == Scope::Block) {
      sync_block();
      if (thread_index() != 0) return;
    }
    if (b.count() == 0) return;
    fence_system(cuda::std::memory_order_release);
    // One mark for the whole batch: push() then walks batches, not
    // descriptors (a dependent load each).
    store_after_fence(&ring_.ready[b.first() & ring_.desc_mask], b.first() + b.count());
  }

  /// @brief Rings the doorbell: publishes the producer index over every
  ///        contiguous committed descriptor.
  ///
  /// The index lives in host memory, where the GPU cannot do atomic
  /// read-modify-writes, so publishers take turns through a lock in device
  /// memory. Any thread may call it, for its own batches or others'; one
  /// call publishes what every caller committed, up to the first descriptor
  /// that is not committed yet.
  ///
  /// The fence here is at device scope: each committer's system-scope fence
  /// makes its descriptors and payloads visible to the host before its
  /// marks, so what the doorbell needs is only to follow the marks it read
  /// (the marks and this thread are on one GPU). A system-scope fence here
  /// would be a third wait for host memory on every send. The store of
  /// TxRing::producer after that fence pairs with the acquire of `producer`
  /// in TxEngine::poll() and TxEngine::pushed() (src/engine/tx_engine.cpp).
  /// @return The new producer index: descriptors pushed since start().
  GNIO_HD uint64_t push() const {
    for (uint32_t spins = 0;; ++spins) {
      uint32_t unlocked = 0;
      // Acquires the lock: pairs with its release at the end of push() by
      // the previous holder, whose store to `pushed` is seen below.
      if (compare_exchange(ring_.push_lock, unlocked, 1u)) break;
      backoff(spins);
    }
    const uint64_t cur = load_relaxed(ring_.pushed);
    uint64_t end = cur;
    // The marks pair with their stores after the system-scope fence in
    // commit(); the fence below orders these reads before the stores. A
    // mark above `end` is the batch that starts there (TxRing::ready).
    for (uint64_t m; (m = load_before_fence(&ring_.ready[end & ring_.desc_mask])) > end;) end = m;
    if (end != cur) {
      fence_device(cuda::std::memory_order_acq_rel);
      store_after_fence(ring_.pushed, end);
      // Pairs with the acquire of `producer` in TxEngine::poll() and
      // TxEngine::pushed() (src/engine/tx_engine.cpp): the descriptors and
      // payloads below `end` are visible before the engine reads them.
      store_after_fence(ring_.producer, end);
    }
    // Releases the lock: pairs with the compare-exchange above of the next holder.
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*ring_.push_lock).store(0u, cuda::std::memory_order_release);
    return end;
  }

  /// @brief Completions published by the engine (descriptors sent or failed).
  ///
  /// Pairs with the release store of `completed` in TxEngine::poll() and
  /// TxEngine::stop() (src/engine/tx_engine.cpp): the engine's reads of the
  /// completed descriptors, staging slots and payloads happen before, so
  /// the caller may reuse their memory.
  /// @return Descriptors completed since start(), in ring order: every
  ///         descriptor below it is sent or counted as dropped.
  GNIO_HD uint64_t completed() const { return load_acquire(ring_.completed); }
  /// @brief Completions with an error (descriptors completed unsent, dropped).
  ///
  /// Pairs with the release store of `errors` in TxEngine::poll() and
  /// TxEngine::stop() (src/engine/tx_engine.cpp), which store it before
  /// `completed`: read after completed(), it counts at least the errors
  /// among the completions that call saw.
  /// @return Descriptors completed with an error since start().
  GNIO_HD uint64_t completion_errors() const { return load_acquire(ring_.errors); }

  /// @brief Drains completions until descriptor `upto` (exclusive) has
  ///        completed or timeout_ns passes (then Timeout).
  ///
  /// Polls completed() (an acquire, see there) with back-off; any thread.
  /// @param upto The index to wait for, e.g. TxBatch::first() + count() or push()'s result.
  /// @param timeout_ns How long to wait, in ns of wait_clock_ns().
  /// @return Success once completed() >= upto; Timeout when it was not within timeout_ns.
  GNIO_HD Status wait_completions(uint64_t upto, uint64_t timeout_ns) const {
    uint64_t deadline = 0;
    for (uint32_t spins = 0; completed() < upto; ++spins) {
      uint64_t now = wait_clock_ns();
      if (deadline == 0) deadline = now + timeout_ns;
      if (now >= deadline) return Status::Timeout;
      backoff(spins);
    }
    return Status::Success;
  }

  /// @brief The number of descriptors in the ring (EthTxq::depth()).
  /// @return Descriptors, a power of two: the most that can be reserved and
  ///         not yet completed.
  GNIO_HD uint32_t depth() const { return ring_.desc_mask + 1; }
  /// @brief The longest frame the queue sends: TxBatch::set() refuses longer ones.
  /// @return Bytes (EthTxq::max_packet_size()).
  GNIO_HD uint32_t max_len() const { return ring_.max_len; }
  /// @brief The queue's ring, for code that reads its layout directly.
  /// @return The ring this view was made from.
  GNIO_HD const TxRing& ring() const { return ring_; }

 private:
  // The completion count last read from host memory, kept in the device
  // word after `reserve` (the engine allocates the two together), so that
  // reserve() crosses PCIe only when the ring looks full by it. It never
  // runs ahead of the engine's count: a stale value costs a read, not a slot.
  GNIO_HD uint64_t* completed_seen() const { return ring_.reserve + 1; }

  GNIO_HD TxBatch reserve_one(uint32_t n) const {
    if (n == 0 || n > ring_.desc_mask + 1) return TxBatch(ring_, 0, 0, Status::InvalidValue);
    for (;;) {
      uint64_t r = load_relaxed(ring_.reserve);
      // Pairs with the release store of completed_seen() below by an earlier
      // reserver: what that reserver acquired from the engine is seen here.
      uint64_t done = load_acquire(completed_seen());
      if (r + n - done > ring_.desc_mask + 1ull) {
        // Pairs with the release store of `completed` in TxEngine::poll() and
        // TxEngine::stop() (src/engine/tx_engine.cpp): the engine is done
        // with the descriptors and slots below `done` before they are reused.
        done = load_acquire(ring_.completed);
        // Pairs with the acquire of completed_seen() above by later reservers.
        store_release(completed_seen(), done);
        if (r + n - done > ring_.desc_mask + 1ull) return TxBatch(ring_, r, 0, Status::Again);
      }
      if (compare_exchange(ring_.reserve, r, r + n)) return TxBatch(ring_, r, n, Status::Success);
    }
  }

  TxRing ring_{};
};

}  // namespace gnio::dev
