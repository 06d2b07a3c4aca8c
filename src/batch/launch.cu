// SPDX-License-Identifier: Apache-2.0
#include "launch.hpp"

namespace gnio::batch {

Result<PersistentKernel> launch_batch_kernel(const Gpu& gpu, const LaunchConfig& cfg, const dev::BatchKernel& k) {
  return PersistentKernel::launch(gpu, cfg, k);
}

}  // namespace gnio::batch
