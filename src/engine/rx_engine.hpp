// The NIC engine of one RX queue: it plays the NIC's part, moving frames
// from the backend into the GPU-visible ring and publishing the producer
// index after the bytes. An EngineThread runs it, alone or with others.
//
// Three ways frames reach the ring (backend.hpp, docs/DESIGN-NOTES.md):
//  - through the sink: the engine lends the ring's free strides (or those
//    of their pinned staging mirror) to Backend::rx_into(), which writes
//    each frame there;
//  - in place: a backend that owns its frame memory (mode 2) and a ring in
//    host memory: that memory, mapped into the GPU, is the ring's data area,
//    the engine writes descriptors only and hands frames back in order once
//    the kernel released them;
//  - by DMA: a backend that owns its frame memory and a ring in device
//    memory: that memory, registered with the GPU, is the source of one
//    copy-engine transfer per run of frames into the ring's strides; frames
//    go back as in place, once the kernel released them.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <mutex>
#include <vector>

#include "backends/backend.hpp"
#include "gnio/dev/ring.hpp"
#include "gnio/eth.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gnio::detail {

struct RxqImpl;
struct GpuImpl;
class EngineThread;

class RxEngine final : public backend::RxSink {
 public:
  // Allocates the ring and hands the engine to its engine thread.
  static Result<std::unique_ptr<RxEngine>> start(RxqImpl& q);
  // Allocates the ring but runs on no thread: the caller calls poll()
  // (benchmarks of the engine's own cost).
  static Result<std::unique_ptr<RxEngine>> create_unattached(RxqImpl& q);
  ~RxEngine() override;

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

  // backend::RxSink: the free space of the ring for one rx_into() call.
  uint8_t* claim(uint32_t len) override;
  void commit(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len) override;
  void commit_hashed(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len,
                     uint32_t rss_hash) override;
  void drop(DropReason why) override;
  uint32_t room() const override { return room_; }
  uint32_t max_frame() const override { return max_frame_; }

 private:
  explicit RxEngine(RxqImpl& q);
  Status allocate();
  Status map_backend_memory(const backend::RxMemory& m);
  void reclaim();
  // Moves one burst; returns frames offered (delivered or dropped).
  Result<size_t> pull_sink();
  Result<size_t> pull_in_place();
  Result<size_t> pull_dma();
  // Lends up to `n` frames from the backend straight into lent_ (fewer
  // where lent_ wraps: the rest comes with the next pull).
  Result<size_t> take_burst(size_t n);
  void grow_lent(size_t need);
  // By DMA: places the lent frames not placed yet, in order; how many it offered.
  Result<size_t> place_lent();
  // Where the sink writes a frame of `len` bytes: the first of `need`
  // contiguous free strides after the last frame, or nullopt when
  // descriptors or strides are short (place_lent() does the same inline).
  std::optional<uint64_t> find_strides(uint32_t len, uint32_t& need) const;
  // Writes the next descriptor (its frame at strides from `pos`) and counts it.
  void append(const dev::RxDesc& d, uint64_t pos, uint32_t flags);
  // Closes the open run: a copy at the next publish, or, when it is short
  // and copy_if_short, a CPU copy into the staging mirror now.
  void end_run(bool copy_if_short);
  // stop_source(): lent frames not placed yet go back unoffered.
  void give_back_unplaced();
  bool in_region(const backend::RxFrame& f) const {
    return f.data >= frame_base_ && f.data + f.len <= frame_base_ + frame_bytes_;
  }
  Status check_in_region(const backend::RxFrame& f) const;
  // Frames taken from the backend and not offered yet: the queue is not drained.
  bool holds_frames() const;
  // Adds what the backend lost before offering it (take_rx_drops()).
  void count_lost();
  Status publish();
  // Enough waits to publish now (the thresholds in rx_engine.cpp).
  bool batch_full() const;
  void fail(const Status& s);
  void add_range(std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t off, uint64_t len);
  uint32_t describe(const uint8_t* data, uint32_t len, uint32_t flags, uint32_t* rss_hash) const;
  // describe() when some offload is asked for: parses the frame.
  uint32_t describe_offloads(const uint8_t* data, uint32_t len, uint32_t flags, uint32_t* rss_hash) const;
  void release_in_place(uint64_t upto);

