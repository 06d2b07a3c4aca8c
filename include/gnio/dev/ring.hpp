// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Memory layout shared by the NIC engine and the device API: the RX
/// and TX rings, their descriptors and indices.
///
/// Indices are free-running 64-bit counters; a slot is index & mask. The
/// engines fill these structs (src/engine/rx_engine.cpp, tx_engine.cpp);
/// dev::Rxq and dev::Txq are the device's view of them.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

/// @brief One received packet: `len` contiguous bytes at byte `offset` of the
/// ring's data area.
///
/// In a strided ring they occupy `nstrides` consecutive strides starting at
/// offset >> stride_shift; where a backend owns the packet memory (AF_XDP
/// UMEM, DPDK mbufs, a prebuilt pool) that memory is the data area and
/// `offset` is wherever the NIC put the frame. Written by the engine before
/// it releases RxRing::producer; read by the kernel through Packet.
struct RxDesc {
  uint32_t len;           ///< Bytes of the packet (cut to the queue's max packet size).
  uint32_t flags;         ///< PacketFlags (headers.hpp)
  uint32_t rss_hash;      ///< Toeplitz hash of the frame, when RxOffloads::rss_hash is on.
  uint32_t nstrides;      ///< Strides (or backend buffers) the packet holds until released.
  uint64_t offset;        ///< Bytes from RxRing::data.
  uint64_t timestamp_ns;  ///< Capture or arrival time, CLOCK_REALTIME ns (from the backend).
};
static_assert(sizeof(RxDesc) == 32);

/// @brief An RX queue's ring as the device sees it: packet bytes, their
/// descriptors, and the indices the engine and the receivers exchange.
///
/// Made by the RX engine at EthRxq::start() (RxEngine, src/engine/rx_engine.cpp)
/// and handed to kernels inside dev::Rxq (GpuRxq::handle()). "Ring memory"
/// is device memory or pinned host memory, as EthRxq::set_ring_mem() chose.
struct RxRing {
  uint8_t* data = nullptr;       ///< nstrides * stride bytes, in ring memory
  RxDesc* desc = nullptr;        ///< ndesc entries, in ring memory
  /// Descriptors published by the engine (pinned host): released by
  /// RxEngine::publish() (src/engine/rx_engine.cpp) after the bytes and
  /// descriptors (or their staged copies), acquired by Rxq::receive() and
  /// Rxq::published() (rxq.hpp).
  uint64_t* producer = nullptr;
  /// A ring in device memory is filled by its receivers: the engine writes
  /// each packet's descriptor to `stage_desc` and its bytes to `stage_data`
  /// at the descriptor's offset, or leaves them in backend frame memory at
  /// `stage_src[i]`, and the scope that receives a burst copies it into
  /// `data` and `desc` before handing it out (Rxq::stage_in()). Copying
  /// from the GPU's side needs no CUDA call per publication: stream copies
  /// and stream memory operations, enqueued beside a running persistent
  /// kernel, completed slower the more queues published
  /// (bench/publish_bench). All three are pinned host memory mapped into
  /// the GPU; null for a ring in host memory, which is read where it is.
  const RxDesc* stage_desc = nullptr;
  /// Bytes staged by the engine at each descriptor's offset (null when the
  /// packets stay in backend frame memory: stage_src).
  const uint8_t* stage_data = nullptr;
  /// Device-visible address of descriptor i's bytes in backend frame
  /// memory, at stage_src[i & desc_mask] (null when stage_data is used).
  const uint8_t* const* stage_src = nullptr;
  /// Descriptors released by the kernel (pinned host): released by
  /// Rxq::tell_engine(), acquired by RxEngine::reclaim().
  uint64_t* consumer = nullptr;
  /// Next descriptor handed to a receiver (device); receivers claim bursts
  /// with a compare-exchange on it.
  uint64_t* claim = nullptr;
  /// Device: descriptors released; receivers wait on it to release in order
  /// (release and acquire between receivers, in Rxq::release_one() and
  /// Rxq::tell_engine()).
  uint64_t* released = nullptr;
  /// Device: the value last stored to `consumer`, so that Rxq::tell_engine()
  /// skips the system-scope store when the engine has heard of every release.
  /// Written only by the holder of `tell_lock`.
  uint64_t* consumer_shadow = nullptr;
  /// Device: 1 while a receiver stores `consumer` in Rxq::tell_engine(), else
  /// 0; one teller at a time keeps the index the engine sees from going back.
  uint64_t* tell_lock = nullptr;
  uint32_t desc_mask = 0;     ///< Descriptors - 1 (a power of two): descriptor i is desc[i & desc_mask].
  uint32_t stride_shift = 0;  ///< log2 of the stride size: byte offset >> stride_shift is a stride index.
  /// Releases store `consumer` (a system-scope release) when they cross a
  /// multiple of this many descriptors; a receiver that finds the ring empty
  /// stores it too. The engine sizes it to an eighth of what the ring holds.
  uint32_t release_step = 1;
};

