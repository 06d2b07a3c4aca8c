// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Device capture: a kernel records the frames it chooses (those a
/// tcpdump filter matched) to a TX queue whose backend writes them to a
/// file (pcapng-out:), without ever waiting for the writer.
///
/// The design, and why:
/// - A capture is a TX queue like any other (its ring, its engine, its
///   backend), so the descriptors travel batched as sends do: one
///   reserve, one commit (one system-scope fence) and one doorbell per
///   round of a scope's packets, and the engine hands them to the backend
///   64 at a time.
/// - Each frame is copied into its descriptor's staging slot
///   (TxBatch::stage_capture()), cut to the slot when longer, so that the
///   RX frame is released at once: there is no per-packet wait for the
///   engine, as a zero-copy send would need, and no host copy by the engine
///   (the backend reads the staging slot in place).
/// - What the receiver knew (RX queue, RX timestamp, epb_flags, the
///   length before the cut) rides in the descriptor's own fields (TxDesc),
///   so the capture adds no memory traffic beyond the descriptor and bytes.
/// - reserve() never waits here: when the ring has no room (the writer is
///   behind) the round's frames are not recorded and come back as
///   CaptureOutcome::RingFull, for the caller to count. What the engine
///   then fails to write is in the queue's TxqStats::dropped, so that
///   offered == written + ring_full + Σ engine drops, exactly.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/status.hpp"
#include "gnio/dev/thread.hpp"
#include "gnio/dev/txq.hpp"

namespace gnio::dev {

/// @brief Bits of pcapng's epb_flags (draft-ietf-opsawg-pcapng) a capture sets.
namespace epb {
inline constexpr uint32_t kInbound = 1u;                ///< Bits 0-1, the direction: 1 inbound.
inline constexpr uint32_t kChecksumNotReady = 1u << 9;  ///< The L4 checksum is left for offload (partial).
inline constexpr uint32_t kChecksumValid = 1u << 10;    ///< Every checksum checked is right.
inline constexpr uint32_t kPacketTooLong = 1u << 25;    ///< Longer than the queue takes: cut by the NIC engine.
}  // namespace epb

/// @brief What became of one frame offered to Capture::offer().
enum class CaptureOutcome : uint32_t {
  None = 0,      ///< Not offered (the calling thread had no frame to record).
  Recorded = 1,  ///< Handed to the TX queue whole.
  Cut = 2,       ///< Handed to the TX queue cut to its staging slot.
  RingFull = 3,  ///< Not recorded: the TX ring had no free descriptor (the writer is behind).
};

/// @brief How many threads of scope S pass `want`, and this thread's rank
/// among them (its slot in a batch of that many). Every thread of the scope
/// must call it.
/// @tparam S The scope (Scope::Thread, Warp or Block).
/// @param want Whether this thread takes a slot.
/// @param rank Set to the number of threads of lower rank that want one.
/// @return The threads of the scope that want one.
template <Scope S>
GNIO_HD uint32_t scope_count(bool want, uint32_t& rank) {
#if GNIO_DEVICE_PASS
  if constexpr (S == Scope::Thread) {
    rank = 0;
    return want ? 1u : 0u;
  } else {
    const uint32_t ballot = __ballot_sync(0xffffffffu, want);
    const uint32_t lane = lane_index();
    const uint32_t in_warp = static_cast<uint32_t>(__popc(ballot & ((1u << lane) - 1u)));
    if constexpr (S == Scope::Warp) {
      rank = in_warp;
      return static_cast<uint32_t>(__popc(ballot));
    } else {
      __shared__ uint32_t warp_counts[32];
      const uint32_t warp = thread_index() / 32u;
      const uint32_t warps = (block_dim() + 31u) / 32u;
      __syncthreads();  // an earlier call's readers are done with warp_counts
      if (lane == 0) warp_counts[warp] = static_cast<uint32_t>(__popc(ballot));
      __syncthreads();
      uint32_t before = 0, total = 0;
      for (uint32_t w = 0; w < warps; ++w) {
        if (w < warp) before += warp_counts[w];
        total += warp_counts[w];
      }
      rank = before + in_warp;
      return total;
    }
  }
#else
  // The emulated device runs a scope of one thread.
  rank = 0;
  return want ? 1u : 0u;
#endif
}

/// @brief The device view of a capture: a started TX queue that records
/// frames (its backend writes them, e.g. pcapng-out:). Trivially copyable.
class Capture {
 public:
  /// @brief No queue: offer() records nothing (enabled() is false).
  Capture() = default;
  /// @brief A capture to the queue `txq` (GpuTxq::handle() of its TX queue).
  /// @param txq The TX queue the frames go to.
  GNIO_HD explicit Capture(const Txq& txq) : txq_(txq), enabled_(true) {}

  /// @brief Whether there is a queue to record to.
  /// @return False for a default-constructed Capture.
  GNIO_HD bool enabled() const { return enabled_; }

  /// @brief Records this thread's frame, if `want`, with the other threads
  /// of scope S that want theirs: one batch of descriptors for the scope,
  /// each frame copied into its staging slot, committed and pushed. Never
  /// waits for the writer (see the file's comment). Every thread of the
  /// scope must call it.
  /// @tparam S The scope that records together.
  /// @param want Whether this thread records a frame.
  /// @param data The frame's bytes (read only when want).
  /// @param len The frame's length.
  /// @param rx_queue The RX queue it came from (its pcapng interface).
  /// @param rx_timestamp_ns Its RX timestamp.
  /// @param epb_flags Its epb_flags (dev::epb bits).
  /// @return What became of this thread's frame (None when !want).
  template <Scope S>
  GNIO_HD CaptureOutcome offer(bool want, const uint8_t* data, uint32_t len, uint16_t rx_queue,
                               uint64_t rx_timestamp_ns, uint32_t epb_flags) const {
    uint32_t rank = 0;
    const uint32_t n = scope_count<S>(want && len != 0, rank);
    if (n == 0) return CaptureOutcome::None;
    const TxBatch b = txq_.reserve<S>(n);
    if (b.status() != Status::Success) return want && len != 0 ? CaptureOutcome::RingFull : CaptureOutcome::None;
    CaptureOutcome out = CaptureOutcome::None;
    if (want && len != 0) {
      b.stage_capture(rank, data, len, rx_queue, rx_timestamp_ns, epb_flags);
      out = len > b.slot_size() ? CaptureOutcome::Cut : CaptureOutcome::Recorded;
    }
    txq_.commit<S>(b);
    if (scope_rank<S>() == 0) txq_.push();
    return out;
  }

  /// @brief The TX queue it records to.
  /// @return Its device view.
  GNIO_HD const Txq& txq() const { return txq_; }

 private:
  Txq txq_{};
  bool enabled_ = false;
};

}  // namespace gnio::dev
