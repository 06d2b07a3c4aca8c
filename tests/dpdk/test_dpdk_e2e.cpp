// SPDX-License-Identifier: Apache-2.0
// End to end: frames the test enqueues into net_ring0's ring go through the
// dpdk backend (mbufs in gnio's external memory), the RX engine (in place
// with ring mem=host, staged copies with mem=gpu) and a persistent kernel,
// which counts packets, bytes and a hash of every byte. GNIO_TEST_GPU picks
// the device (cpu: the emulated one; auto: a CUDA GPU, skipped without one).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "../core/test_support.hpp"
#include "e2e_kernels.hpp"
#include "gnio/dev/headers.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu_queue.hpp"
#include "ring_inject.hpp"

namespace gnio {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<uint8_t> frame_of(uint32_t i) {
  std::vector<uint8_t> f(60 + (i * 131) % 1455);
  for (size_t k = 0; k < f.size(); ++k) f[k] = static_cast<uint8_t>(i * 13 + k * 5 + (k >> 7));
  return f;
}

class DpdkE2e : public ::testing::TestWithParam<const char*> {
 protected:
  RingMem mem() const { return std::string(GetParam()) == "host" ? RingMem::Host : RingMem::Gpu; }
};

// 5000 frames through a pool of 512 mbufs: they only all arrive if the
// engine hands every frame back once the kernel released it.
TEST_P(DpdkE2e, PersistentKernelReceivesRingFramesExactly) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open("dpdk:net_ring0,mbufs=512,rxd=256");
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto rxq = dev->create_rxq(0);
  ASSERT_TRUE(rxq.has_value()) << rxq.status().to_string();
  for (Status s : {rxq->set_num_strides(1024), rxq->set_stride_size(2048), rxq->set_burst_size(e2e_test::kE2eBurst),
                   rxq->set_ring_mem(mem()), rxq->set_gpu(gpu), rxq->start()})
    ASSERT_TRUE(s.is_ok()) << s.to_string();
  auto grxq = GpuRxq::create(gpu, *rxq);
  ASSERT_TRUE(grxq.has_value()) << grxq.status().to_string();
  auto counting = e2e_test::launch_receive_counting(gpu, *grxq, "dpdk_receive");
  ASSERT_TRUE(counting.has_value()) << counting.status().to_string();

  constexpr uint32_t kCount = 5000;
  uint64_t bytes = 0, checksum = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    // A window of frames the kernel has not released yet, below the pool.
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (rxq->stats().released + 128 < i) {
      ASSERT_LT(Clock::now(), until) << "the kernel released " << rxq->stats().released << " of " << i
                                     << " frames and nothing more for 5 s";
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    std::vector<uint8_t> f = frame_of(i);
    ASSERT_TRUE(dpdktest::inject_frame("ETH_RXTX0_net_ring0", f.data(), static_cast<uint32_t>(f.size())))
        << "frame " << i << ": net_ring0's ring or the test's pool is full";
    bytes += f.size();
    checksum += dev::fnv1a64(f.data(), f.size());
  }
  EXPECT_TRUE(test::eventually([&] { return rxq->stats().released >= kCount; }, std::chrono::seconds(10)));
  ASSERT_TRUE(counting->kernel.stop().is_ok());
  const dev::ReceiveTotals t = counting->counted();
  const RxqStats st = rxq->stats();
  EXPECT_EQ(t.packets, kCount);
  EXPECT_EQ(t.bytes, bytes);
  EXPECT_EQ(t.checksum, checksum) << "the kernel read other bytes than the test enqueued";
  EXPECT_EQ(t.bad_release, 0u);
  EXPECT_EQ(st.packets, kCount);
  EXPECT_EQ(st.rx_missed, 0u);
  EXPECT_TRUE(rxq->source_status().is_ok()) << rxq->source_status().to_string();
  ASSERT_TRUE(grxq->destroy().is_ok());
  ASSERT_TRUE(rxq->destroy().is_ok());
}

INSTANTIATE_TEST_SUITE_P(RingMem, DpdkE2e, ::testing::Values("host", "gpu"));

}  // namespace
}  // namespace gnio
