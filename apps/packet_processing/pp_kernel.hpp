// SPDX-License-Identifier: Apache-2.0
// The persistent kernel of `gnio run packet-processing`, seen from the host:
// its arguments, the layout of its counters, and the launch (pp_kernel.cu,
// compiled by nvcc with CUDA, as C++ for the emulated device without it).
#pragma once

#include <cstdint>

#include "gnio/dev/capture.hpp"
#include "gnio/dev/filter.hpp"
#include "gnio/dev/rxq.hpp"
#include "gnio/dev/semaphore.hpp"
#include "gnio/dev/txq.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "packet_processing/analyze.hpp"
#include "packet_processing/flow_table.hpp"
#include "packet_processing/replies.hpp"

namespace gnio::app {

// The Capture counter block: CaptureOutcome::Recorded, Cut, RingFull (None is not counted).
inline constexpr uint32_t kCaptureOutcomes = 3;
inline constexpr const char* kCaptureOutcomeNames[kCaptureOutcomes] = {"recorded", "cut", "ring_full"};

// Positions in the kernel's counter array (GpuCpu memory, u64 each).
// The kernel's counter array: blocks in this order, each X(name, size)
// (an index added to k<name> picks an entry of a block of several). A
// block's offset is the sum of the sizes before it, so a new counter is one
// line here and its increment.
//   Proto: + Proto. Csum: + layer * kCsumCount + state. Reason: + Reason.
//   Reply: + ReplyKind, replies the TX queue accepted (kReplyNone: built but
//     not sent, the kernel stopping or the queue refusing it); what the
//     engine then dropped is in the queue's TxqStats::dropped.
//   Records: handed to the host. RecordsDropped: not handed, stopping while
//     the host was behind. RecordWaits: hand-offs that waited for the host
//     to free room in the ring.
//   Flow: + FlowOutcome. FlowUpdates: flow-table updates made; a burst's
//     packets of one flow are one update (merged per warp, then per block),
//     so at most the packets with a flow.
//   EchoRefused: echo requests that cannot be answered (cut by the capture,
//     malformed or behind an IPv6 routing header), with or without a TX queue.
//   Filtered: packets the --filter program rejected, released unanalysed
//     (Packets counts those it matched).
//   Tunnel: + TunnelType, packets whose tunnel header --decap opens was
//     found, well-formed or not (kTunnelNone: packets with none).
//   Capture: + CaptureOutcome - 1, the matched packets offered to the
//     --capture queue: recorded whole, recorded cut to the staging slot, or
//     not recorded because the capture ring was full (ring_full). What the
//     writer then failed to write is in the capture queue's TxqStats::dropped.
#define GNIO_PP_COUNTER_BLOCKS(X)                       \
  X(Packets, 1)                                         \
  X(Bytes, 1)                                           \
  X(Proto, dev::app::kProtoCount)                       \
  X(Csum, uint32_t{dev::app::kCsumLayerCount} * uint32_t{dev::app::kCsumCount}) \
  X(Reason, dev::app::kReasonCount)                     \
  X(Reply, dev::app::kReplyCount)                       \
  X(Records, 1)                                         \
  X(RecordsDropped, 1)                                  \
  X(Flow, dev::app::kFlowOutcomeCount)                  \
  X(EchoRefused, 1)                                     \
  X(FlowUpdates, 1)                                     \
  X(RecordWaits, 1)                                     \
  X(Filtered, 1)                                        \
  X(Tunnel, dev::app::kTunnelCount)                     \
  X(Capture, kCaptureOutcomes)

namespace counter {

#define GNIO_PP_BLOCK_NAME(name, size) name,
enum class Block : uint32_t { GNIO_PP_COUNTER_BLOCKS(GNIO_PP_BLOCK_NAME) kEnd };
#undef GNIO_PP_BLOCK_NAME

#define GNIO_PP_BLOCK_SIZE(name, size) uint32_t{size},
inline constexpr uint32_t kBlockSizes[] = {GNIO_PP_COUNTER_BLOCKS(GNIO_PP_BLOCK_SIZE)};
#undef GNIO_PP_BLOCK_SIZE

/// The index of the first counter of block `b`.
constexpr uint32_t offset(Block b) {
  uint32_t at = 0;
  for (uint32_t i = 0; i < static_cast<uint32_t>(b); ++i) at += kBlockSizes[i];
  return at;
}

#define GNIO_PP_BLOCK_OFFSET(name, size) inline constexpr uint32_t k##name = offset(Block::name);
GNIO_PP_COUNTER_BLOCKS(GNIO_PP_BLOCK_OFFSET)
#undef GNIO_PP_BLOCK_OFFSET
inline constexpr uint32_t kCount = offset(Block::kEnd);

}  // namespace counter

// What a block is doing (ctx.set_stage), named for hang reports and gnio top.
namespace stage {
inline constexpr uint32_t kReceive = 0;    // waiting for a burst
inline constexpr uint32_t kProcess = 1;    // classifying, flows, records, building replies
inline constexpr uint32_t kReplyWait = 2;  // waiting for the replies of the burst to leave
inline constexpr uint32_t kRelease = 3;    // returning the burst to the RX queue
inline constexpr const char* kNames[] = {"receive", "process", "reply_wait", "release"};
}  // namespace stage

struct PpArgs {
  static constexpr uint32_t kMaxQueues = 16;
  dev::Rxq rxq[kMaxQueues];
  uint32_t queues = 1;   // block b serves rxq[b % queues]
  dev::Txq txq;
  bool tx = false;       // answer (replies need a TX queue)
  dev::app::ReplyConfig replies;
  uint64_t* counters = nullptr;  // counter::kCount, GpuCpu memory
  dev::app::FlowTable flows;
  dev::Semaphore records;        // dev::app::Record items
  uint64_t* record_claim = nullptr;  // GpuCpu (the kernel's atomics): next record index to fill
  // CpuGpu, host-written: records the host consumed. Pinned host memory, not
  // managed memory: the host writes it all the time, and a managed page
  // written by the host moves to the host, then back on the GPU's next read.
  const uint64_t* record_consumed = nullptr;
  uint32_t burst = 256;
  dev::FilterRef filter;  // the packets to analyse; the default matches every packet
  uint32_t decap = dev::app::kDecapAll;  // --decap: the tunnel types opened (bits 1u << TunnelType)
  // --capture: the matched packets recorded to this queue (dev/capture.hpp),
  // each with the id of its RX queue (rxq_id[b % queues]) as its interface.
  dev::Capture capture;
  uint16_t rxq_id[kMaxQueues] = {};
};

Result<PersistentKernel> launch_packet_processing(const Gpu& gpu, const LaunchConfig& cfg, const PpArgs& args);

// The host side of the record hand-off (`gnio run` and app_bench): takes
// the records the kernel made ready, in order, and frees their items. The
// kernel waits on `consumed`, published every kPublishEvery records and at
// the end of each call rather than per record.
struct RecordConsumer {
  static constexpr uint64_t kPublishEvery = 64;
  GpuSemaphore* sem = nullptr;
  uint64_t* consumed = nullptr;  // CpuGpu, read by the kernel
  uint64_t next = 0;

  // Calls take(record in the ring) for each, before its item is freed;
  // returns how many. take() copies what it keeps with store_record(): the
  // words the kernel wrote (reads of pinned memory the GPU just wrote miss
  // the cache, line by line).
  template <typename Take>
  uint64_t drain(Take&& take) {
    const uint64_t from = next;
    const uint32_t items = sem->handle().count();
    while (sem->status(static_cast<uint32_t>(next % items)) == dev::SemStatus::Ready) {
      const uint32_t item = static_cast<uint32_t>(next % items);
      take(*reinterpret_cast<const dev::app::Record*>(sem->payload(item)));
      sem->set_status(item, dev::SemStatus::Free);
      if (++next % kPublishEvery == 0) dev::store_release(consumed, next);
    }
    if (next != from) dev::store_release(consumed, next);
    return next - from;
  }
};

}  // namespace gnio::app