  RxqImpl& q_;
  backend::Backend& be_;
  const bool wire_;
  RxOffloads offloads_;
  bool plain_;  // no offload asked: descriptors carry the backend's flags only
  uint32_t burst_;
  uint32_t max_frame_;
  DeviceMemory data_, desc_, producer_, claim_, consumer_, staging_;
  dev::RxRing dev_ring_{};
  uint8_t* write_data_ = nullptr;  // where the engine writes bytes (ring or staging)
  dev::RxDesc* write_desc_ = nullptr;
  bool staged_ = false;

  uint32_t nstrides_ = 0, stride_shift_ = 0, ndesc_ = 0;
  uint64_t stride_head_ = 0, stride_tail_ = 0;
  uint64_t pi_ = 0, published_ = 0, reclaimed_ = 0;
  std::vector<uint64_t> span_end_;  // absolute stride end of each descriptor
  std::vector<std::pair<uint64_t, uint64_t>> data_ranges_;  // byte ranges written since the last publish
  std::vector<std::pair<uint64_t, uint64_t>> desc_ranges_;  // descriptor bytes of the same packets

  // The frame being written through the sink: where claim() put it.
  uint64_t claim_pos_ = 0;
  uint32_t claim_need_ = 0;
  uint32_t room_ = 0;
  uint64_t staged_bytes_ = 0;  // strides written to the staging mirror since the last publish

  // Counts since the last publish, added to the queue's counters per burst.
  uint64_t new_offered_ = 0, new_bytes_ = 0, new_truncated_ = 0;
  DropCounts new_dropped_{};

  // In place and by DMA (mode 2): frames the backend lent, in rx_burst()
  // order (rx_burst() writes them here, rx_release() is given slices of
  // it), the descriptor count after which each placed one may go back
  // (delivered: its own descriptor; dropped: the descriptors before it;
  // non-decreasing in lent order), and the lent frame placed next (by DMA,
  // those after it, from a pull source, wait for strides).
  bool in_place_ = false;
  bool dma_ = false;
  uint8_t* frame_base_ = nullptr;
  size_t frame_bytes_ = 0;
  std::vector<backend::RxFrame> lent_;  // circular, power-of-two size
  std::vector<uint64_t> release_after_;  // the same indices
  uint64_t lent_head_ = 0, placed_ = 0, lent_tail_ = 0;

  // By DMA: the backend's memory registered with the GPU (kept mapped while
  // the copies read it) and the copies since the last publish: one per run
  // of frames that lie at the same distances in the backend's memory and
  // in the ring.
  DeviceMemory frame_map_;
  struct Run {
    const uint8_t* src;
    uint64_t dst;  // byte offset in the ring's data area
    uint64_t bytes;
  };
  Run open_run_{nullptr, 0, 0};
  std::vector<Run> runs_;

  bool backend_done_ = false;
  // stop_source(): the flag, and the turns ended so far (both sequentially
  // consistent: a turn that read the flag unset ends before stop_source() returns).
  std::atomic<bool> source_stop_{false};
  std::atomic<uint64_t> turns_{0};
  std::atomic<bool> source_done_{false};
  std::atomic<uint64_t> published_atomic_{0};
  std::atomic<uint64_t> released_atomic_{0};
  Status source_status_;
  mutable std::mutex status_mu_;
  std::shared_ptr<EngineThread> thread_;
#if GNIO_HAVE_CUDA
  cudaStream_t stream_ = nullptr;
#endif
};

}  // namespace gnio::detail
