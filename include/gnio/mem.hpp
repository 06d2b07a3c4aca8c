// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Memory kinds and DeviceMemory, the owner of one allocation made
/// through a Gpu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "gnio/status.hpp"

namespace gnio {

/// @brief Where an allocation lives and who can touch it.
///
/// On the emulated device every kind is ordinary host memory that both
/// sides address directly.
enum class MemKind : uint8_t {
  /// Device memory (cudaMalloc): fastest for the kernel, not CPU-accessible
  /// (DeviceMemory::host_ptr() is nullptr).
  Gpu,
  /// Device memory the CPU may also read and write: managed memory
  /// (cudaMallocManaged) with the GPU as preferred location. Needs
  /// CudaDeviceInfo::concurrent_managed_access.
  GpuCpu,
  /// Pinned host memory mapped into the GPU (cudaHostAlloc, mapped): the
  /// kernel reads and writes it over PCIe; loads and stores only, no
  /// device atomics (see dev/atomic.hpp).
  CpuGpu,
};

/// @brief The lower-case name of a memory kind.
/// @param kind The kind.
/// @return "gpu", "gpu_cpu" or "cpu_gpu"; "unknown" outside the enumeration.
std::string_view mem_kind_name(MemKind kind) noexcept;

namespace detail {
struct Allocation;
}

/// @brief Owns one allocation made through Gpu::alloc() (or inside the
/// library for rings, counters and semaphores).
///
/// The memory is zeroed when allocated. Copies share the allocation; it is
/// freed when the last copy is destroyed (including copies held by a
/// BufArr or a queue). The allocation keeps the internals of its GPU
/// context alive, so it may outlive the Gpu object that made it. A
/// default-constructed DeviceMemory holds nothing. Host only.
class DeviceMemory {
 public:
  /// @brief Holds nothing: every accessor returns nullptr or 0.
  DeviceMemory() = default;
  /// @brief Wraps an allocation made inside the library.
  /// @param a The allocation; not for application code (Gpu::alloc() makes
  ///        DeviceMemory).
  explicit DeviceMemory(std::shared_ptr<detail::Allocation> a) : a_(std::move(a)) {}

  /// @brief The address kernels use.
  /// @return The device address (on the emulated device, the same as
  ///         host_ptr()); nullptr when empty.
  void* device_ptr() const noexcept;
  /// @brief The address the CPU uses.
  /// @return The host address; nullptr for MemKind::Gpu on a real GPU and
  ///         when empty.
  void* host_ptr() const noexcept;
  /// @brief The size asked for.
  /// @return Bytes; 0 when empty.
  size_t size() const noexcept;
  /// @brief The kind of memory.
  /// @return The kind asked for; MemKind::Gpu when empty.
  MemKind kind() const noexcept;
  /// @brief Copies bytes of the allocation into host memory, also while
  ///        kernels run: for MemKind::Gpu, whose bytes the CPU cannot
  ///        address, and for a snapshot of any kind.
  ///
  /// On a CUDA GPU the copy runs on a non-blocking stream of the library
  /// (a persistent kernel's stream neither waits for it nor holds it up)
  /// and the call waits for it; on the emulated device it is a memcpy.
  /// Bytes a running kernel writes meanwhile may be seen old or new, each
  /// aligned word whole: the reader of a snapshot checks what it needs.
  /// @param offset First byte of the allocation to copy.
  /// @param dst Host memory of at least `bytes` bytes (pinned memory copies
  ///        faster; any is accepted).
  /// @param bytes How many bytes; 0 copies nothing.
  /// @return Ok; InvalidValue when [offset, offset + bytes) is outside the
  ///         allocation or dst is nullptr; BadState when empty; Driver (or
  ///         another mapped CUDA code) when the copy fails.
  Status copy_to_host(size_t offset, void* dst, size_t bytes) const;
  /// @brief Whether this object holds an allocation.
  explicit operator bool() const noexcept { return static_cast<bool>(a_); }

 private:
  std::shared_ptr<detail::Allocation> a_;
};

}  // namespace gnio
