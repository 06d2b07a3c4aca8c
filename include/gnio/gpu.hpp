// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Layer 2: one context per GPU, opened from the GPU's PCIe bus id,
/// its memory allocations and packet-buffer pools.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/cuda_info.hpp"
#include "gnio/dev/bufarr.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

namespace gnio {

namespace detail {
struct GpuImpl;
}

/// @brief A packet-buffer pool: `count()` elements of `elem_size()` bytes,
/// contiguous, in one memory kind.
///
/// Made by Gpu::create_buf_arr() and registered with a queue before the
/// queue starts: EthRxq::set_packet_buffer() (count and element size equal
/// to the ring's strides) or EthTxq::register_buffer() (a pool the kernel
/// sends from). Copies share the memory, which is freed when the last copy
/// (including the queue's) is gone. Host only; kernels use handle().
class BufArr {
 public:
  /// @brief An empty pool (count() 0, no memory).
  BufArr() = default;
  /// @brief The number of elements.
  /// @return Elements; 0 for an empty pool.
  uint32_t count() const noexcept { return count_; }
  /// @brief The size of one element.
  /// @return Bytes, a power of two in 64..65536; 0 for an empty pool.
  uint32_t elem_size() const noexcept { return elem_size_; }
  /// @brief The memory kind of the pool.
  /// @return The kind it was created with.
  MemKind kind() const noexcept { return mem_.kind(); }
  /// @brief The allocation holding the elements (element i at byte
  ///        i * elem_size()).
  /// @return The pool's memory.
  const DeviceMemory& memory() const noexcept { return mem_; }
  /// @brief The device view of the pool, to pass to a kernel by value.
  /// @return Base device address, element size and count; valid while this
  ///         pool (or a copy of it) is alive.
  dev::BufArr handle() const noexcept;

 private:
  friend class Gpu;
  BufArr(DeviceMemory mem, uint32_t count, uint32_t elem_size)
      : mem_(std::move(mem)), count_(count), elem_size_(elem_size) {}
  DeviceMemory mem_;
  uint32_t count_ = 0;
  uint32_t elem_size_ = 0;
};

/// @brief The context of one GPU (or of the emulated device): the datapath
/// that queues, GPU handles and persistent kernels are attached to.
///
/// Lifecycle: open() → alloc() / create_buf_arr() → give it to queues
/// (EthRxq::set_gpu(), EthTxq::set_gpu()) before they start → GPU handles
/// (GpuRxq, GpuTxq, GpuSemaphore) → PersistentKernel::launch(); tear down
/// in reverse (kernel, handles, queues), then close(). close() while a
/// kernel, handle or started queue still uses the context returns
/// Errc::BadState. Move-only; host only.
class Gpu {
 public:
  /// @brief Opens the context of one device.
  ///
  /// On a CUDA GPU the calling thread's current device is set to it
  /// (cudaSetDevice). There is one context per device, "cpu" included:
  /// opening a device that already has an open context returns BadState
  /// (pass the first Gpu around, or close() it first).
  /// @param bus_id A PCIe bus id in any form normalize_bus_id() accepts
  ///        ("0000:06:00.0", as cudaDeviceGetPCIBusId and nvidia-smi print
  ///        it), "auto" (the first CUDA device), or "cpu:N" for emulated
  ///        device N, 0..63 (the same kernel code on CPU threads; each its
  ///        own context, memory, kernels and counters); "cpu" is "cpu:0".
  /// @return The context, or: NotFound for "auto" without a CUDA device;
  ///         InvalidValue for text that is not a bus id, or a bus id that
  ///         matches no CUDA device (the message lists those present);
  ///         Driver when the CUDA runtime cannot enumerate devices or
  ///         select this one; BadState when the device already has an open
  ///         context.
  static Result<Gpu> open(std::string_view bus_id);

  /// @brief Whether open() would take `name` for an emulated device.
  /// @param name "cpu" or "cpu:N" (a valid N or not), or anything else.
  /// @return True for "cpu" and "cpu:" followed by anything.
  static bool names_emulated(std::string_view name) noexcept {
    return name == "cpu" || name.substr(0, 4) == "cpu:";
  }

  /// @brief Splits and checks a `--gpu` list without opening a device.
  ///
  /// Checks the text of each entry only: whether a bus id names a present
  /// CUDA device is open()'s question.
  /// @param list Comma-separated open() names ("0000:06:00.0,cpu:1"), or
  ///        "all" alone.
  /// @return The entries in the order given ("all" as the one entry), or
  ///         InvalidValue naming the entry that is empty, is no bus id,
  ///         "auto" or valid "cpu:N", or is "all" beside others (a
  ///         device named twice is open_list()'s BadState).
  static Result<std::vector<std::string>> parse_list(std::string_view list);

