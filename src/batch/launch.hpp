// SPDX-License-Identifier: Apache-2.0
// The one piece of batch receive that nvcc compiles: the kernel's launch.
#pragma once

#include "gnio/dev/batch.hpp"
#include "gnio/persistent_kernel.hpp"

namespace gnio::batch {

// PersistentKernel::launch() of dev::BatchKernel (compiled by nvcc with CUDA,
// as C++ for the emulated device without it).
Result<PersistentKernel> launch_batch_kernel(const Gpu& gpu, const LaunchConfig& cfg, const dev::BatchKernel& k);

}  // namespace gnio::batch
