// SPDX-License-Identifier: Apache-2.0
// The part of a "NIC" that moves frames on the host: the NIC engine pulls
// received frames from a backend and hands transmitted frames to it.
//
// Three ways a backend delivers frames (docs/DESIGN-NOTES.md counts the
// copies of each):
//  1. rx_into(): the engine lends the free space of the ring (or of its
//     pinned staging mirror) through an RxSink and the backend writes each
//     frame there once (pcap records, generator templates, loop payloads).
//  2. Backend-owned memory: rx_memory() names memory the backend's frames
//     live in (AF_XDP UMEM, DPDK mbuf pool, a prebuilt pool); the engine
//     registers it with the GPU once, rx_burst() returns frames pointing into
//     it, descriptors point at them where they are (ring in host memory) or
//     the GPU's copy engine copies them from there into the ring (ring in
//     device memory), and the engine hands them back with rx_release() only
//     after the kernel released them.
//  3. rx_burst() into backend-private memory, copied by the engine (the
//     default rx_into() does this; for simple backends and tests).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/drop_reason.hpp"
#include "gnio/eth_caps.hpp"
#include "gnio/status.hpp"

namespace gnio::backend {

// What a backend says of one received frame (bits of RxFrame::flags). They
// become descriptor flags (dev::PacketFlags FrameTruncated / SyntheticL2).
enum RxFrameFlags : uint32_t {
  RxFrameTruncated = 1u << 0,   // cut to the queue's max packet size; wire_len has the original length
  RxFrameSyntheticL2 = 1u << 1, // the Ethernet header was made up from SLL/NULL/raw-IP framing
  RxFrameRssHash = 1u << 2,     // rss_hash holds the frame's Toeplitz hash (default key); the engine does not hash it again
};

// One received frame. Unless the backend owns the memory (rx_memory()),
// `data` stays valid until the next rx_burst() on the same queue.
struct RxFrame {
  const uint8_t* data = nullptr;
  uint32_t len = 0;             // bytes at data
  uint32_t flags = 0;           // RxFrameFlags
  uint32_t wire_len = 0;        // length before truncation (0: same as len)
  uint64_t timestamp_ns = 0;    // capture/arrival time (CLOCK_REALTIME ns)
  uint64_t cookie = 0;          // backend-owned memory: what rx_release() needs back (UMEM address, mbuf)
  uint32_t rss_hash = 0;        // valid with RxFrameRssHash
};

struct TxFrame {
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  uint64_t timestamp_ns = 0;  // time the engine sent it; a capture: the frame's RX time (CLOCK_REALTIME ns)
  // A frame a kernel recorded (dev::TxCapture) rather than sent: the RX
  // queue it came from, its pcapng epb_flags and its length before the
  // staging slot cut it (>= len). Recording backends (pcapng-out) write
  // them; others send the bytes.
  bool captured = false;
  uint16_t rx_queue = 0;
  uint32_t epb_flags = 0;
  uint32_t original_len = 0;
};

// Frame memory a backend owns: one region per queue (or one shared by all
// queues), host-mapped, which the engine registers with the GPU.
struct RxMemory {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  uint32_t frames = 0;  // the most frames it lends at once (0: not known)
};

// The free space of one RX ring, lent to a backend for one burst.
class RxSink {
 public:
  virtual ~RxSink() = default;
  // Room for a frame of `len` bytes, or nullptr when the ring has none now
  // (keep the frame: it is offered again at the next burst, in order).
  virtual uint8_t* claim(uint32_t len) = 0;
  // Completes the frame written into the last claim().
  virtual void commit(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len) = 0;
  // The same, for a backend that already knows the frame's RSS hash (it
  // spread flows with it): the engine reuses it instead of hashing again.
  virtual void commit_hashed(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len,
                             uint32_t /*rss_hash*/) {
    commit(len, timestamp_ns, flags & ~RxFrameRssHash, wire_len);
  }
  // A frame offered but not delivered, counted under its reason.
  virtual void drop(DropReason why) = 0;
  // Frames this burst may still take.
  virtual uint32_t room() const = 0;
  // The queue's max packet size: a longer frame is cut to it by the backend
  // and committed with RxFrameTruncated and its wire_len.
  virtual uint32_t max_frame() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const EthCaps& caps() const = 0;

  // Fills up to out.size() frames from queue `queue`; returns how many.
  // 0 means nothing now (or, once at_end(queue), nothing ever again).
  // Errors are real failures (I/O, corrupt input) with file/offset context.
  virtual Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) = 0;

  // Writes up to sink.room() frames of queue `queue` straight into the
  // ring; returns how many it offered (delivered or dropped). The default
  // copies what rx_burst() returns (and, for backend-owned memory, hands
  // the frames back with rx_release() right after copying them).
  virtual Result<size_t> rx_into(uint16_t queue, RxSink& sink);
  // True while the default rx_into() keeps frames of `queue` that found no
  // room yet: the queue is not drained even if at_end(queue).
  bool rx_held(uint16_t queue) const;

  // Backend-owned frame memory of `queue`, if the backend has any: the
  // engine then reads frames where they are (RxDelivery::InPlace or Dma).
  virtual std::optional<RxMemory> rx_memory(uint16_t /*queue*/) const { return std::nullopt; }
  // Gives back frames of `queue` the kernel released (or the engine dropped
  // or copied), in the order rx_burst() returned them.
  virtual void rx_release(uint16_t /*queue*/, std::span<const RxFrame> /*frames*/) {}

  // Frames of `queue` lost before rx_burst()/rx_into() could offer them (a
  // paced source with every buffer lent: a NIC missing frames while it has
  // nowhere to put them), by reason, since the last call. The engine counts
  // them as offered and dropped, so that offered == delivered + dropped
  // holds for what the source produced.
  virtual DropCounts take_rx_drops(uint16_t /*queue*/) { return {}; }

  // True once a finite source (a pcap file, a counted generator) is drained.
  virtual bool at_end(uint16_t queue) const = 0;

  // Sends frames on queue `queue`; returns how many were accepted (a short
  // count means "try the rest later"). Frames are copied before returning.
  virtual Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) = 0;

  // Makes everything sent so far durable/visible (pcap-out flushes) and
  // reports write errors not yet reported (pcapng-out).
  virtual Status flush() { return Status::ok(); }

 private:
  // The default rx_into()'s state of one queue: frames rx_burst() returned
  // that found no room, and the burst buffer. Queues run on different
  // engine threads: each has its own.
  struct HeldFrame {
    std::vector<uint8_t> bytes;
    uint64_t timestamp_ns;
    uint32_t flags, wire_len, rss_hash;
  };
  struct QueueRx {
    std::vector<HeldFrame> held;
    std::vector<RxFrame> burst;
  };
  QueueRx& queue_rx(uint16_t queue);
  mutable std::mutex rx_mu_;  // guards the vector, not the queues' state
  std::vector<std::unique_ptr<QueueRx>> rx_;
};

// Opens a backend from a queue spec ("pcap:FILE,loop=2", "synthetic:count=10",
// "loop:", "pcap-out:FILE", "pcapng-out:FILE,rotate=100M"). The driver name
// is the text before ':'.
// nrxq/ntxq: the number of queues the caller will use (checked against caps).
Result<std::unique_ptr<Backend>> open_backend(std::string_view spec);

}  // namespace gnio::backend
