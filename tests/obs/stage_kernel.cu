// SPDX-License-Identifier: Apache-2.0
// The one launch of the observability tests' kernel (see stage_kernel.hpp).
#include "stage_kernel.hpp"

namespace gnio::obs_test {

Result<PersistentKernel> launch_stage_kernel(const Gpu& gpu, const LaunchConfig& cfg, const StageKernel& kernel) {
  return PersistentKernel::launch(gpu, cfg, kernel);
}

}  // namespace gnio::obs_test
