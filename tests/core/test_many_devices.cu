// SPDX-License-Identifier: Apache-2.0
// Several devices in one process: emulated devices cpu:N, each its own
// context, beside the device GNIO_TEST_GPU names (a real GPU with auto);
// queues of one source spread over them, each device with its own kernel.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "gnio/dev/stock_kernels.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/host_reference.hpp"
#include "gnio/persistent_kernel.hpp"
#include "test_support.hpp"

using namespace gnio;

namespace {

// Ignores its exit flag until *release is set: a kernel stuck on one device.
struct StuckKernel {
  uint32_t* release;
  GNIO_HD void operator()(const dev::KernelCtx&) const {
    for (uint32_t spins = 0; dev::load_acquire(release) == 0; ++spins) dev::backoff(spins);
  }
};

TEST(ManyDevices, EmulatedDevicesAreSeparateContexts) {
  auto a = Gpu::open("cpu:1");
  auto b = Gpu::open("cpu:2");
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  ASSERT_TRUE(b.has_value()) << b.status().to_string();
  EXPECT_EQ(a->bus_id(), "cpu:1");
  EXPECT_EQ(b->bus_id(), "cpu:2");
  EXPECT_TRUE(a->emulated() && b->emulated());
  auto again = Gpu::open("cpu:1");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.status().code(), Errc::BadState);
  {
    auto zero = Gpu::open("cpu:0");
    ASSERT_TRUE(zero.has_value()) << zero.status().to_string();
    EXPECT_EQ(zero->bus_id(), "cpu");
    auto cpu = Gpu::open("cpu");
    ASSERT_FALSE(cpu.has_value()) << "cpu is cpu:0: one context";
    EXPECT_EQ(cpu.status().code(), Errc::BadState);
  }
  for (const char* bad : {"cpu:64", "cpu:x", "cpu:", "cpu:007"}) {
    auto g = Gpu::open(bad);
    ASSERT_FALSE(g.has_value()) << bad;
    EXPECT_EQ(g.status().code(), Errc::InvalidValue) << bad;
    EXPECT_NE(g.status().message().find(bad), std::string::npos) << g.status().message();
  }
  // Memory of one context is its own: closing one leaves the other usable.
  auto mem = b->alloc(4096, MemKind::Gpu);
  ASSERT_TRUE(mem.has_value());
  EXPECT_TRUE(a->close());
  EXPECT_NE(mem->device_ptr(), nullptr);
}

TEST(ManyDevices, AListOpensEachDeviceOnceInItsOrder) {
  auto gpus = Gpu::open_list("cpu:3,cpu:1,cpu");
  ASSERT_TRUE(gpus.has_value()) << gpus.status().to_string();
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[0].bus_id(), "cpu:3");
  EXPECT_EQ((*gpus)[1].bus_id(), "cpu:1");
  EXPECT_EQ((*gpus)[2].bus_id(), "cpu");
  gpus->clear();
  const struct {
    const char* list;
    Errc code;
    const char* says;
  } refused[] = {
      {"cpu:1,,cpu:2", Errc::InvalidValue, "empty entry"},
      {"", Errc::InvalidValue, "empty entry"},
      {"cpu:1,cpu:01", Errc::InvalidValue, "cpu:01"},
      {"cpu:1,cpu:1", Errc::BadState, "cpu:1"},
      {"cpu:2,nonsense", Errc::InvalidValue, "nonsense"},
  };
  for (const auto& r : refused) {
    auto g = Gpu::open_list(r.list);
    ASSERT_FALSE(g.has_value()) << r.list;
    EXPECT_EQ(g.status().code(), r.code) << r.list << ": " << g.status().to_string();
    EXPECT_NE(g.status().message().find(r.says), std::string::npos) << g.status().message();
  }
  // A refused list leaves nothing open.
  auto after = Gpu::open_list("cpu:1,cpu:2");
  EXPECT_TRUE(after.has_value()) << after.status().to_string();
}

