// SPDX-License-Identifier: Apache-2.0
// A persistent kernel's grid sized to its device (LaunchConfig::grid = 0)
// and a grid larger than the device holds at once refused, on the device
// named by GNIO_TEST_GPU (the emulated device by default).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "../support/gpu_choice.hpp"
#include "gnio/dev/atomic.hpp"
#include "gnio/persistent_kernel.hpp"
#include "test_support.hpp"

using namespace gnio;

namespace {

// Each block counts itself once, then idles until stopped: the count is
// the number of blocks that ran at once.
struct CountBlocks {
  uint64_t* started;  // GpuCpu
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    if (dev::thread_index() == 0) dev::fetch_add_relaxed(started, uint64_t{1});
    while (ctx.running()) ctx.heartbeat();
  }
};

LaunchConfig grid_of(uint32_t grid) {
  LaunchConfig c;
  c.grid = grid;
  c.block = 128;
  c.name = "count-blocks";
  return c;
}

TEST(PersistentKernel, GridZeroIsSizedToTheDeviceAndEveryBlockRuns) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto started = gpu.alloc(sizeof(uint64_t), MemKind::GpuCpu);
  ASSERT_TRUE(started.has_value()) << started.status().to_string();
  std::memset(started->host_ptr(), 0, sizeof(uint64_t));
  auto k = PersistentKernel::launch(gpu, grid_of(0), CountBlocks{static_cast<uint64_t*>(started->device_ptr())});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  const uint32_t grid = k->config().grid;
  if (gpu.emulated())
    EXPECT_EQ(grid, std::clamp(std::thread::hardware_concurrency(), 1u, 256u));
  else
    EXPECT_GE(grid, static_cast<uint32_t>(gpu.info().multiprocessors)) << "at least one block per multiprocessor";
  const auto* n = static_cast<const uint64_t*>(started->host_ptr());
  EXPECT_TRUE(gnio::test::eventually([&] { return dev::load_acquire(n) == grid; }))
      << dev::load_acquire(n) << " of " << grid << " blocks started";
  ASSERT_TRUE(k->stop());
  EXPECT_EQ(dev::load_acquire(n), grid);
  EXPECT_EQ(k->counters().size(), grid);
}

TEST(PersistentKernel, MoreBlocksThanTheDeviceHoldsAtOnceAreRefused) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto started = gpu.alloc(sizeof(uint64_t), MemKind::GpuCpu);
  ASSERT_TRUE(started.has_value());
  std::memset(started->host_ptr(), 0, sizeof(uint64_t));
  const CountBlocks kernel{static_cast<uint64_t*>(started->device_ptr())};
  uint32_t most = 256;  // the emulated device: a CPU thread per block
  if (!gpu.emulated()) {
    auto sized = PersistentKernel::launch(gpu, grid_of(0), kernel);
    ASSERT_TRUE(sized.has_value()) << sized.status().to_string();
    most = sized->config().grid;
    ASSERT_TRUE(sized->stop());
  }
  auto k = PersistentKernel::launch(gpu, grid_of(most + 1), kernel);
  ASSERT_FALSE(k.has_value());
  EXPECT_EQ(k.status().code(), Errc::InvalidValue);
  EXPECT_NE(k.status().message().find(std::to_string(most)), std::string::npos) << k.status().message();
}

}  // namespace
