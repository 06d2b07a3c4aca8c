// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Device RX: receive a burst of packets from a GPU-visible RX queue,
/// process them in place, release the burst so the NIC engine may reuse its
/// strides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "gnio/dev/atomic.hpp"
#include "gnio/dev/config.hpp"
#include "gnio/dev/ring.hpp"
#include "gnio/dev/status.hpp"
#include "gnio/dev/thread.hpp"

namespace gnio::dev {

/// @brief One received packet of an RxBurst: its bytes in the ring and its
/// descriptor.
///
/// A view, valid until the burst is released (Rxq::release()); the bytes
/// may be modified in place (e.g. to send them with TxBatch::set()).
class Packet {
 public:
  /// @brief A view of one packet (RxBurst::operator[] makes these).
  /// @param data The packet's first byte in the ring's data area.
  /// @param d Its descriptor.
  GNIO_HD Packet(uint8_t* data, const RxDesc* d) : data_(data), d_(d) {}
  /// @brief The packet's bytes.
  /// @return size() contiguous bytes in the ring, writable in place.
  GNIO_HD uint8_t* data() const { return data_; }
  /// @brief The packet's length.
  /// @return Bytes (RxDesc::len): cut to the queue's max packet size, with
  ///         PacketFlags::FrameTruncated in flags() when it was cut.
  GNIO_HD uint32_t size() const { return d_->len; }
  /// @brief What the engine found in the frame.
  /// @return PacketFlags bits (headers.hpp), as the queue's RxOffloads asked.
  GNIO_HD uint32_t flags() const { return d_->flags; }
  /// @brief The frame's Toeplitz hash (RxOffloads::rss_hash).
  /// @return The hash; meaningful only with that offload on.
  GNIO_HD uint32_t rss_hash() const { return d_->rss_hash; }
  /// @brief When the frame arrived.
  /// @return Capture or arrival time, CLOCK_REALTIME ns (from the backend).
  GNIO_HD uint64_t timestamp_ns() const { return d_->timestamp_ns; }

 private:
  uint8_t* data_;
  const RxDesc* d_;
};

/// @brief Packets [first, first + count) of one queue, in arrival order.
///
/// Returned by Rxq::receive(); every thread of the receiving scope holds the
/// same burst. Its packets stay valid until Rxq::release() of the burst.
class RxBurst {
 public:
  /// @brief An empty burst (count() == 0).
  RxBurst() = default;
  /// @brief The burst of descriptors [first, first + count) of `ring`
  ///        (Rxq::receive() makes these).
  /// @param ring The queue's ring.
  /// @param first The index of the burst's first descriptor.
  /// @param count The number of packets.
  /// @param status The outcome of the receive.
  GNIO_HD RxBurst(const RxRing& ring, uint64_t first, uint32_t count, Status status)
      : data_(ring.data), desc_(ring.desc), desc_mask_(ring.desc_mask), first_(first), count_(count),
        status_(status) {}

  /// @brief The number of packets in the burst.
  /// @return Packets; 0 after a timeout or an error.
  GNIO_HD uint32_t count() const { return count_; }
  /// @brief The free-running index of the burst's first descriptor.
  /// @return The index; bursts of one queue are released in its order.
  GNIO_HD uint64_t first() const { return first_; }
  /// @brief The outcome of the receive that made the burst.
  /// @return Success (also for a timeout, with count() == 0), or
  ///         InvalidValue when receive() was asked for 0 packets.
  GNIO_HD Status status() const { return status_; }
  /// @brief A packet of the burst.
  /// @param i The packet's position in the burst, < count().
  /// @return A view of the packet.
  GNIO_HD Packet operator[](uint32_t i) const {
    const RxDesc* d = &desc_[(first_ + i) & desc_mask_];
    return Packet(data_ + d->offset, d);
  }