/// @brief Bits of TxDesc::flags.
enum TxFlags : uint32_t {
  TxStaged = 1u << 0,      ///< payload is in the TX staging slot of this descriptor
  TxWaitOnTime = 1u << 1,  ///< hold until send_time_ns
  /// The device refused to fill it (TxBatch::set/stage/set_staged returned
  /// InvalidValue; len is what was asked): the engine completes it unsent,
  /// as dropped, so that descriptors still complete in ring order.
  TxRefused = 1u << 2,
  /// A staged copy of a received frame, recorded rather than sent (a
  /// capture, TxBatch::stage_capture()): the fields say what the receiver
  /// knew of it (TxDesc). Always with TxStaged, never with TxWaitOnTime.
  TxCapture = 1u << 3,
};

/// @brief One descriptor to send: written by TxBatch on the device, read by
/// the TX engine (TxEngine::poll(), src/engine/tx_engine.cpp) once pushed.
///
/// A capture descriptor (TxCapture) carries what the receiver knew of the
/// frame in the same 32 bytes, so that a capture costs the TX path nothing
/// more per packet than a staged send: `addr` (unused by staged frames)
/// holds the RX queue the frame came from, `send_time_ns` its RX
/// timestamp, `reserved` its pcapng epb_flags (low 32 bits) and the
/// frame's length before the staging slot cut it (high 32 bits).
struct TxDesc {
  uint64_t addr;          ///< device-visible address of the payload (0 when staged or refused; capture: the RX queue)
  uint32_t len;           ///< Bytes to send.
  uint32_t flags;         ///< TxFlags
  uint64_t send_time_ns;  ///< CLOCK_REALTIME ns; 0 = now (capture: the frame's RX timestamp)
  uint64_t reserved;      ///< Capture: epb_flags | original length << 32; unread otherwise.
};
static_assert(sizeof(TxDesc) == 32);

/// @brief A TX queue's ring as the device sees it: descriptors, staging
/// slots, and the indices the device and the engine exchange.
///
/// Made by the TX engine at EthTxq::start() (TxEngine::allocate(),
/// src/engine/tx_engine.cpp) and handed to kernels inside dev::Txq
/// (GpuTxq::handle()). The device reserves, fills, commits and pushes
/// descriptors (dev::Txq); the engine sends them and counts completions.
struct TxRing {
  /// Pinned host: the engine polls it without CUDA calls. Written by
  /// TxBatch, made visible to the host by the system-scope fence of
  /// Txq::commit().
  TxDesc* desc = nullptr;
  uint8_t* staging = nullptr;     ///< pinned host: slot i at i * slot_size
  /// Pinned host: descriptors pushed (the doorbell). Stored by Txq::push()
  /// after a device-scope fence (a release store where fences are left
  /// out); acquired by TxEngine::poll() and TxEngine::pushed()
  /// (src/engine/tx_engine.cpp).
  uint64_t* producer = nullptr;
  /// Pinned host: descriptors completed by the engine. Released by
  /// TxEngine::poll() and TxEngine::stop() (src/engine/tx_engine.cpp) after
  /// the engine's last read of those descriptors and payloads; acquired by
  /// Txq::completed() and Txq::reserve_one().
  uint64_t* completed = nullptr;
  /// Pinned host: completions with an error. Released by TxEngine::poll()
  /// and TxEngine::stop() just before `completed`; acquired by
  /// Txq::completion_errors().
  uint64_t* errors = nullptr;
  /// Device: next descriptor to hand out; the word after it holds the
  /// completion count the device last read (Txq::completed_seen()).
  uint64_t* reserve = nullptr;
  uint64_t* pushed = nullptr;     ///< device: the producer index last published
  uint32_t* push_lock = nullptr;  ///< device: serialises publications of the producer index
  /// Device: one mark per committed batch, ready[first & mask] == first +
  /// count for the batch [first, first + count) (a mark not above the
  /// index it is read for is a batch of an earlier lap). Stored by
  /// Txq::commit() after its system-scope release fence; read by
  /// Txq::push() before its device-scope fence.
  uint64_t* ready = nullptr;
  uint32_t desc_mask = 0;  ///< Descriptors - 1 (a power of two): descriptor i is desc[i & desc_mask].
  uint32_t slot_size = 0;  ///< bytes of a staging slot (a multiple of 64)
  uint32_t max_len = 0;    ///< the queue's max packet size: longer frames are refused
};

}  // namespace gnio::dev