// Queues 0..3 of one source: 0 and 1 on the test device, 2 and 3 on
// emulated device cpu:1, a kernel on each. Every packet is received once
// across the two, each device's count is its queues' count, and the total
// equals the host path's.
TEST(ManyDevices, QueuesSpreadOverTwoDevicesDeliverEveryPacketOnce) {
  GNIO_OPEN_TEST_GPU(first);
  auto second = Gpu::open(first.bus_id() == "cpu:1" ? "cpu:2" : "cpu:1");
  ASSERT_TRUE(second.has_value()) << second.status().to_string();
  const std::string spec = "synthetic:count=4000,flows=64,size=128,queues=4";
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  Gpu* on[4] = {&first, &first, &*second, &*second};
  std::vector<EthRxq> qs;
  std::vector<GpuRxq> hs;
  dev::RxQueueSet sets[2];
  for (uint16_t q = 0; q < 4; ++q) {
    auto rxq = dev->create_rxq(q);
    ASSERT_TRUE(rxq.has_value()) << rxq.status().to_string();
    ASSERT_TRUE(rxq->set_gpu(*on[q]));
    ASSERT_TRUE(rxq->start());
    auto h = GpuRxq::create(*on[q], *rxq);
    ASSERT_TRUE(h.has_value()) << h.status().to_string();
    dev::RxQueueSet& s = sets[q / 2];
    s.rxq[s.count++] = h->handle();
    qs.push_back(std::move(*rxq));
    hs.push_back(std::move(*h));
  }
  std::vector<DeviceMemory> totals;
  std::vector<PersistentKernel> kernels;
  for (int d = 0; d < 2; ++d) {
    Gpu& g = d == 0 ? first : *second;
    auto t = g.alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
    ASSERT_TRUE(t.has_value());
    std::memset(t->host_ptr(), 0, sizeof(dev::ReceiveTotals));
    LaunchConfig c;
    c.grid = 2;
    c.block = g.emulated() ? 1 : 128;
    c.name = "receive-" + g.bus_id();
    auto k = PersistentKernel::launch(
        g, c, dev::ReceiveKernel<Scope::Block>{sets[d], static_cast<dev::ReceiveTotals*>(t->device_ptr()), 64});
    ASSERT_TRUE(k.has_value()) << k.status().to_string();
    totals.push_back(std::move(*t));
    kernels.push_back(std::move(*k));
  }
  EXPECT_TRUE(gnio::test::eventually(
      [&] {
        for (const EthRxq& q : qs)
          if (!q.at_end()) return false;
        return true;
      },
      std::chrono::seconds(60)));
  for (PersistentKernel& k : kernels) ASSERT_TRUE(k.stop());
  auto host = host_receive_totals(spec, 4);
  ASSERT_TRUE(host.has_value()) << host.status().to_string();
  dev::ReceiveTotals sum{};
  for (int d = 0; d < 2; ++d) {
    const auto* t = static_cast<const dev::ReceiveTotals*>(totals[d].host_ptr());
    const uint64_t of_its_queues = qs[2 * d].stats().packets + qs[2 * d + 1].stats().packets;
    EXPECT_EQ(t->packets, of_its_queues) << "device " << d;
    EXPECT_GT(t->packets, 0u) << "device " << d << " received nothing";
    EXPECT_EQ(t->bad_release, 0u);
    EXPECT_EQ(kernels[d].totals().packets, t->packets) << "the kernel's own counters, device " << d;
    sum.packets += t->packets;
    sum.bytes += t->bytes;
    sum.checksum += t->checksum;
  }
  EXPECT_EQ(sum.packets, host->packets);
  EXPECT_EQ(sum.bytes, host->bytes);
  EXPECT_EQ(sum.checksum, host->checksum);
  for (GpuRxq& h : hs) ASSERT_TRUE(h.destroy());
  for (EthRxq& q : qs) ASSERT_TRUE(q.destroy());
}

// A kernel stuck on one device is reported with that device by its stop(),
// while the other device's kernel receives its queue to the end
// and stops.
TEST(ManyDevices, AStuckKernelOnOneDeviceLeavesTheOtherDraining) {
  auto stuck_gpu = Gpu::open("cpu:5");
  auto good_gpu = Gpu::open("cpu:6");
  ASSERT_TRUE(stuck_gpu.has_value() && good_gpu.has_value());
  auto release = stuck_gpu->alloc(sizeof(uint32_t), MemKind::GpuCpu);
  ASSERT_TRUE(release.has_value());
  std::memset(release->host_ptr(), 0, sizeof(uint32_t));
  LaunchConfig sc;
  sc.grid = 1;
  sc.block = 1;
  sc.name = "stuck";
  auto stuck = PersistentKernel::launch(*stuck_gpu, sc, StuckKernel{static_cast<uint32_t*>(release->device_ptr())});
  ASSERT_TRUE(stuck.has_value()) << stuck.status().to_string();

  const std::string spec = "synthetic:count=3000,flows=16";
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value());
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  ASSERT_TRUE(q->set_gpu(*good_gpu));
  ASSERT_TRUE(q->start());
  auto h = GpuRxq::create(*good_gpu, *q);
  ASSERT_TRUE(h.has_value());
  auto t = good_gpu->alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
  ASSERT_TRUE(t.has_value());
  std::memset(t->host_ptr(), 0, sizeof(dev::ReceiveTotals));
  LaunchConfig gc;
  gc.grid = 1;
  gc.block = 1;
  gc.name = "receive-" + good_gpu->bus_id();
  auto good = PersistentKernel::launch(
      *good_gpu, gc,
      dev::ReceiveKernel<Scope::Thread>{dev::RxQueueSet::of(h->handle()),
                                        static_cast<dev::ReceiveTotals*>(t->device_ptr()), 64});
  ASSERT_TRUE(good.has_value()) << good.status().to_string();

  const Status timed_out = stuck->stop(std::chrono::milliseconds(300));
  EXPECT_EQ(timed_out.code(), Errc::Timeout);
  EXPECT_NE(timed_out.message().find("\"stuck\" on cpu:5"), std::string::npos) << timed_out.message();
  EXPECT_TRUE(gnio::test::eventually([&] { return q->at_end(); }, std::chrono::seconds(30)))
      << "the other device drains while one is stuck";
  ASSERT_TRUE(good->stop());
  EXPECT_EQ(static_cast<const dev::ReceiveTotals*>(t->host_ptr())->packets, 3000u);
  dev::store_release(static_cast<uint32_t*>(release->host_ptr()), 1u);
  EXPECT_TRUE(stuck->stop());
  EXPECT_TRUE(h->destroy());
  EXPECT_TRUE(q->destroy());
}

}  // namespace
