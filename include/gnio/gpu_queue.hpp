// Layer 3: GPU-visible handles over started Ethernet queues. A handle
// exposes a queue to one GPU's kernels; it never owns the queue. Destroy
// handles before their queues (the reverse is refused with BadState).
#pragma once

#include <memory>

#include "gnio/dev/rxq.hpp"
#include "gnio/dev/semaphore.hpp"
#include "gnio/dev/txq.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"

namespace gnio {

namespace detail {
struct GpuRxqImpl;
struct GpuTxqImpl;
struct SemaphoreImpl;
}  // namespace detail

class GpuRxq {
 public:
  // The queue must be started with `gpu` as its datapath (EthRxq::set_gpu).
  static Result<GpuRxq> create(const Gpu& gpu, const EthRxq& rxq);
  GpuRxq() = default;
  GpuRxq(GpuRxq&&) noexcept = default;
  GpuRxq& operator=(GpuRxq&&) noexcept;
  ~GpuRxq();

  // Trivially copyable: pass it to a kernel by value.
  dev::Rxq handle() const noexcept;
  // BadState while a persistent kernel on the GPU is running.
  Status destroy();

 private:
  explicit GpuRxq(std::shared_ptr<detail::GpuRxqImpl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::GpuRxqImpl> impl_;
};

class GpuTxq {
 public:
  static Result<GpuTxq> create(const Gpu& gpu, const EthTxq& txq);
  GpuTxq() = default;
  GpuTxq(GpuTxq&&) noexcept = default;
  GpuTxq& operator=(GpuTxq&&) noexcept;
  ~GpuTxq();

  dev::Txq handle() const noexcept;
  Status destroy();

 private:
  explicit GpuTxq(std::shared_ptr<detail::GpuTxqImpl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::GpuTxqImpl> impl_;
};

// Items with a status word and a fixed-size payload in pinned host memory
// (MemKind::CpuGpu): the kernel sets, the host polls.
class GpuSemaphore {
 public:
  static Result<GpuSemaphore> create(const Gpu& gpu, uint32_t items, uint32_t payload_bytes);
  GpuSemaphore() = default;
  GpuSemaphore(GpuSemaphore&&) noexcept = default;
  GpuSemaphore& operator=(GpuSemaphore&&) noexcept;
  ~GpuSemaphore();

  dev::Semaphore handle() const noexcept;
  dev::SemStatus status(uint32_t item) const;
  void set_status(uint32_t item, dev::SemStatus s);
  const uint8_t* payload(uint32_t item) const;
  // Waits until item's status is `want`; Timeout otherwise.
  Status wait(uint32_t item, dev::SemStatus want, uint32_t timeout_ms) const;
  Status destroy();

 private:
  explicit GpuSemaphore(std::shared_ptr<detail::SemaphoreImpl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::SemaphoreImpl> impl_;
};

}  // namespace gnio
