// Memory kinds and their RAII owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace gnio {

// Gpu: device memory (fastest for the kernel, not CPU-accessible).
// GpuCpu: device memory the CPU may also read/write (managed memory pinned
//   to the device; GDRCopy-style mapping in DOCA's terms).
// CpuGpu: pinned host memory mapped into the GPU (the kernel reads it over PCIe).
enum class MemKind : uint8_t { Gpu, GpuCpu, CpuGpu };

std::string_view mem_kind_name(MemKind kind) noexcept;

namespace detail {
struct Allocation;
}

// Owns one allocation made through a Gpu. Move-only; freed on destruction.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::shared_ptr<detail::Allocation> a) : a_(std::move(a)) {}

  // Address the kernel uses.
  void* device_ptr() const noexcept;
  // Address the CPU uses; nullptr for MemKind::Gpu on a real GPU.
  void* host_ptr() const noexcept;
  size_t size() const noexcept;
  MemKind kind() const noexcept;
  explicit operator bool() const noexcept { return static_cast<bool>(a_); }

 private:
  std::shared_ptr<detail::Allocation> a_;
};

}  // namespace gnio