 private:
  uint8_t* data_ = nullptr;
  const RxDesc* desc_ = nullptr;
  uint32_t desc_mask_ = 0;
  uint64_t first_ = 0;
  uint32_t count_ = 0;
  Status status_ = Status::Success;
};

/// @brief The device view of a started RX queue: receive bursts, release
/// them in order.
///
/// From gnio::GpuRxq::handle(); trivially copyable, pass it to a kernel by
/// value. Valid while the GpuRxq is alive. On the host the queue goes:
/// EthDevice::create_rxq(), the EthRxq setters (with EthRxq::set_gpu()),
/// EthRxq::start(), GpuRxq::create(), the kernel launched; then the kernel
/// stopped, GpuRxq::destroy(), EthRxq::stop(), EthRxq::destroy(). In the
/// kernel each burst goes receive(), its packets read or modified, then
/// release(), in the order the bursts were received. Host and device (the
/// emulated device runs the same code on CPU threads).
class Rxq {
 public:
  /// @brief An empty queue; not usable by a kernel.
  Rxq() = default;
  /// @brief The view of a queue's ring (gnio::GpuRxq makes these).
  /// @param ring The ring the RX engine made at EthRxq::start().
  explicit Rxq(const RxRing& ring) : ring_(ring) {}

  /// @brief Receives up to max_pkts packets, waiting at most timeout_ns for
  ///        the first one (0: just look).
  ///
  /// A timeout is Success with count() == 0. Every thread of the scope must
  /// call it and gets the same burst. One thread of the scope claims the
  /// burst; its acquire of RxRing::producer pairs with the release of
  /// `producer` in RxEngine::publish() (src/engine/rx_engine.cpp), and the
  /// scope's barrier carries it to the other threads. With the ring in
  /// device memory the scope's threads then copy the burst's descriptors
  /// and bytes from the engine's pinned staging into the ring (the copy a
  /// NIC's DMA would have made), so receiving in a wider scope copies
  /// faster.
  /// @tparam S The scope that receives together (Scope::Thread, Warp or Block).
  /// @param max_pkts The most packets to receive, at least 1.
  /// @param timeout_ns How long to wait for the first packet, in ns of
  ///        wait_clock_ns().
  /// @return The burst: Success with 1..max_pkts packets, Success with none
  ///         after the timeout, or InvalidValue (no packets) when max_pkts is 0.
  template <Scope S>
  GNIO_HD RxBurst receive(uint32_t max_pkts, uint64_t timeout_ns) const {
    if constexpr (S == Scope::Thread) {
      RxBurst b = receive_one(max_pkts, timeout_ns);
      stage_in<S>(b.first(), b.count());
      return b;
    } else if constexpr (S == Scope::Warp) {
#if GNIO_DEVICE_PASS
      uint64_t first = 0;
      uint32_t count = 0;
      int32_t st = 0;
      if (lane_index() == 0) {
        RxBurst b = receive_one(max_pkts, timeout_ns);
        first = b.first();
        count = b.count();
        st = static_cast<int32_t>(b.status());
      }
      // A shuffle does not order memory: the barrier carries the leader's
      // acquire of the producer index to the other lanes' reads.
      __syncwarp();
      first = __shfl_sync(0xffffffffu, first, 0);
      count = __shfl_sync(0xffffffffu, count, 0);
      st = __shfl_sync(0xffffffffu, st, 0);
      stage_in<S>(first, count);
      __syncwarp();  // the lanes' copies before any lane reads the burst
      return RxBurst(ring_, first, count, static_cast<Status>(st));
#else
      RxBurst b = receive_one(max_pkts, timeout_ns);
      stage_in<S>(b.first(), b.count());
      return b;
#endif
    } else {
#if GNIO_DEVICE_PASS
      __shared__ uint64_t first;
      __shared__ uint32_t count;
      __shared__ int32_t st;
      __syncthreads();
      if (threadIdx.x == 0) {
        RxBurst b = receive_one(max_pkts, timeout_ns);
        first = b.first();
        count = b.count();
        st = static_cast<int32_t>(b.status());
      }
      // The barrier carries the leader's acquire of the producer index to
      // every thread's reads of the burst.
      __syncthreads();
      const uint64_t b_first = first;
      const uint32_t b_count = count;
      const Status b_status = static_cast<Status>(st);
      stage_in<S>(b_first, b_count);
      __syncthreads();  // the threads' copies before any thread reads the burst
      return RxBurst(ring_, b_first, b_count, b_status);
#else
      RxBurst b = receive_one(max_pkts, timeout_ns);
      stage_in<S>(b.first(), b.count());
      return b;
#endif
    }
  }

