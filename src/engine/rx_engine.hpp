// The NIC engine of one RX queue: a host thread that plays the NIC's part,
// pulling frames from the backend into the strided cyclic ring and
// publishing the producer index after the bytes.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "gnio/dev/ring.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gnio::detail {

struct RxqImpl;

class RxEngine {
 public:
  static Result<std::unique_ptr<RxEngine>> start(RxqImpl& q);
  ~RxEngine();

  void stop();
  const dev::RxRing& device_ring() const noexcept { return dev_ring_; }
  // The source is exhausted and the consumer released every packet.
  bool drained() const noexcept;
  // The error that stopped the source, if any.
  Status source_status() const;

 private:
  explicit RxEngine(RxqImpl& q) : q_(q) {}
  Status allocate();
  void run();
  void reclaim();
  // Places one frame; false when the ring has no room for it.
  bool place(const uint8_t* data, uint32_t len, uint64_t ts);
  Status publish();
  void add_range(std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t off, uint64_t len);

  RxqImpl& q_;
  DeviceMemory data_, desc_, producer_, claim_, consumer_, staging_;
  dev::RxRing dev_ring_{};
  uint8_t* write_data_ = nullptr;  // where the engine writes bytes (ring or staging)
  dev::RxDesc* write_desc_ = nullptr;
  bool staged_ = false;

  uint32_t nstrides_ = 0, stride_shift_ = 0, ndesc_ = 0;
  uint64_t stride_head_ = 0, stride_tail_ = 0;
  uint64_t pi_ = 0, published_ = 0, reclaimed_ = 0;
  std::vector<uint64_t> span_end_;  // absolute stride end of each descriptor
  uint64_t unpublished_bytes_ = 0;  // frame bytes placed since the last publish
  std::vector<std::pair<uint64_t, uint64_t>> data_ranges_;  // byte ranges written since the last publish
  std::vector<std::pair<uint64_t, uint64_t>> desc_ranges_;  // descriptor bytes of the same packets

  struct PendingFrame {
    std::vector<uint8_t> bytes;
    uint64_t ts;
  };
  std::deque<PendingFrame> pending_;  // pulled but not yet placed (pull sources only)

  std::atomic<bool> stop_{false};
  std::atomic<bool> source_done_{false};
  std::atomic<uint64_t> published_atomic_{0};
  std::atomic<uint64_t> released_atomic_{0};
  Status source_status_;
  mutable std::mutex status_mu_;
  std::thread thread_;
#if GNIO_HAVE_CUDA
  cudaStream_t stream_ = nullptr;
#endif
};

}  // namespace gnio::detail
