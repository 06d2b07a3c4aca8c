// The NIC engine of one TX queue: a host thread that polls the producer
// index the kernel pushes (plain loads on pinned memory, no CUDA call),
// honours send times, hands packets to the backend and publishes completions.
#pragma once

#include <atomic>
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

struct TxqImpl;

class TxEngine {
 public:
  static Result<std::unique_ptr<TxEngine>> start(TxqImpl& q);
  ~TxEngine();

  // Waits up to timeout_ms for every pushed descriptor to complete, then
  // stops the thread. Timeout if descriptors were still outstanding.
  Status stop(uint32_t timeout_ms);
  const dev::TxRing& device_ring() const noexcept { return dev_ring_; }
  uint64_t pushed() const noexcept;
  uint64_t completed() const noexcept;

 private:
  explicit TxEngine(TxqImpl& q) : q_(q) {}
  Status allocate();
  void run();
  // Bytes of descriptor d's payload, or nullptr (error completion).
  const uint8_t* payload(const dev::TxDesc& d, uint64_t index, std::vector<uint8_t>& bounce);

  TxqImpl& q_;
  DeviceMemory desc_, staging_, host_idx_, dev_idx_, ready_;
  dev::TxRing dev_ring_{};
  uint64_t* producer_ = nullptr;
  uint64_t* completed_ = nullptr;
  uint64_t* errors_ = nullptr;
  uint32_t slot_size_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
#if GNIO_HAVE_CUDA
  cudaStream_t stream_ = nullptr;
#endif
};

}  // namespace gnio::detail
