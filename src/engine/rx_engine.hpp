// SPDX-License-Identifier: Apache-2.0
// The NIC engine of one RX queue: it plays the NIC's part, moving frames
// from the backend into the GPU-visible ring and publishing the producer
// index after the bytes. An EngineThread runs it, alone or with others.
// Each delivery path has its file (rx_sink, rx_in_place, rx_dma, with the
// lent frames of the last two in rx_lent); this one polls, batches and
// publishes for all of them.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/backend.hpp"
#include "engine/rx_dma.hpp"
#include "engine/rx_lent.hpp"
#include "engine/rx_ring_writer.hpp"
#include "engine/rx_sink.hpp"
#include "gnio/dev/ring.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

namespace gnio::detail {

struct RxqImpl;
struct GpuImpl;
class EngineThread;

// How frames reach the ring, chosen once per queue when its engine starts:
// from whether the backend has its own frame memory (rx_memory()) and the
// queue a packet pool, and where the ring lives. Copies are per packet.
enum class RxDelivery {
  // The frame bytes live in the ring's strides: the backend writes each
  // frame there through an RxSink (rx_into()), or into the strides' pinned
  // staging mirror for a ring in device memory, which the receivers copy
  // into the ring (dev::Rxq::stage_in()). One host copy, the backend's
  // write (a backend filling private buffers copies once more). The engine
  // reuses the strides once the
  // kernel released the descriptors; nothing goes back to the backend.
  Sink,
  // The frame bytes live in the backend's frame memory, mapped into the GPU
  // as the data area of a ring in host memory; descriptors point at the
  // frames where the backend put them. No copy. The engine hands each frame
  // back (rx_release(), in lent order) once the kernel released it.
  InPlace,
  // The frame bytes live in the backend's frame memory, registered with the
  // GPU, and the receivers copy them into the strides of a ring in device
  // memory (rx_dma.cpp). No host copy. The engine hands frames back as
  // InPlace, once the kernel released them.
  Dma,
};

class RxEngine final {
 public:
  // Allocates the ring and hands the engine to its engine thread.
  static Result<std::unique_ptr<RxEngine>> start(RxqImpl& q);
  // Allocates the ring but runs on no thread: the caller calls poll()
  // (benchmarks of the engine's own cost).
  static Result<std::unique_ptr<RxEngine>> create_unattached(RxqImpl& q);
  ~RxEngine();

  // Takes the engine off its thread; the ring stays until destruction.
  void stop();
  const dev::RxRing& device_ring() const noexcept { return dev_ring_; }
  // The source is exhausted and the consumer released every packet.
  bool drained() const noexcept;
  // The error that stopped the source, if any.
  Status source_status() const;
  // Asks the backend for no more frames (EthRxq::stop_source()). Returns
  // once every turn that could still pull has ended, published and counted
  // what it pulled; the engine keeps reclaiming and publishing afterwards.
  // The engine must be on its thread.
  void stop_source();

  // The engine thread's account of one turn on this queue: whether it found
  // work, how long the turn took, and how long the thread waited before
  // its round because none of its queues had work.
  void count_turn(bool work, uint64_t turn_ns, uint64_t wait_ns);

  // One turn of the engine (called by its EngineThread): reclaim what the
  // consumer released, move what the backend has, publish. True when it
  // moved or reclaimed anything.
  bool poll();
  const GpuImpl& gpu() const noexcept;

 private:
  explicit RxEngine(RxqImpl& q);
  Status allocate();
  Status map_backend_memory(const backend::RxMemory& m);
  void reclaim();
  // One burst of up to `room` frames by the queue's delivery path; returns
  // frames offered (delivered or dropped).
  Result<size_t> pull(uint32_t room);
  // Frames taken from the backend and not offered yet: the queue is not drained.
  bool holds_frames() const;
  // Adds what the backend lost before offering it (take_rx_drops()).
  void count_lost();
  Status publish();
  // Enough waits to publish now (the thresholds in rx_engine.cpp).
  bool batch_full() const;
  void fail(const Status& s);

  RxqImpl& q_;
  backend::Backend& be_;
  // The backend is a wire: a frame that finds the ring full is dropped as
  // ring_full, not kept for the next pull.
  const bool drops_when_full_;
  const uint32_t burst_;
  const std::optional<backend::RxMemory> frame_memory_;  // the backend's, if it has any
  const RxDelivery delivery_;
  DeviceMemory data_, desc_, producer_, claim_, consumer_, staging_;
  // Dma: the backend's frame memory registered with the GPU, kept mapped
  // while the transfers read it (InPlace: the ring's data_).
  DeviceMemory frame_map_;
  dev::RxRing dev_ring_{};
  RxRingWriter writer_;
  // The ring is in device memory, filled by its receivers from staging_.
  bool staged_ = false;

  RxSinkPath sink_;
  LentFrames lent_;
  RxDmaPath dma_;

  bool backend_done_ = false;
  // stop_source(): the flag, and the turns ended so far (both sequentially
  // consistent: a turn that read the flag unset ends before stop_source() returns).
  std::atomic<bool> source_stop_{false};
  std::atomic<uint64_t> turns_{0};
  // drained(): read by the application's threads, written by the engine's.
  std::atomic<bool> source_done_{false};
  std::atomic<uint64_t> published_atomic_{0};
  std::atomic<uint64_t> released_atomic_{0};
  Status source_status_;
  mutable std::mutex status_mu_;
  std::shared_ptr<EngineThread> thread_;
};

}  // namespace gnio::detail
