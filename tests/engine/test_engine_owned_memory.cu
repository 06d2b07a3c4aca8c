// SPDX-License-Identifier: Apache-2.0
// Frames in memory the backend owns, into a ring in host memory (the
// descriptors point into the backend's buffers) and in device memory
// (copied, the buffers handed back at once): every frame once and in
// order, empty frames dropped, long ones cut or spanning strides, and a
// wire's drops at a full ring counted exactly.
#include <gtest/gtest.h>

#include "engine_fixtures.hpp"

using namespace gnio;
using namespace gnio::test;

namespace {

class BackendMemory : public ::testing::TestWithParam<RingMem> {};

// Frames in backend memory (InPlace and Dma delivery). mem=host: the descriptors point into it
// (no copy); mem=gpu: copied into the device ring and handed back at once.
TEST_P(BackendMemory, EveryFrameOnceInOrderAndEveryBufferBackInOrder) {
  GNIO_OPEN_TEST_GPU(gpu);
  const RingMem mem = GetParam();
  OwnedOptions o;
  o.count = 6000;
  OwnedBackend* be = nullptr;
  EthDevice dev = gnio::test::owned_device(o, be);
  auto q = dev.create_rxq(0);
  ASSERT_TRUE(q.has_value());
  start_queue(gpu, *q, mem, 256);
  Received run;
  record(gpu, *q, o.count, [&] { return q->at_end(); }, run);
  if (mem == RingMem::Host) {
    EXPECT_EQ(run.ring_data, be->pool()) << "descriptors must point into the backend's memory";
  } else {
    EXPECT_NE(run.ring_data, be->pool());
  }
  expect_every_owned_frame(run, *be, *q, o.count);
  expect_every_buffer_back(*be, o.count);
}

// Empty frames are dropped as `empty`; longer frames are cut to the
// queue's max packet size and flagged; frames of 64 KiB span 32 strides.
TEST_P(BackendMemory, EmptyFramesDroppedLongFramesCutOrSpanningStrides) {
  GNIO_OPEN_TEST_GPU(gpu);
  const RingMem mem = GetParam();
  for (uint32_t max_packet : {4000u, 65536u}) {
    OwnedOptions o;
    o.count = 3000;
    o.buffers = 128;
    o.buffer_size = 65536;
    o.empty_every = 7;
    o.long_every = 11;
    o.long_size = 65000;
    OwnedBackend* be = nullptr;
    EthDevice dev = gnio::test::owned_device(o, be);
    auto q = dev.create_rxq(0);
    ASSERT_TRUE(q.has_value());
    start_queue(gpu, *q, mem, 128, max_packet);
    Received run;
    uint64_t empties = 0, longs = 0;
    std::vector<uint64_t> delivered;  // source index of each descriptor
    for (uint64_t i = 0; i < o.count; ++i) {
      const auto f = be->frame(i);
      if (f.empty()) {
        ++empties;
      } else {
        delivered.push_back(i);
        longs += f.size() > max_packet;
      }
    }
    record(gpu, *q, o.count, [&] { return q->at_end(); }, run);
    for (size_t d = 0; d < delivered.size(); ++d) {
      expect_frame(run.seen[d], be->frame(delivered[d]), max_packet, delivered[d]);
      if (::testing::Test::HasFailure()) break;
    }
    EXPECT_EQ(run.seen[delivered.size()].times, 0u);
    EXPECT_EQ(run.stats.offered, o.count);
    EXPECT_EQ(run.stats.packets, delivered.size());
    EXPECT_EQ(run.stats.dropped[static_cast<size_t>(DropReason::Empty)], empties);
    EXPECT_EQ(run.stats.packets + dropped_total(run.stats), run.stats.offered);
    EXPECT_EQ(run.stats.truncated, longs) << "max packet size " << max_packet;
    EXPECT_EQ(longs > 0, max_packet < o.long_size);
    EXPECT_TRUE(eventually([&] { return be->released() == o.count; }));
    EXPECT_EQ(be->out_of_order(), 0u);
  }
}

// A wire does not wait: frames that find the ring full are counted under
// ring_full (rx_missed), exactly, and still go back to the backend in order.
TEST_P(BackendMemory, WireDropsAtAFullRingAreCountedExactlyAndReturned) {
  GNIO_OPEN_TEST_GPU(gpu);
  const RingMem mem = GetParam();
  OwnedOptions o;
  o.count = 4000;
  o.buffers = 4096;
  o.buffer_size = 2048;
  o.spec = "synthetic:size=64-1000,seed=4";
  o.wire = true;
  OwnedBackend* be = nullptr;
  EthDevice dev = gnio::test::owned_device(o, be);
  auto q = dev.create_rxq(0);
  ASSERT_TRUE(q.has_value());
  start_queue(gpu, *q, mem, 64);
  auto go = gpu.alloc(sizeof(uint32_t), MemKind::GpuCpu);
  ASSERT_TRUE(go.has_value());
  Received run;
  // The kernel waits until the source is exhausted: the 64-descriptor ring
  // fills and the rest arrives at a full ring.
  record(gpu, *q, o.count, [&] { return q->at_end(); }, run, static_cast<uint32_t*>(go->device_ptr()),
         [](EthRxq& rxq) { eventually([&] { return rxq.stats().offered == 4000; }); });
  EXPECT_EQ(run.stats.offered, o.count);
  EXPECT_EQ(run.stats.packets, 64u);
  EXPECT_EQ(run.stats.rx_missed, o.count - 64);
  EXPECT_EQ(run.stats.dropped[static_cast<size_t>(DropReason::RingFull)], run.stats.rx_missed);
  for (uint64_t d = 0; d < run.stats.packets; ++d) {
    ASSERT_GT(run.seen[d].timestamp_ns, 0u);
    expect_frame(run.seen[d], be->frame(run.seen[d].timestamp_ns - 1), q->max_packet_size(), d);
  }
  EXPECT_TRUE(eventually([&] { return be->released() == o.count; }));
  EXPECT_EQ(be->out_of_order(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Ring, BackendMemory, ::testing::Values(RingMem::Host, RingMem::Gpu),
                         [](const auto& info) { return info.param == RingMem::Host ? "mem_host" : "mem_gpu"; });

}  // namespace