  /// @brief Gives the burst's strides back to the NIC engine.
  ///
  /// Bursts are released in the order they were received (a release waits
  /// for the bursts before it); every thread of the scope must call it
  /// after its last access to the packets. The engine hears of releases
  /// through RxRing::consumer (Rxq::tell_engine(): a release store that
  /// pairs with the acquire in RxEngine::reclaim(), src/engine/rx_engine.cpp)
  /// when they cross a multiple of RxRing::release_step, or when a receiver
  /// finds the ring empty.
  /// @tparam S The scope the burst was received with.
  /// @param b The burst, from receive<S>() of this queue.
  /// @return Success (also for an empty burst), or BadState when the burst
  ///         was released already.
  template <Scope S>
  GNIO_HD Status release(const RxBurst& b) const {
    if constexpr (S == Scope::Warp) {
      sync_warp();
      if (lane_index() != 0) return Status::Success;
    } else if constexpr (S == Scope::Block) {
      sync_block();
      if (thread_index() != 0) return Status::Success;
    }
    return release_one(b);
  }

  /// @brief Descriptors published by the engine so far (for progress checks).
  ///
  /// Pairs with the release of `producer` in RxEngine::publish()
  /// (src/engine/rx_engine.cpp), as receive() does.
  /// @return The producer index: packets published since start().
  GNIO_HD uint64_t published() const { return load_acquire(ring_.producer); }

  /// @brief The queue's ring, for code that reads its layout directly.
  /// @return The ring this view was made from.
  GNIO_HD const RxRing& ring() const { return ring_; }

 private:
  GNIO_HD RxBurst receive_one(uint32_t max_pkts, uint64_t timeout_ns) const {
    if (max_pkts == 0) return RxBurst(ring_, 0, 0, Status::InvalidValue);
    uint64_t deadline = 0;
    for (uint32_t spins = 0;; ++spins) {
      uint64_t c = load_relaxed(ring_.claim);
      // Pairs with the release of `producer` in RxEngine::publish()
      // (src/engine/rx_engine.cpp): the descriptors and bytes below it have
      // landed before the receiver reads them.
      uint64_t p = load_acquire(ring_.producer);
      if (p > c) {
        uint64_t avail = p - c;
        uint32_t n = avail < max_pkts ? static_cast<uint32_t>(avail) : max_pkts;
        if (compare_exchange(ring_.claim, c, c + n)) return RxBurst(ring_, c, n, Status::Success);
        continue;
      }
      // Nothing to receive: the engine hears of every release by now.
      if ((spins & 7u) == 7u) tell_engine();
      uint64_t now = wait_clock_ns();
      if (deadline == 0) deadline = now + timeout_ns;
      if (now >= deadline) {
        tell_engine();
        return RxBurst(ring_, c, 0, Status::Success);
      }
      backoff(spins);
    }
  }

  // A ring in device memory: copies descriptors [first, first + count) and
  // their packets' bytes from the engine's staging (RxRing::stage_desc) into
  // the ring, spread over the scope's threads; the caller's barrier then
  // publishes the copies to the scope. The leader's acquire of the producer
  // index, carried by the barrier before this, orders the staging's reads
  // after the engine's writes; the burst's release, after these reads,
  // lets the engine reuse the staging. Every read crosses PCIe, so what
  // bounds the copy is how many loads each thread keeps in flight.
  template <Scope S>
  GNIO_HD void stage_in(uint64_t first, uint32_t count) const {
    if (ring_.stage_desc == nullptr || count == 0) return;
    const uint32_t rank = scope_rank<S>(), size = scope_size<S>();
    const uint32_t longest = scope_max<S>(copy_descriptors(first, count, rank, size));
    copy_packets(first, count, rank, size, longest);
  }