  /// @brief Opens several devices, one context each, in the order given.
  ///
  /// What `--gpu A,B` asks for: any mix of bus ids, "auto" and emulated
  /// devices ("auto,cpu:1"); "all" is every CUDA device, in ordinal order.
  /// @param list Comma-separated open() names, or "all".
  /// @return The contexts, or: InvalidValue for an empty list or entry, or a
  ///         device named twice; NotFound for "all" without a CUDA device;
  ///         any error of open(), naming the entry (contexts opened before
  ///         it are closed again).
  static Result<std::vector<Gpu>> open_list(std::string_view list);

  /// @brief Opens the context of one device, or the emulated device where
  ///        "auto" opens no CUDA device (none present, or the driver
  ///        refused): what a program that runs anywhere asks for.
  /// The fallback is logged as a warning with open("auto")'s error.
  /// @param bus_id As for open().
  /// @return As open(); for "auto" that opened no CUDA device, the
  ///         emulated device's context.
  static Result<Gpu> open_or_emulated(std::string_view bus_id);

  /// @brief No context: every call but close() returns BadState or an empty value.
  Gpu() = default;
  /// @brief Takes over the context of `other`, which is left empty.
  Gpu(Gpu&&) noexcept = default;
  /// @brief Closes this context (the result is ignored), then takes over
  ///        that of the other Gpu.
  /// @return `*this`.
  Gpu& operator=(Gpu&&) noexcept;
  /// @brief Calls close(). Destroyed out of order, it logs an error; the
  ///        memory stays alive until the queues, handles and kernels using
  ///        it are gone.
  ~Gpu();

  /// @brief Whether this is an emulated device ("cpu", "cpu:N").
  /// @return True on the emulated device; false on a CUDA GPU or when empty.
  bool emulated() const noexcept;
  /// @brief The normalised bus id of the device.
  /// @return "dddd:bb:dd.f"; "cpu" for emulated device 0, "cpu:N" for the
  ///         others; "" when empty.
  const std::string& bus_id() const noexcept;
  /// @brief The CUDA device ordinal.
  /// @return The ordinal; -1 when emulated or empty.
  int ordinal() const noexcept;
  /// @brief What the CUDA runtime said about the device when it was opened.
  /// @return The device's properties; on the emulated device a description
  ///         of it (every host-memory capability on, no compute capability).
  const CudaDeviceInfo& info() const noexcept;

  /// @brief Allocates zeroed memory of one kind on this device.
  /// @param bytes Size, at least 1.
  /// @param kind Where the memory lives (MemKind).
  /// @param align Alignment of the start, a power of two. Honoured on the
  ///        emulated device; on a CUDA GPU the runtime's own alignment
  ///        applies (at least 256 bytes for device memory, a page for
  ///        pinned host memory), whatever is asked.
  /// @return The allocation, or: InvalidValue for 0 bytes or an alignment
  ///         that is not a power of two; NotSupported for MemKind::GpuCpu on
  ///         a GPU without concurrent managed access; NoMemory when the
  ///         memory is not available; Driver (or another mapped CUDA code)
  ///         when the CUDA call fails; BadState on an empty or closed Gpu.
  Result<DeviceMemory> alloc(size_t bytes, MemKind kind, size_t align = 256);
  /// @brief Allocates a packet-buffer pool of `count` elements of
  ///        `elem_size` bytes, asking alloc() for an alignment of
  ///        max(4096, elem_size).
  /// @param kind Where the pool lives.
  /// @param count Elements, at least 1 (for an RX ring: its number of strides).
  /// @param elem_size Bytes per element, a power of two in 64..65536 (for an
  ///        RX ring: its stride size).
  /// @return The pool, or InvalidValue for a count or element size out of
  ///         range, or any error of alloc().
  Result<BufArr> create_buf_arr(MemKind kind, uint32_t count, uint32_t elem_size);

  /// @brief Releases the context, so that the device can be opened again.
  ///
  /// Allocations still alive keep what they need of the context until
  /// they are freed.
  /// @return Ok (also for an empty or already closed Gpu), or BadState
  ///         while persistent kernels, GPU handles or started queues use
  ///         it: stop kernels, destroy handles, then queues, then close.
  Status close();

  /// @brief The implementation, for gnio's own layers.
  /// @return The shared implementation; nullptr when empty.
  std::shared_ptr<detail::GpuImpl> impl() const noexcept { return impl_; }

 private:
  explicit Gpu(std::shared_ptr<detail::GpuImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::GpuImpl> impl_;
};

}  // namespace gnio
