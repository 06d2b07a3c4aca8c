// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Batch receive: received packets gathered into batches in GPU
/// memory by gnio's own persistent kernel (dev::BatchKernel), handed to the
/// host one batch at a time, each buffer reused only after the host gave it
/// back. What the Python module `gnio` hands out as tensors.
///
/// Accounting: every frame a queue's backend offered ends, once the
/// receiver is closed, in exactly one delivered batch or under one
/// BatchDropReason: offered == delivered + sum(dropped). While it runs the
/// rest is in flight (in a ring, in a partly filled batch, or in a batch
/// handed over but not yet taken by next()).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/status.hpp"

namespace gnio {

namespace detail {
struct BatchReceiverImpl;
}  // namespace detail

/// @brief What the kernel does when every batch buffer of its block is held.
enum class WhenFull : uint8_t {
  Auto,  ///< Drop for a wire (EthCaps::drops_when_full), Wait for a pull source (a capture file, a generator).
  Wait,  ///< Leave the packets in the ring: a pull source is held back, a wire drops at the ring (ring_full).
  Drop,  ///< Receive them and count them as pool_full.
};

/// @brief Why a frame offered was not delivered in a batch.
enum class BatchDropReason : uint8_t {
  RingFull,   ///< Dropped at the queue's ring (DropReason::RingFull).
  Empty,      ///< A zero-length record (DropReason::Empty).
  Oversize,   ///< Larger than the ring holds (DropReason::Oversize).
  Malformed,  ///< Not convertible to Ethernet (DropReason::Malformed).
  PoolFull,   ///< Received while every batch buffer of the kernel's block was held (WhenFull::Drop).
  Closed,     ///< Still in a ring or in a batch nobody took when the receiver was closed.
  FlatOversize,  ///< Longer than a whole flat batch buffer (BatchConfig::flat_bytes, BatchLayout::Flat).
  Count,      ///< The number of reasons; not a reason.
};

/// @brief The number of batch drop reasons.
inline constexpr size_t kBatchDropReasons = static_cast<size_t>(BatchDropReason::Count);

/// @brief Stable lower-case name of a batch drop reason.
/// @param r The reason (not Count).
/// @return "ring_full", "empty", "oversize", "malformed", "pool_full", "closed" or "flat_oversize".
std::string_view batch_drop_reason_name(BatchDropReason r);

/// @brief How a batch buffer holds its packets' bytes.
enum class BatchLayout : uint8_t {
  /// Packet j's first `snap` bytes at data + j * snap, zero-padded: a uint8 [n, snap] matrix.
  Padded,
  /// Whole frames one after the other in a byte buffer of `flat_bytes`: packet j is
  /// data[offsets[j], offsets[j + 1]), offsets uint32 [n + 1] from 0 (as Arrow's and cuDF's string columns).
  Flat,
};

/// @brief Stable lower-case name of a layout.
/// @param l The layout.
/// @return "padded" or "flat".
std::string_view batch_layout_name(BatchLayout l);

/// @brief How BatchReceiver::open() sets up the device, its queues and the pool.
struct BatchConfig {
  std::string spec;            ///< The RX spec (pcap:FILE, synthetic:..., afxdp:IF, ...).
  std::string gpu = "auto";    ///< "auto", a PCIe bus id, or "cpu"/"cpu:N" for the emulated device.
  uint32_t queues = 1;         ///< RX queues 0..queues-1, one kernel block each; 0: all the device offers.
  uint32_t batch = 4096;       ///< Packets per batch, 1..1048576.
  BatchLayout layout = BatchLayout::Padded;  ///< How a buffer holds the packets' bytes.
  uint32_t snap = 256;         ///< Bytes kept per packet (zero-padded), 1..65535; BatchLayout::Padded only.
  /// Bytes of each buffer's flat data (BatchLayout::Flat only), 1..4294967295; 0: batch * 1536, at
  /// least the device's largest frame. A batch is handed over when it holds `batch` packets or the next
  /// packet does not fit; that packet starts the next batch. A frame longer than flat_bytes is counted
  /// as BatchDropReason::FlatOversize.
  uint64_t flat_bytes = 0;
  uint32_t buffers = 0;        ///< Batch buffers in the pool, at least one per queue; 0: four per queue.
  std::chrono::microseconds timeout{1000};  ///< A partly filled batch is handed over once its first packet waited this long.
  WhenFull when_full = WhenFull::Auto;     ///< What the kernel does when its buffers are all held.
  uint32_t burst = 256;        ///< Most packets the kernel takes per receive.
  bool rss_hash = true;        ///< Compute the Toeplitz hash of each frame (RxOffloads::rss_hash).
  bool ring_in_host = false;   ///< The queues' rings in pinned host memory instead of device memory.
};

/// @brief One batch handed over by next(): buffer `buffer` holds `count` packets.
struct BatchRef {
  uint32_t buffer = 0;  ///< The pool buffer; give it back with BatchReceiver::release().
  uint32_t count = 0;   ///< Packets in it.
  uint16_t queue = 0;   ///< The RX queue they came from.
  uint32_t flags = 0;   ///< dev::BatchFlags: full, out of flat bytes, timed out, flushed at stop.
  uint64_t seq = 0;     ///< The batch's number among its kernel block's batches, from 0.
  uint64_t bytes = 0;   ///< Sum of the packets' lengths; with BatchLayout::Flat the bytes used of the flat data.
};

/// @brief The device addresses of one buffer's arrays (on the emulated
/// device, host addresses): packet j's bytes at data + j * snap
/// (BatchLayout::Padded) or at data + offsets[j] (BatchLayout::Flat).
struct BatchArrays {
  void* data = nullptr;        ///< uint8_t [capacity][snap] (padded) or uint8_t [flat_bytes] (flat).
  void* lengths = nullptr;     ///< uint32_t [capacity].
  void* timestamps = nullptr;  ///< uint64_t [capacity], CLOCK_REALTIME ns.
  void* rss_hash = nullptr;    ///< uint32_t [capacity].
  void* queue = nullptr;       ///< uint16_t [capacity].
  void* offsets = nullptr;     ///< uint32_t [capacity + 1] (flat; offsets[0] == 0); null with the padded layout.
};

/// @brief Per-queue (or total) counts of a BatchReceiver.
struct BatchQueueStats {
  uint16_t queue = 0;          ///< The queue id (0 in the totals).
  uint64_t offered = 0;        ///< Frames the backend offered (RxqStats::offered).
  uint64_t delivered = 0;      ///< Packets in batches next() returned.
  uint64_t delivered_bytes = 0;  ///< Their lengths summed.
  uint64_t batches = 0;        ///< Batches next() returned.
  std::array<uint64_t, kBatchDropReasons> dropped{};  ///< Frames not delivered, by BatchDropReason.
  uint64_t in_flight = 0;      ///< offered - delivered - sum(dropped): 0 once closed.
};

/// @brief What a BatchReceiver counted so far.
struct BatchStats {
  BatchQueueStats total;                ///< Over every queue.
  std::vector<BatchQueueStats> queues;  ///< One per queue, by queue id.
  uint32_t buffers = 0;                 ///< Buffers in the pool.
  uint32_t held = 0;                    ///< Buffers returned by next() and not released yet.
};

/// @brief What next() found.
struct BatchNext {
  /// @brief The outcomes of next().
  enum class What : uint8_t {
    Batch,    ///< `batch` is a batch, now held by the caller.
    Timeout,  ///< No batch within the timeout; more may come.
    End,      ///< The source has ended and every packet was handed over: no batch will come.
  };
  What what = What::Timeout;  ///< The outcome.
  BatchRef batch;  ///< The batch when what == Batch.
};

/// @brief A receiver of batches: an Ethernet device and its RX queues on
/// one GPU, the batch pool in its memory, the semaphore and the running
/// dev::BatchKernel.
///
/// Lifecycle: open() → next() / release() while it runs → close(). Copies
/// share one receiver; its memory is freed when the last copy is gone, so a
/// holder of a buffer may outlive close(). Thread-safe.
class BatchReceiver {
 public:
  /// @brief Opens the device and the GPU, starts the queues and launches the kernel.
  /// @param cfg The configuration (copied).
  /// @return The receiver, or: InvalidValue naming the option out of range;
  ///         any error of EthDevice::open(), Gpu::open(), the queues' setters
  ///         and start(), Gpu::alloc() or PersistentKernel::launch().
  static Result<BatchReceiver> open(const BatchConfig& cfg);
  /// @brief No receiver: every call returns BadState.
  BatchReceiver() = default;