  // The largest of the scope's values; also a barrier of the scope, which
  // makes each thread's descriptor copies visible to the others.
  template <Scope S>
  GNIO_HD static uint32_t scope_max(uint32_t v) {
#if GNIO_DEVICE_PASS
    if constexpr (S == Scope::Warp) {
      __syncwarp();
      return __reduce_max_sync(0xffffffffu, v);
    } else if constexpr (S == Scope::Block) {
      __shared__ uint32_t longest;
      if (threadIdx.x == 0) longest = 0;
      __syncthreads();
      v = __reduce_max_sync(0xffffffffu, v);
      if ((threadIdx.x & 31u) == 0) atomicMax(&longest, v);
      __syncthreads();
      return longest;
    }
#endif
    return v;
  }

  // Descriptors [first, first + count), 16 bytes a load, kUnroll loads in
  // flight per thread. Returns the longest packet among those it copied
  // (a descriptor's first 16 bytes start with its length).
  GNIO_HD uint32_t copy_descriptors(uint64_t first, uint32_t count, uint32_t rank, uint32_t size) const {
#if GNIO_DEVICE_PASS
    static_assert(sizeof(RxDesc) == 32 && offsetof(RxDesc, len) == 0);
    constexpr uint32_t kUnroll = 8;
    const uint4* src = reinterpret_cast<const uint4*>(ring_.stage_desc);
    uint4* dst = reinterpret_cast<uint4*>(ring_.desc);
    const uint32_t halves = 2 * count;
    uint32_t longest = 0;
    for (uint32_t h = rank; h < halves; h += size * kUnroll) {
      uint4 r[kUnroll];
#pragma unroll
      for (uint32_t u = 0; u < kUnroll; ++u) {
        const uint32_t k = h + u * size;
        if (k < halves) r[u] = src[2 * ((first + k / 2) & ring_.desc_mask) + k % 2];
      }
#pragma unroll
      for (uint32_t u = 0; u < kUnroll; ++u) {
        const uint32_t k = h + u * size;
        if (k >= halves) continue;
        dst[2 * ((first + k / 2) & ring_.desc_mask) + k % 2] = r[u];
        if (k % 2 == 0 && r[u].x > longest) longest = r[u].x;
      }
    }
    return longest;
#else
    uint32_t longest = 0;
    for (uint32_t i = rank; i < count; i += size) {
      const uint64_t slot = (first + i) & ring_.desc_mask;
      ring_.desc[slot] = ring_.stage_desc[slot];
      longest = ring_.desc[slot].len > longest ? ring_.desc[slot].len : longest;
    }
    return longest;
#endif
  }

  // The packets' bytes, by groups of lanes sized to the burst's longest
  // packet (its 16-byte words, at most 32 lanes), so that a burst of small
  // packets keeps every lane loading; each group copies kUnroll packets at
  // a time, two words of each per lane in flight. Bytes one at a time
  // where the source is not 16-byte aligned (backend frame memory) and for
  // the tail.
  GNIO_HD void copy_packets(uint64_t first, uint32_t count, uint32_t rank, uint32_t size, uint32_t longest) const {
#if GNIO_DEVICE_PASS
    constexpr uint32_t kUnroll = 4, kWords = 2;
    uint32_t group = 1;
    while (group < 32 && group * 16 * kWords < longest) group *= 2;
    while (group > size) group /= 2;
    const uint32_t groups = size / group, lane = rank % group;
    if (rank >= groups * group) return;
    for (uint32_t base = rank / group; base < count; base += groups * kUnroll) {
      const uint8_t* src[kUnroll];
      uint8_t* dst[kUnroll];
      uint32_t len[kUnroll], wide[kUnroll], most = 0;
#pragma unroll
      for (uint32_t u = 0; u < kUnroll; ++u) {
        const uint32_t p = base + u * groups;
        len[u] = wide[u] = 0;
        src[u] = nullptr;
        dst[u] = nullptr;
        if (p >= count) continue;
        const uint64_t slot = (first + p) & ring_.desc_mask;
        const RxDesc& d = ring_.desc[slot];
        len[u] = d.len;
        dst[u] = ring_.data + d.offset;
        src[u] = ring_.stage_data ? ring_.stage_data + d.offset : ring_.stage_src[slot];
        const bool aligned = ((reinterpret_cast<uintptr_t>(src[u]) | reinterpret_cast<uintptr_t>(dst[u])) & 15) == 0;
        wide[u] = aligned ? len[u] / 16 : 0;
        most = wide[u] > most ? wide[u] : most;
      }
      for (uint32_t c = lane; c < most; c += group * kWords) {
        uint4 r[kUnroll][kWords];
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u)
#pragma unroll
          for (uint32_t w = 0; w < kWords; ++w)
            if (c + w * group < wide[u]) r[u][w] = reinterpret_cast<const uint4*>(src[u])[c + w * group];
#pragma unroll
        for (uint32_t u = 0; u < kUnroll; ++u)
#pragma unroll
          for (uint32_t w = 0; w < kWords; ++w)
            if (c + w * group < wide[u]) reinterpret_cast<uint4*>(dst[u])[c + w * group] = r[u][w];
      }
#pragma unroll
      for (uint32_t u = 0; u < kUnroll; ++u)
        for (uint32_t i = wide[u] * 16 + lane; i < len[u]; i += group) dst[u][i] = src[u][i];
    }
#else
    (void)longest;
    for (uint32_t p = rank; p < count; p += size) {
      const uint64_t slot = (first + p) & ring_.desc_mask;
      const RxDesc& d = ring_.desc[slot];
      const uint8_t* src = ring_.stage_data ? ring_.stage_data + d.offset : ring_.stage_src[slot];
      std::memcpy(ring_.data + d.offset, src, d.len);
    }
#endif
  }

