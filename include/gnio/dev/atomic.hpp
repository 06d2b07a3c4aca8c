// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Atomic accesses to memory the host engine and the kernel share.
///
/// Ring indices shared by the NIC engine (a host thread) and the kernel
/// live in memory both can see; every access goes through cuda::atomic_ref
/// so the same code is correct on the GPU and on the emulated device.
///
/// Loads and stores may target pinned host memory (system scope).
/// Read-modify-write operations may not: PCIe does not carry the GPU's
/// atomics to host memory, so compare_exchange() and fetch_add_relaxed()
/// are for device memory (MemKind::Gpu or MemKind::GpuCpu) and are ordered
/// at device scope. `p` must be aligned to sizeof(T) everywhere.
#pragma once

#include <cuda/atomic>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

/// @brief An atomic reference ordered at system scope (GPU and host).
/// @tparam T A trivially copyable type of 4 or 8 bytes.
template <typename T>
using SystemRef = cuda::atomic_ref<T, cuda::thread_scope_system>;

/// @brief Acquire load at system scope: later reads see what the writer
///        stored before its release.
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word, in memory the other side can see.
/// @return The value loaded.
template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_acquire(T* p) {
  return SystemRef<T>(*p).load(cuda::std::memory_order_acquire);
}

/// @brief Relaxed atomic load at system scope (no ordering).
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word.
/// @return The value loaded.
template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_relaxed(T* p) {
  return SystemRef<T>(*p).load(cuda::std::memory_order_relaxed);
}

/// @brief Release store at system scope: what this thread wrote before is
///        visible to whoever acquires the stored value.
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word, in memory the other side can see.
/// @param v The value to store.
template <typename T>
GNIO_HD GNIO_FORCEINLINE void store_release(T* p, T v) {
  SystemRef<T>(*p).store(v, cuda::std::memory_order_release);
}

/// @brief Relaxed atomic store at system scope (no ordering).
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word.
/// @param v The value to store.
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

/// @brief A fence at system scope, for publication through one fence and
///        relaxed accesses (store_after_fence(), load_before_fence()).
///
/// Left out in a ThreadSanitizer build of the emulated device, where the
/// accesses it orders become release stores and acquire loads instead.
/// @param order The ordering (release before publishing stores, acquire
///        after consuming loads, or acq_rel).
GNIO_HD GNIO_FORCEINLINE void fence_system(cuda::std::memory_order order) {
#ifndef GNIO_FENCES_AS_ACCESSES
  cuda::atomic_thread_fence(order, cuda::thread_scope_system);
#else
  (void)order;
#endif
}

/// @brief A fence at device scope only: orders accesses between threads of
///        one GPU, with no wait for writes to reach host memory.
///
/// Left out in a ThreadSanitizer build of the emulated device, as
/// fence_system() is.
/// @param order The ordering.
GNIO_HD GNIO_FORCEINLINE void fence_device(cuda::std::memory_order order) {
#ifndef GNIO_FENCES_AS_ACCESSES
  cuda::atomic_thread_fence(order, cuda::thread_scope_device);
#else
  (void)order;
#endif
}

/// @brief A store ordered by an earlier fence_system() or fence_device()
///        with release order (a release store where the fence is left out).
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word.
/// @param v The value to store.
template <typename T>
GNIO_HD GNIO_FORCEINLINE void store_after_fence(T* p, T v) {
#ifndef GNIO_FENCES_AS_ACCESSES
  store_relaxed(p, v);
#else
  store_release(p, v);
#endif
}

/// @brief A load ordered by a later fence_system() or fence_device() with
///        acquire or acq_rel order (an acquire load where the fence is left out).
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word.
/// @return The value loaded.
template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_before_fence(T* p) {
#ifndef GNIO_FENCES_AS_ACCESSES
  return load_relaxed(p);
#else
  return load_acquire(p);
#endif
}

/// @brief An atomic reference ordered at device scope (threads of one GPU).
/// @tparam T A trivially copyable type of 4 or 8 bytes.
template <typename T>
using DeviceRef = cuda::atomic_ref<T, cuda::thread_scope_device>;

/// @brief Acquire load between threads of one GPU only (device memory the
///        host does not read): no system-scope fence.
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word, in device memory.
/// @return The value loaded.
template <typename T>
GNIO_HD GNIO_FORCEINLINE T load_acquire_device(T* p) {
  return DeviceRef<T>(*p).load(cuda::std::memory_order_acquire);
}

/// @brief Release store between threads of one GPU only.
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word, in device memory.
/// @param v The value to store.
template <typename T>
GNIO_HD GNIO_FORCEINLINE void store_release_device(T* p, T v) {
  DeviceRef<T>(*p).store(v, cuda::std::memory_order_release);
}

/// @brief Strong compare-and-swap at device scope (acq_rel on success,
///        acquire on failure). Device memory only.
/// @tparam T A trivially copyable type of 4 or 8 bytes.
/// @param p The word, in device memory (MemKind::Gpu or MemKind::GpuCpu).
/// @param expected The value `*p` must hold; on failure, updated to the
///        value it held.
/// @param desired The value to store when `*p` held `expected`.
/// @return True when the swap happened.
template <typename T>
GNIO_HD GNIO_FORCEINLINE bool compare_exchange(T* p, T& expected, T desired) {
  return DeviceRef<T>(*p).compare_exchange_strong(expected, desired, cuda::std::memory_order_acq_rel,
                                                  cuda::std::memory_order_acquire);
}

/// @brief Relaxed atomic add at device scope. Device memory only.
/// @tparam T An integer type of 4 or 8 bytes.
/// @param p The word, in device memory (MemKind::Gpu or MemKind::GpuCpu).
/// @param v The amount to add.
/// @return The value before the add.
template <typename T>
GNIO_HD GNIO_FORCEINLINE T fetch_add_relaxed(T* p, T v) {
  return DeviceRef<T>(*p).fetch_add(v, cuda::std::memory_order_relaxed);
}

}  // namespace gnio::dev
