// Layer 2: one context per GPU, created from the GPU's PCIe bus-id string.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gnio/cuda_info.hpp"
#include "gnio/dev/bufarr.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

namespace gnio {

namespace detail {
struct GpuImpl;
}

// A packet-buffer pool: `count` elements of `elem_size` bytes in one memory
// kind, registered with a queue before the queue starts.
class BufArr {
 public:
  BufArr() = default;
  uint32_t count() const noexcept { return count_; }
  uint32_t elem_size() const noexcept { return elem_size_; }
  MemKind kind() const noexcept { return mem_.kind(); }
  const DeviceMemory& memory() const noexcept { return mem_; }
  dev::BufArr handle() const noexcept;

 private:
  friend class Gpu;
  BufArr(DeviceMemory mem, uint32_t count, uint32_t elem_size)
      : mem_(std::move(mem)), count_(count), elem_size_(elem_size) {}
  DeviceMemory mem_;
  uint32_t count_ = 0;
  uint32_t elem_size_ = 0;
};

class Gpu {
 public:
  // bus_id: a PCIe bus id ("0000:06:00.0", as cudaDeviceGetPCIBusId or
  // nvidia-smi print it), "auto" (the first CUDA device) or "cpu" (the
  // emulated device: the same kernel code on CPU threads).
  // One context per device: opening a device that already has an open
  // context returns BadState (close the first, or share it).
  static Result<Gpu> open(std::string_view bus_id);

  Gpu() = default;
  Gpu(Gpu&&) noexcept = default;
  Gpu& operator=(Gpu&&) noexcept;
  ~Gpu();

  bool emulated() const noexcept;
  const std::string& bus_id() const noexcept;
  int ordinal() const noexcept;  // CUDA ordinal; -1 when emulated
  const CudaDeviceInfo& info() const noexcept;

  // align must be a power of two.
  Result<DeviceMemory> alloc(size_t bytes, MemKind kind, size_t align = 256);
  // elem_size must be a power of two between 64 and 65536.
  Result<BufArr> create_buf_arr(MemKind kind, uint32_t count, uint32_t elem_size);

  // Releases the context. BadState while queues, handles or kernels on it
  // are alive: tear those down first.
  Status close();

  std::shared_ptr<detail::GpuImpl> impl() const noexcept { return impl_; }

 private:
  explicit Gpu(std::shared_ptr<detail::GpuImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::GpuImpl> impl_;
};

}  // namespace gnio