  // Releases are in order: a receiver waits for `released` (device memory:
  // a PCIe read per poll would be slow) to reach its burst and moves it on,
  // at device scope. The engine hears through `consumer` in host memory,
  // and storing it is a system-scope release, whose fence waits for the
  // block's writes to host memory to land: one in every burst's release
  // chain held a queue near 25 Mpps. So the chain tells the engine only
  // when it crosses a multiple of release_step (as a NIC's descriptors are
  // refilled in batches), and a receiver with nothing to receive tells it
  // the rest: the engine waits for room only while the kernel has a
  // backlog, whose releases cross the next multiple, or has none, and then
  // a receiver polls.
  GNIO_HD Status release_one(const RxBurst& b) const {
    if (b.count() == 0) return Status::Success;
    for (uint32_t spins = 0;; ++spins) {
      // Pairs with the release of `released` below by the receiver of the
      // burst before: its reads of its packets happen before this release,
      // and so before the engine hears of it.
      uint64_t c = load_acquire_device(ring_.released);
      if (c == b.first()) break;
      if (c > b.first()) return Status::BadState;  // released twice
      backoff(spins);
    }
    const uint64_t end = b.first() + b.count();
    // Pairs with the acquires of `released` above (the next burst's
    // receiver) and in tell_engine().
    store_release_device(ring_.released, end);
    const uint64_t step = ring_.release_step > 1 ? ring_.release_step : 1;
    if (b.first() / step != end / step) tell_engine();
    return Status::Success;
  }

  // Stores `released` to `consumer` if the engine has not heard of it yet.
  // One receiver at a time (`tell_lock`; the others do not wait: the holder
  // or the next teller stores a value at least as new), so the engine never
  // sees the index go back.
  GNIO_HD void tell_engine() const {
    if (load_acquire_device(ring_.released) == load_relaxed(ring_.consumer_shadow)) return;
    uint64_t unlocked = 0;
    // Pairs with the release of `tell_lock` below by its previous holder: its
    // store to `consumer_shadow` is seen here.
    if (!compare_exchange(ring_.tell_lock, unlocked, uint64_t{1})) return;
    // Pairs with the release of `released` in release_one(): every release
    // up to `r` happens before the store to `consumer`.
    const uint64_t r = load_acquire_device(ring_.released);
    if (r != load_relaxed(ring_.consumer_shadow)) {
      // Pairs with the acquire of `consumer` in RxEngine::reclaim()
      // (src/engine/rx_engine.cpp): the packets' reads happen before the
      // engine reuses their strides or hands their frames back.
      store_release(ring_.consumer, r);
      store_relaxed(ring_.consumer_shadow, r);
    }
    store_release_device(ring_.tell_lock, uint64_t{0});  // pairs with the acquire of `tell_lock` above
  }

  RxRing ring_{};
};

}  // namespace gnio::dev
