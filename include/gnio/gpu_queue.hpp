// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Layer 3: GPU-visible handles over started Ethernet queues, and
/// GPU↔CPU semaphores.
///
/// A handle exposes a queue to one GPU's kernels; it never owns the queue.
/// Bring-up: configure and start the Ethernet queue with the GPU as its
/// datapath (EthRxq::set_gpu() before EthRxq::start()), create the handle,
/// pass handle() to a persistent kernel. Teardown in reverse: stop the
/// kernel, destroy the handle, then stop and destroy the queue (destroying
/// a queue with a live handle, or a handle under a running kernel, returns
/// Errc::BadState).
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

/// @brief The GPU-visible handle of a started RX queue.
///
/// Holds references that keep the queue's ring and the GPU context alive.
/// Move-only; host only (the device side is dev::Rxq, from handle()).
class GpuRxq {
 public:
  /// @brief Creates the handle of a started RX queue.
  /// @param gpu The open GPU context the queue was started with.
  /// @param rxq The queue: started, with `gpu` as its datapath
  ///        (EthRxq::set_gpu() before start()).
  /// @return The handle, or: BadState when `gpu` is not open, the queue is
  ///         destroyed or not in state Started, or was started without a
  ///         GPU datapath; InvalidValue when the queue's datapath is
  ///         another GPU.
  static Result<GpuRxq> create(const Gpu& gpu, const EthRxq& rxq);
  /// @brief No handle; handle() returns an empty dev::Rxq.
  GpuRxq() = default;
  /// @brief Takes over the handle of the other GpuRxq, which is left empty.
  GpuRxq(GpuRxq&&) noexcept = default;
  /// @brief Destroys this handle (the result is ignored), then takes over
  ///        the other.
  /// @return `*this`.
  GpuRxq& operator=(GpuRxq&&) noexcept;
  /// @brief Calls destroy(). While a kernel runs it logs an error and keeps
  ///        the queue alive until the GPU's kernels have stopped.
  ~GpuRxq();

  /// @brief The device view of the queue.
  /// @return A trivially copyable dev::Rxq to pass to a kernel by value;
  ///         valid while this handle is alive. Empty for an empty handle.
  dev::Rxq handle() const noexcept;
  /// @brief Releases the handle, so that the queue may be destroyed.
  /// @return Ok (also for an empty handle), or BadState while a persistent
  ///         kernel runs on the GPU: stop the kernel first.
  Status destroy();

 private:
  explicit GpuRxq(std::shared_ptr<detail::GpuRxqImpl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::GpuRxqImpl> impl_;
};

/// @brief The GPU-visible handle of a started TX queue.
///
/// Holds references that keep the queue's ring and the GPU context alive.
/// Move-only; host only (the device side is dev::Txq, from handle()).
class GpuTxq {
 public:
  /// @brief Creates the handle of a started TX queue.
  /// @param gpu The open GPU context the queue was started with.
  /// @param txq The queue: started, with `gpu` as its datapath
  ///        (EthTxq::set_gpu() before start()).
  /// @return The handle, or: BadState when `gpu` is not open, the queue is
  ///         destroyed or not in state Started, or was started without a
  ///         GPU datapath; InvalidValue when the queue's datapath is
  ///         another GPU.
  static Result<GpuTxq> create(const Gpu& gpu, const EthTxq& txq);
  /// @brief No handle; handle() returns an empty dev::Txq.
  GpuTxq() = default;
  /// @brief Takes over the handle of the other GpuTxq, which is left empty.
  GpuTxq(GpuTxq&&) noexcept = default;
  /// @brief Destroys this handle (the result is ignored), then takes over
  ///        the other.
  /// @return `*this`.
  GpuTxq& operator=(GpuTxq&&) noexcept;
  /// @brief Calls destroy(). While a kernel runs it logs an error and keeps
  ///        the queue alive until the GPU's kernels have stopped.
  ~GpuTxq();

