// SPDX-License-Identifier: Apache-2.0
// Internal state of a GPU context: its allocations (so the TX engine can
// turn a device address into bytes) and the live objects that pin it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "gnio/cuda_info.hpp"
#include "gnio/mem.hpp"
#include "gnio/status.hpp"

namespace gnio::detail {

struct GpuImpl;

struct Allocation {
  std::shared_ptr<GpuImpl> owner;
  void* dev = nullptr;
  void* host = nullptr;
  size_t size = 0;
  MemKind kind = MemKind::Gpu;
  bool registered = false;  // host memory someone else owns, mapped by register_host()
  ~Allocation();
};

// A registered memory range, as the TX engine needs it.
struct Region {
  uint64_t dev_base = 0;
  size_t size = 0;
  uint8_t* host = nullptr;  // nullptr: device memory, copy it out
  MemKind kind = MemKind::Gpu;
};

struct GpuImpl : std::enable_shared_from_this<GpuImpl> {
  std::string bus_id;
  int ordinal = -1;
  bool emulated = false;
  CudaDeviceInfo info;

  std::atomic<int> live_queues{0};   // Ethernet queues started with this GPU as datapath
  std::atomic<int> live_handles{0};  // GpuRxq / GpuTxq / GpuSemaphore
  std::atomic<int> live_kernels{0};  // persistent kernels not yet stopped
  std::atomic<bool> closed{false};

  Result<DeviceMemory> alloc(size_t bytes, MemKind kind, size_t align);
  // Maps host memory that someone else owns (a backend's frame pool) into
  // the GPU: pinned and mapped (cudaHostRegister), the identity on the
  // emulated device. The memory stays mapped until the last DeviceMemory
  // of the same range is gone; it is never freed here.
  Result<DeviceMemory> register_host(void* host, size_t bytes);
  // The registered range holding [addr, addr + len), if any.
  bool resolve(uint64_t addr, uint32_t len, Region& out) const;
  // Makes this thread's CUDA calls target this device (no-op when emulated).
  Status bind_thread() const;
  // Copies device bytes to the host and waits (DeviceMemory::copy_to_host).
  Status copy_to_host(const void* dev, void* dst, size_t bytes, const std::string& what);

  // Keeps an object a running kernel may still use alive until the GPU's
  // kernels have all stopped (teardown out of order must not free memory
  // under a kernel).
  void defer(std::shared_ptr<void> keep_alive);
  void release_deferred();

  void add_region(const Region& r);
  void remove_region(uint64_t dev_base);

  ~GpuImpl();

 private:
#if GNIO_HAVE_CUDA
  // Zeroes fresh device memory and waits for it, on a non-blocking stream
  // of its own: a plain cudaMemset runs on the legacy default stream, which
  // kernels and engines on non-blocking streams do not wait for, so they
  // could read what the last owner of the memory left there.
  Status zero_device_memory(void* dev, size_t bytes, const std::string& what);
  cudaStream_t zero_stream_ = nullptr;  // guarded by mu_
  // Copies to the host have a stream and a lock of their own: a snapshot of
  // a large table must not hold mu_, which the TX engine takes per burst.
  std::mutex copy_mu_;
  cudaStream_t copy_stream_ = nullptr;  // guarded by copy_mu_
#endif

  // Drops one registration of `host`; unmaps it after the last one.
  void unregister_host(void* host);
  friend struct Allocation;

  mutable std::mutex mu_;
  std::map<uint64_t, Region> regions_;
  std::map<void*, int> host_registrations_;  // register_host() count per range
  std::vector<std::shared_ptr<void>> deferred_;
};

}  // namespace gnio::detail
