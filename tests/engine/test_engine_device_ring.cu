// SPDX-License-Identifier: Apache-2.0
// Backend memory into a ring in device memory at thread, warp and block
// receive scope: frames copied in runs (one DMA per run, not per frame),
// the prebuilt source equal to the host path frame for frame, and a paced
// source's drops counted exactly with the order kept.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <set>
#include <string>

#include "engine_fixtures.hpp"
#include "gnio/host_reference.hpp"

using namespace gnio;
using namespace gnio::test;

namespace {

// Receives at scope S until `done()` (as record()).
template <Scope S, typename Done>
void record_at(Gpu& gpu, EthRxq& q, size_t capacity, Done&& done, Received& run) {
  auto h = GpuRxq::create(gpu, q);
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  auto seen = gpu.alloc(sizeof(Seen) * capacity, MemKind::GpuCpu);
  ASSERT_TRUE(seen.has_value());
  std::memset(seen->host_ptr(), 0, sizeof(Seen) * capacity);
  LaunchConfig c = one_thread("record-scoped");
  c.block = S == Scope::Thread ? 1 : S == Scope::Warp ? 32 : 128;
  auto k = PersistentKernel::launch(
      gpu, c, RecordKernel<S>{h->handle(), static_cast<Seen*>(seen->device_ptr()), capacity});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  EXPECT_TRUE(eventually([&] { return done(); }, std::chrono::seconds(60)));
  ASSERT_TRUE(k->stop());
  EXPECT_EQ(k->totals().errors, 0u) << "descriptors beyond what the source offered";
  const auto* s = static_cast<const Seen*>(seen->host_ptr());
  run.seen.assign(s, s + capacity);
  run.stats = q.stats();
  run.ring_data = q.impl()->engine->device_ring().data;
}

void record_scoped(Scope scope, Gpu& gpu, EthRxq& q, size_t capacity, const std::function<bool()>& done,
                   Received& run) {
  switch (scope) {
    case Scope::Thread: return record_at<Scope::Thread>(gpu, q, capacity, done, run);
    case Scope::Warp: return record_at<Scope::Warp>(gpu, q, capacity, done, run);
    case Scope::Block: return record_at<Scope::Block>(gpu, q, capacity, done, run);
  }
}

class DeviceRingFromBackendMemory : public ::testing::TestWithParam<Scope> {};

// Frames of mixed sizes in buffers of the backend's memory, copied into the
// ring by the receiving scope: every frame arrives once, in order, and goes
// back to the backend.
TEST_P(DeviceRingFromBackendMemory, FramesFromOwnedBuffersInOrderAndEveryBufferBack) {
  GNIO_OPEN_TEST_GPU(gpu);
  OwnedOptions o;
  o.count = 20000;
  o.buffers = 512;
  o.buffer_size = 2048;
  o.spec = "synthetic:size=64-1500,proto=mix,seed=31";
  OwnedBackend* be = nullptr;
  EthDevice dev = gnio::test::owned_device(o, be);
  auto q = dev.create_rxq(0);
  ASSERT_TRUE(q.has_value());
  start_queue(gpu, *q, RingMem::Gpu, 1024);
  Received run;
  record_scoped(GetParam(), gpu, *q, o.count, [&] { return q->at_end(); }, run);
  EXPECT_NE(run.ring_data, be->pool());
  expect_every_owned_frame(run, *be, *q, o.count);
  expect_every_buffer_back(*be, o.count);
}

// The prebuilt source into a ring in device memory: every descriptor holds
// the bytes the host path reads of the same spec at the same index.
TEST_P(DeviceRingFromBackendMemory, PrebuiltFramesEqualTheHostPathFrameForFrame) {
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string spec = "mem:count=30000,frames=500,ring=1000,size=96-1500,proto=mix,ipv6=mix,seed=17";
  std::vector<std::vector<uint8_t>> want;
  ASSERT_TRUE(for_each_host_frame(spec, [&](const std::vector<uint8_t>& f) { want.push_back(f); }));
  ASSERT_EQ(want.size(), 30000u);
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  start_queue(gpu, *q, RingMem::Gpu, 512);
  Received run;
  record_scoped(GetParam(), gpu, *q, want.size() + 1, [&] { return q->at_end(); }, run);
  for (size_t i = 0; i < want.size(); ++i) {
    expect_frame(run.seen[i], want[i], q->max_packet_size(), i);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(run.seen[want.size()].times, 0u);
  EXPECT_EQ(run.stats.offered, want.size());
  EXPECT_EQ(run.stats.packets, want.size());
  EXPECT_EQ(run.stats.released, want.size());
}

// A paced prebuilt source (a wire) with a consumer: what arrives at a full
// ring or while every buffer is lent is dropped and counted exactly, and
// what is delivered is the source's frames in their order.
TEST_P(DeviceRingFromBackendMemory, PacedPrebuiltDropsCountedExactlyAndOrderKept) {
  GNIO_OPEN_TEST_GPU(gpu);
  const uint64_t count = 40000;
  // Sizes vary, so a buffer lent after a loss that still held another
  // frame than the one due shows as bytes of no source frame.
  // ring=64 buffers against a ring of 256 descriptors: the source runs out
  // of buffers too, and loses frames there.
  const std::string frames = "frames=64,size=64-1500,flows=64,seed=23";
  std::vector<uint64_t> cycle;  // the source's frames, repeating
  ASSERT_TRUE(for_each_host_frame("mem:" + frames,
                                            [&](const std::vector<uint8_t>& f) {
                                              cycle.push_back(dev::fnv1a64(f.data(), f.size()));
                                            }));
  ASSERT_EQ(cycle.size(), 64u);
  ASSERT_EQ(std::set<uint64_t>(cycle.begin(), cycle.end()).size(), cycle.size()) << "frames must differ";
  auto dev = EthDevice::open("mem:count=" + std::to_string(count) + ",ring=64,pps=4000000," + frames);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  start_queue(gpu, *q, RingMem::Gpu, 256);
  Received run;
  record_scoped(GetParam(), gpu, *q, count, [&] { return q->at_end(); }, run);
  const RxqStats& s = run.stats;
  EXPECT_EQ(s.offered, count);
  EXPECT_EQ(s.packets + dropped_total(s), s.offered);
  EXPECT_EQ(s.dropped[static_cast<size_t>(DropReason::RingFull)], dropped_total(s));
  EXPECT_EQ(s.rx_missed, dropped_total(s));
  EXPECT_GT(s.packets, 0u);
  // Delivered frames are a subsequence of the source's: each is the next
  // source frame or one after frames that were dropped.
  size_t at = 0;
  for (uint64_t d = 0; d < s.packets; ++d) {
    EXPECT_EQ(run.seen[d].times, 1u) << "frame " << d;
    size_t skip = 0;
    while (skip < cycle.size() && cycle[(at + skip) % cycle.size()] != run.seen[d].fnv) ++skip;
    ASSERT_LT(skip, cycle.size()) << "descriptor " << d << " holds no frame of the source";
    at = (at + skip + 1) % cycle.size();
  }
  if (s.packets < count) {
    EXPECT_EQ(run.seen[s.packets].times, 0u) << "a descriptor beyond the delivered ones";
  }
}

INSTANTIATE_TEST_SUITE_P(Scope, DeviceRingFromBackendMemory,
                         ::testing::Values(Scope::Thread, Scope::Warp, Scope::Block), [](const auto& info) {
                           return info.param == Scope::Thread ? "thread" : info.param == Scope::Warp ? "warp" : "block";
                         });

}  // namespace