  /// @brief Waits for the next batch, in order per kernel block (so per queue).
  /// @param timeout How long to wait.
  /// @return The outcome; BadState when closed or empty.
  Result<BatchNext> next(std::chrono::milliseconds timeout);
  /// @brief Gives a buffer returned by next() back to the kernel.
  /// @param buffer BatchRef::buffer.
  /// @return Ok (also after close(), where the memory simply stays until the
  ///         last copy of the receiver is gone); BadState for a buffer not held.
  Status release(uint32_t buffer);
  /// @brief The addresses of a buffer's arrays.
  /// @param buffer A buffer, < stats().buffers.
  /// @return The addresses; all null for a buffer out of range or an empty receiver.
  BatchArrays arrays(uint32_t buffer) const;
  /// @brief The counts now.
  /// @return Totals and one entry per queue.
  BatchStats stats() const;
  /// @brief Stops the source, lets the kernel receive what the rings hold
  ///        (giving back batches nobody took), stops the kernel and the queues.
  ///
  /// Packets left in a ring or in a batch nobody took count as dropped
  /// (closed). Buffers still held stay valid until released. A second call
  /// returns Ok.
  /// @param drain How long to wait for the kernel to empty the rings.
  /// @return Ok, or the first error of stopping the kernel or the queues.
  Status close(std::chrono::milliseconds drain = std::chrono::milliseconds(2000));
  /// @brief Whether close() ran.
  /// @return True after close().
  bool closed() const;

  /// @brief The configuration, with queues, buffers and when_full resolved.
  /// @return The configuration open() settled.
  const BatchConfig& config() const;
  /// @brief Whether the receiver runs on the emulated device (host memory).
  /// @return True on the emulated device.
  bool emulated() const;
  /// @brief The CUDA device ordinal of the GPU.
  /// @return The ordinal; -1 on the emulated device.
  int cuda_ordinal() const;
  /// @brief The GPU's name as Gpu::bus_id() gives it.
  /// @return "cpu", "cpu:N" or a PCIe bus id.
  const std::string& gpu_name() const;

 private:
  explicit BatchReceiver(std::shared_ptr<detail::BatchReceiverImpl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::BatchReceiverImpl> impl_;
};

}  // namespace gnio
