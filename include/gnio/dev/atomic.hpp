// Ring indices shared by the NIC engine (a host thread) and the kernel live
// in memory both can see; every access goes through cuda::atomic_ref so the
// same code is correct on the GPU and on the emulated device.
//
// Loads and stores may target pinned host memory (system scope). Read-modify-
// write operations may not: PCIe does not carry the GPU's atomics to host
// memory, so compare_exchange and fetch_add are for device memory (MemKind
// Gpu or GpuCpu) and are ordered at device scope.
#pragma once

#include <cuda/atomic>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

template <typename T>
using SystemRef = cuda::atomic_ref<T, cuda::thread_scope_system>;

template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_acquire(T* p) {
  return SystemRef<T>(*p).load(cuda::std::memory_order_acquire);
}

template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_relaxed(T* p) {
  return SystemRef<T>(*p).load(cuda::std::memory_order_relaxed);
}

template <typename T>
GNIO_HD GNIO_FORCEINLINE void store_release(T* p, T v) {
  SystemRef<T>(*p).store(v, cuda::std::memory_order_release);
}

template <typename T>
GNIO_HD GNIO_FORCEINLINE void store_relaxed(T* p, T v) {
  SystemRef<T>(*p).store(v, cuda::std::memory_order_relaxed);
}

// Publication through one fence and relaxed accesses (cheaper on the GPU
// than a release store per descriptor). ThreadSanitizer does not model
// standalone fences (GCC refuses them under -fsanitize=thread), so on the
// emulated device in a TSan build the fence is left out and the accesses it
// orders become release stores and acquire loads, which TSan follows.
#if !defined(__CUDA_ARCH__) && defined(__SANITIZE_THREAD__)
#define GNIO_FENCES_AS_ACCESSES 1
#elif !defined(__CUDA_ARCH__) && defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GNIO_FENCES_AS_ACCESSES 1
#endif
#endif

GNIO_HD GNIO_FORCEINLINE void fence_system(cuda::std::memory_order order) {
#ifndef GNIO_FENCES_AS_ACCESSES
  cuda::atomic_thread_fence(order, cuda::thread_scope_system);
#else
  (void)order;
#endif
}

// Orders accesses at device scope only: between threads of one GPU, no
// wait for writes to reach host memory.
GNIO_HD GNIO_FORCEINLINE void fence_device(cuda::std::memory_order order) {
#ifndef GNIO_FENCES_AS_ACCESSES
  cuda::atomic_thread_fence(order, cuda::thread_scope_device);
#else
  (void)order;
#endif
}

// A store ordered by an earlier fence_system(release) or fence_device.
template <typename T>
GNIO_HD GNIO_FORCEINLINE void store_after_fence(T* p, T v) {
#ifndef GNIO_FENCES_AS_ACCESSES
  store_relaxed(p, v);
#else
  store_release(p, v);
#endif
}

// A load ordered by a later fence_system or fence_device (acquire or acq_rel).
template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_before_fence(T* p) {
#ifndef GNIO_FENCES_AS_ACCESSES
  return load_relaxed(p);
#else
  return load_acquire(p);
#endif
}

template <typename T>
using DeviceRef = cuda::atomic_ref<T, cuda::thread_scope_device>;

// Acquire/release between threads of one GPU only (device memory the host
// does not read): no system-scope fence.
template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_acquire_device(T* p) {
  return DeviceRef<T>(*p).load(cuda::std::memory_order_acquire);
}

template <typename T>
GNIO_HD GNIO_FORCEINLINE void store_release_device(T* p, T v) {
  DeviceRef<T>(*p).store(v, cuda::std::memory_order_release);
}

template <typename T>
GNIO_HD GNIO_FORCEINLINE bool compare_exchange(T* p, T& expected, T desired) {
  return DeviceRef<T>(*p).compare_exchange_strong(expected, desired, cuda::std::memory_order_acq_rel,
                                                  cuda::std::memory_order_acquire);
}

template <typename T>
GNIO_HD GNIO_FORCEINLINE T fetch_add_relaxed(T* p, T v) {
  return DeviceRef<T>(*p).fetch_add(v, cuda::std::memory_order_relaxed);
}

}  // namespace gnio::dev