  /// @brief The device view of the queue.
  /// @return A trivially copyable dev::Txq to pass to a kernel by value;
  ///         valid while this handle is alive. Empty for an empty handle.
  dev::Txq handle() const noexcept;
  /// @brief Releases the handle, so that the queue may be destroyed.
  /// @return Ok (also for an empty handle), or BadState while a persistent
  ///         kernel runs on the GPU: stop the kernel first.
  Status destroy();

 private:
  explicit GpuTxq(std::shared_ptr<detail::GpuTxqImpl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::GpuTxqImpl> impl_;
};

/// @brief A ring of items, each a status word and a fixed-size payload, in
/// pinned host memory (MemKind::CpuGpu): the kernel fills a payload and
/// sets its status, the host polls, consumes and sets it back.
///
/// Every item starts as dev::SemStatus::Free (the memory is zeroed). The
/// usual exchange: the kernel writes the payload, sets Ready; the host
/// waits for Ready, reads payload(), sets Free. Item indices wrap modulo
/// the item count on both sides. Move-only; the host accessors are for a
/// created semaphore only (on an empty one they dereference nothing valid).
class GpuSemaphore {
 public:
  /// @brief Allocates the status words and payloads on `gpu`.
  /// @param gpu The open GPU context.
  /// @param items The number of items, at least 1.
  /// @param payload_bytes Bytes of each item's payload, at least 1.
  /// @return The semaphore, or: BadState when `gpu` is not open;
  ///         InvalidValue when `items` or `payload_bytes` is 0; any error
  ///         of Gpu::alloc().
  static Result<GpuSemaphore> create(const Gpu& gpu, uint32_t items, uint32_t payload_bytes);
  /// @brief No semaphore; handle() returns an empty dev::Semaphore.
  GpuSemaphore() = default;
  /// @brief Takes over the other semaphore, which is left empty.
  GpuSemaphore(GpuSemaphore&&) noexcept = default;
  /// @brief Destroys this semaphore (the result is ignored), then takes
  ///        over the other.
  /// @return `*this`.
  GpuSemaphore& operator=(GpuSemaphore&&) noexcept;
  /// @brief Calls destroy(). While a kernel runs it logs an error and keeps
  ///        the memory alive until the GPU's kernels have stopped.
  ~GpuSemaphore();

  /// @brief The device view, to pass to a kernel by value.
  /// @return The semaphore's device addresses; valid while this object is
  ///         alive. Empty for an empty semaphore.
  dev::Semaphore handle() const noexcept;
  /// @brief Reads an item's status (acquire: the payload the kernel wrote
  ///        before setting it is visible).
  /// @param item The item, taken modulo the item count.
  /// @return Its status.
  dev::SemStatus status(uint32_t item) const;
  /// @brief Sets an item's status from the host (release store).
  /// @param item The item, taken modulo the item count.
  /// @param s The new status, e.g. dev::SemStatus::Free after consuming it.
  void set_status(uint32_t item, dev::SemStatus s);
  /// @brief The host address of an item's payload.
  /// @param item The item, taken modulo the item count.
  /// @return `payload_bytes` bytes; read them after status() returned the
  ///         status the kernel set after writing them.
  const uint8_t* payload(uint32_t item) const;
  /// @brief Polls (every 50 µs) until an item has the wanted status.
  /// @param item The item, taken modulo the item count.
  /// @param want The status to wait for.
  /// @param timeout_ms How long to wait, in milliseconds.
  /// @return Ok once status(item) == want; Timeout (naming the status seen)
  ///         when it did not within `timeout_ms`.
  Status wait(uint32_t item, dev::SemStatus want, uint32_t timeout_ms) const;
  /// @brief Releases the semaphore's memory.
  /// @return Ok (also for an empty semaphore), or BadState while a
  ///         persistent kernel runs on the GPU: stop the kernel first.
  Status destroy();

 private:
  explicit GpuSemaphore(std::shared_ptr<detail::SemaphoreImpl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::SemaphoreImpl> impl_;
};

}  // namespace gnio
