// Device TX: reserve descriptors, fill them (a pointer into registered
// memory, e.g. an RX packet modified in place, or bytes written into the
// descriptor's staging slot), commit them, and push them to the NIC engine.
// A fill the queue cannot send (too long, empty) returns InvalidValue at
// once; its descriptor completes in order, counted as dropped.
#pragma once

#include <cstdint>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/ring.hpp"
#include "gnio/dev/status.hpp"
#include "gnio/dev/thread.hpp"

namespace gnio::dev {

// Descriptors [first, first + count) reserved by one caller.
class TxBatch {
 public:
  TxBatch() = default;
  GNIO_HD TxBatch(const TxRing& ring, uint64_t first, uint32_t count, Status status)
      : ring_(ring), first_(first), count_(count), status_(status) {}

  GNIO_HD uint32_t count() const { return count_; }
  GNIO_HD uint64_t first() const { return first_; }
  GNIO_HD Status status() const { return status_; }

  /// @brief Sends `len` bytes at `data` (device-visible, in memory registered
  /// with the queue's GPU, e.g. an RX packet modified in place), zero-copy:
  /// any length up to max_len(), not bounded by the staging slot.
  /// @param i descriptor of the batch, < count()
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

  // Staging slot of descriptor i (slot_size() bytes, pinned host memory).
  GNIO_HD uint8_t* staging(uint32_t i) const {
    return ring_.staging + ((first_ + i) & ring_.desc_mask) * static_cast<uint64_t>(ring_.slot_size);
  }
  GNIO_HD uint32_t slot_size() const { return ring_.slot_size; }
  /// @brief The longest frame the queue sends (EthTxq::max_packet_size()).
  GNIO_HD uint32_t max_len() const { return ring_.max_len; }

  /// @brief Copies `len` bytes at `src` (e.g. a packet in device memory) into
  /// staging(i) and sends them from there. The engine then reads mapped
  /// memory and copies nothing: for small packets the GPU's posted writes
  /// cost less than the engine's DMA and its wait. Frames longer than a slot
  /// go with set() instead.
  /// @return Success; InvalidValue, copying nothing, when len is 0 or over
  /// slot_size() or max_len(): refused as in set()
  GNIO_HD Status stage(uint32_t i, const void* src, uint32_t len, uint64_t send_time_ns = 0) const {
    if (!fits_slot(len)) return refuse(i, len);
    struct alignas(16) Chunk {
      uint64_t lo, hi;
    };
    uint8_t* dst = staging(i);
    const auto* from = static_cast<const uint8_t*>(src);
    uint32_t j = 0;
    if ((reinterpret_cast<uint64_t>(from) & 15u) == 0)  // slots are 64-byte aligned
      for (; j + 16 <= len; j += 16) *reinterpret_cast<Chunk*>(dst + j) = *reinterpret_cast<const Chunk*>(from + j);
    for (; j < len; ++j) dst[j] = from[j];
    return set_staged(i, len, send_time_ns);
  }

  /// @brief Sends the first `len` bytes written into staging(i).
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

 private:
  GNIO_HD TxDesc* desc(uint32_t i) const { return &ring_.desc[(first_ + i) & ring_.desc_mask]; }
  GNIO_HD bool fits_slot(uint32_t len) const { return len != 0 && len <= ring_.slot_size && len <= ring_.max_len; }
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

class Txq {
 public:
  Txq() = default;
  explicit Txq(const TxRing& ring) : ring_(ring) {}

  // Reserves n descriptors. Again when the ring has fewer than n free: the
  // caller drains completions (wait_completions) and retries.
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

  // Marks the batch's descriptors ready once every thread of the scope has
  // filled its part. Nothing is sent until push().
  //
  // One system-scope fence per batch, by the leader after the barrier: the
  // barrier orders the other threads' descriptor and payload writes before
  // the leader's fence, and a fence is cumulative (PTX memory model), so it
  // makes them visible to the host before any mark. A fence per thread
  // before the barrier as well, as this did before, waited for host memory
  // once more on every batch's path (a PCIe round trip each).
  template <Scope S>
  GNIO_HD void commit(const TxBatch& b) const {
    if constexpr (S == Scope::Warp) {
      sync_warp();
      if (lane_index() != 0) return;
    } else if constexpr (S == Scope::Block) {
      sync_block();
      if (thread_index() != 0) return;
    }
    fence_system(cuda::std::memory_order_release);
    for (uint32_t i = 0; i < b.count(); ++i) {
      uint64_t idx = b.first() + i;
      store_after_fence(&ring_.ready[idx & ring_.desc_mask], idx + 1);
    }
  }

  // Rings the doorbell: publishes the producer index over every contiguous
  // committed descriptor. Returns the new producer index. The index lives in
  // host memory, where the GPU cannot do atomic read-modify-writes, so
  // publishers take turns through a lock in device memory.
  //
  // The fence here is at device scope: each committer's system-scope fence
  // made its descriptors and payloads visible to the host before its marks,
  // so what the doorbell needs is only to follow the marks it read (the
  // marks and this thread are on one GPU). A system-scope fence here was a
  // third wait for host memory on every send.
  GNIO_HD uint64_t push() const {
    for (uint32_t spins = 0;; ++spins) {
      uint32_t unlocked = 0;
      if (compare_exchange(ring_.push_lock, unlocked, 1u)) break;
      backoff(spins);
    }
    const uint64_t cur = load_relaxed(ring_.pushed);
    uint64_t end = cur;
    while (load_before_fence(&ring_.ready[end & ring_.desc_mask]) == end + 1) ++end;
    if (end != cur) {
      fence_device(cuda::std::memory_order_acq_rel);
      store_after_fence(ring_.pushed, end);
      store_after_fence(ring_.producer, end);
    }
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*ring_.push_lock).store(0u, cuda::std::memory_order_release);
    return end;
  }

  // Completions published by the engine (descriptors sent or failed).
  GNIO_HD uint64_t completed() const { return load_acquire(ring_.completed); }
  GNIO_HD uint64_t completion_errors() const { return load_acquire(ring_.errors); }

  // Drains completions until descriptor `upto` (exclusive) has completed or
  // timeout_ns passes (then Timeout).
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

  GNIO_HD uint32_t depth() const { return ring_.desc_mask + 1; }
  /// @brief The longest frame the queue sends: TxBatch::set() refuses longer ones.
  GNIO_HD uint32_t max_len() const { return ring_.max_len; }
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
      uint64_t done = load_acquire(completed_seen());
      if (r + n - done > ring_.desc_mask + 1ull) {
        done = load_acquire(ring_.completed);
        store_release(completed_seen(), done);
        if (r + n - done > ring_.desc_mask + 1ull) return TxBatch(ring_, r, 0, Status::Again);
      }
      if (compare_exchange(ring_.reserve, r, r + n)) return TxBatch(ring_, r, n, Status::Success);
    }
  }

  TxRing ring_{};
};

}  // namespace gnio::dev
