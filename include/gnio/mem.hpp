// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Memory kinds and DeviceMemory, the owner of one allocation made
/// through a Gpu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

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
  /// @brief Whether this object holds an allocation.
  explicit operator bool() const noexcept { return static_cast<bool>(a_); }

 private:
  std::shared_ptr<detail::Allocation> a_;
};

}  // namespace gnio
