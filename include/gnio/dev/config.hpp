// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Compilation shims that let device code compile with nvcc for the
/// GPU and with a plain C++ compiler for the emulated device (CPU threads).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
/// @brief Marks a function callable from host and device code
/// (`__host__ __device__` under nvcc, nothing in a plain C++ build).
#define GNIO_HD __host__ __device__
/// @brief Marks a device-only function or variable (`__device__` under nvcc,
/// nothing in a plain C++ build).
#define GNIO_DEVICE __device__
/// @brief Forces inlining: `__forceinline__` under nvcc,
/// `inline __attribute__((always_inline))` otherwise.
#define GNIO_FORCEINLINE __forceinline__
#else
#define GNIO_HD
#define GNIO_DEVICE
#define GNIO_FORCEINLINE inline __attribute__((always_inline))
#endif

#if defined(__CUDA_ARCH__)
#define GNIO_DEVICE_PASS 1
#else
/// @brief 1 while compiling the GPU side of a CUDA translation unit
/// (`__CUDA_ARCH__` defined), 0 in nvcc's host pass and in plain C++ builds.
#define GNIO_DEVICE_PASS 0
#endif

namespace gnio {

/// @brief How many threads cooperate in one device-API call.
///
/// Every thread of the scope must make the same call with the same
/// arguments (the call may synchronise the scope). On the emulated device a
/// block is one CPU thread, so Warp and Block degrade to Thread.
enum class Scope : uint8_t {
  Thread,  ///< One thread calls alone.
  Warp,    ///< The 32 threads of a warp call together.
  Block,   ///< All threads of the block call together.
};

/// @brief Calls a template on the scope chosen at run time: `f.template
/// operator()<S>()` for S == s, so that one generic lambda
/// (`[&]<Scope S>() { ... }`) builds a kernel of each scope.
/// @tparam F A callable with a `template <Scope S>` call operator whose
///         three instances return one type.
/// @param s The scope.
/// @param f The callable.
/// @return What the instance for `s` returned.
template <typename F>
auto with_scope(Scope s, F&& f) {
  switch (s) {
    case Scope::Warp: return f.template operator()<Scope::Warp>();
    case Scope::Block: return f.template operator()<Scope::Block>();
    case Scope::Thread: break;
  }
  return f.template operator()<Scope::Thread>();
}

}  // namespace gnio
