// Compilation shims that let device code compile with nvcc for the GPU and
// with a plain C++ compiler for the emulated device (CPU threads).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GNIO_HD __host__ __device__
#define GNIO_DEVICE __device__
#define GNIO_FORCEINLINE __forceinline__
#else
#define GNIO_HD
#define GNIO_DEVICE
#define GNIO_FORCEINLINE inline __attribute__((always_inline))
#endif

// True while compiling the GPU side of a CUDA translation unit.
#if defined(__CUDA_ARCH__)
#define GNIO_DEVICE_PASS 1
#else
#define GNIO_DEVICE_PASS 0
#endif

namespace gnio {

// How many threads cooperate in one device-API call. On the emulated
// device a block is one CPU thread, so Warp and Block degrade to Thread.
enum class Scope : uint8_t { Thread, Warp, Block };

}  // namespace gnio
