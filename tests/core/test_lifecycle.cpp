// SPDX-License-Identifier: Apache-2.0
// Lifecycle and validation rules of layers 1-3 (no kernel needed): every
// misuse returns the right code with the offending value in the message.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "test_support.hpp"

using namespace gnio;
using gnio::test::eventually;

namespace {

const std::string kSample = "pcap:" GNIO_DATA_DIR "/sample.pcap";

bool contains(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

TEST(GpuContext, OneContextPerDevice) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto again = Gpu::open(gpu.emulated() ? "cpu" : gpu.bus_id());
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.status().code(), Errc::BadState);
  EXPECT_TRUE(contains(again.status(), gpu.bus_id()));
  ASSERT_TRUE(gpu.close());
  auto reopened = Gpu::open(test::test_gpu_id());
  EXPECT_TRUE(reopened.has_value()) << reopened.status().to_string();
}

TEST(GpuContext, BusIdThatMatchesNoGpuListsThePresentOnes) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto g = Gpu::open("0000:ff:1f.7");
  ASSERT_FALSE(g.has_value());
  // Without a driver the enumeration itself may fail; either way it is not a crash and names the id.
  if (g.status().code() == Errc::InvalidValue) {
    EXPECT_TRUE(contains(g.status(), "0000:ff:1f.7"));
    EXPECT_TRUE(contains(g.status(), "present:"));
    if (!gpu.emulated()) {
      EXPECT_TRUE(contains(g.status(), gpu.bus_id()));
    }
  }
  auto bad = Gpu::open("not-a-bus-id");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(bad.status(), "not-a-bus-id"));
}

TEST(GpuContext, AllocationsValidateAndHonourTheirKind) {
  GNIO_OPEN_TEST_GPU(gpu);
  EXPECT_EQ(gpu.alloc(0, MemKind::Gpu).status().code(), Errc::InvalidValue);
  auto odd = gpu.alloc(64, MemKind::Gpu, 48);
  EXPECT_EQ(odd.status().code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(odd.status(), "48"));
  auto pinned = gpu.alloc(4096, MemKind::CpuGpu);
  ASSERT_TRUE(pinned.has_value());
  ASSERT_NE(pinned->host_ptr(), nullptr);
  EXPECT_EQ(static_cast<uint8_t*>(pinned->host_ptr())[4095], 0);  // zero-initialised
  EXPECT_EQ(pinned->size(), 4096u);
  auto dev = gpu.alloc(1 << 20, MemKind::Gpu);
  ASSERT_TRUE(dev.has_value());
  EXPECT_NE(dev->device_ptr(), nullptr);
  EXPECT_EQ(dev->host_ptr() != nullptr, gpu.emulated());
  auto arr = gpu.create_buf_arr(MemKind::Gpu, 16, 100);
  EXPECT_EQ(arr.status().code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(arr.status(), "100"));
}

TEST(GpuContext, CopyToHostCopiesTheRangeAskedForAndRefusesOthers) {
  GNIO_OPEN_TEST_GPU(gpu);
  // Device memory is zeroed when allocated: a copy overwrites the pattern.
  auto dev = gpu.alloc(1 << 20, MemKind::Gpu);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  std::vector<uint8_t> out(4096, 0xaa);
  ASSERT_TRUE(dev->copy_to_host((1 << 20) - 4096, out.data(), out.size()));
  EXPECT_EQ(std::count(out.begin(), out.end(), 0), 4096);
  // Host-written bytes of pinned memory come back at their offsets.
  auto pinned = gpu.alloc(8192, MemKind::CpuGpu);
  ASSERT_TRUE(pinned.has_value());
  auto* p = static_cast<uint8_t*>(pinned->host_ptr());
  for (size_t i = 0; i < 8192; ++i) p[i] = static_cast<uint8_t>(i * 7 + 3);
  std::vector<uint8_t> part(1000);
  ASSERT_TRUE(pinned->copy_to_host(100, part.data(), part.size()));
  for (size_t i = 0; i < part.size(); ++i) ASSERT_EQ(part[i], static_cast<uint8_t>((i + 100) * 7 + 3)) << i;
  EXPECT_TRUE(pinned->copy_to_host(8192, nullptr, 0));
  const Status past = pinned->copy_to_host(8000, part.data(), 193);
  EXPECT_EQ(past.code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(past, "8193")) << past.to_string();
  EXPECT_TRUE(contains(past, "8192-byte")) << past.to_string();
  EXPECT_EQ(pinned->copy_to_host(0, nullptr, 1).code(), Errc::InvalidValue);
  EXPECT_EQ(DeviceMemory().copy_to_host(0, part.data(), 1).code(), Errc::BadState);
}

TEST(EthQueue, SettersAreRefusedAfterStart) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open(kSample);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->state(), QueueState::Created);
  ASSERT_TRUE(q->set_num_strides(256));
  ASSERT_TRUE(q->set_gpu(gpu));
  EXPECT_EQ(q->state(), QueueState::Configured);
  ASSERT_TRUE(q->start());
  EXPECT_EQ(q->state(), QueueState::Started);
  for (Status s : {q->set_num_strides(512), q->set_stride_size(1024), q->set_max_packet_size(1500),
                   q->set_burst_size(8), q->set_ring_mem(RingMem::Host), q->set_gpu(gpu), q->start()}) {
    EXPECT_EQ(s.code(), Errc::BadState) << s.to_string();
    EXPECT_TRUE(contains(s, "started"));
  }
  ASSERT_TRUE(q->stop());
  EXPECT_EQ(q->state(), QueueState::Stopped);
  EXPECT_EQ(q->set_burst_size(8).code(), Errc::BadState);
  EXPECT_TRUE(q->destroy());
  EXPECT_EQ(q->state(), QueueState::Destroyed);
  EXPECT_EQ(q->start().code(), Errc::BadState);
}

TEST(EthQueue, ValuesOutsideTheCapsNameValueAndLimit) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open(kSample);
  ASSERT_TRUE(dev.has_value());
  const EthCaps& caps = dev->caps();
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  Status big = q->set_stride_size(caps.max_stride * 2);
  EXPECT_EQ(big.code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(big, std::to_string(caps.max_stride * 2)));
  EXPECT_TRUE(contains(big, std::to_string(caps.max_stride)));
  EXPECT_EQ(q->set_stride_size(caps.min_stride / 2).code(), Errc::InvalidValue);
  Status npot = q->set_num_strides(1000);
  EXPECT_EQ(npot.code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(npot, "1000"));
  EXPECT_EQ(q->set_burst_size(0).code(), Errc::InvalidValue);
  Status burst = q->set_burst_size(caps.max_burst + 1);
  EXPECT_TRUE(contains(burst, std::to_string(caps.max_burst)));
  Status pkt = q->set_max_packet_size(caps.max_packet_size + 1);
  EXPECT_EQ(pkt.code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(pkt, std::to_string(caps.max_packet_size)));
  auto beyond = dev->create_rxq(caps.max_rx_queues);
  EXPECT_EQ(beyond.status().code(), Errc::InvalidValue);
  auto tx = dev->create_txq(0);  // a pcap replay has no TX side
  EXPECT_EQ(tx.status().code(), Errc::NotSupported);
  EXPECT_EQ(tx.status().axis(), Axis::Nic);
  // The refused values left the queue as it was: it still starts on the GPU.
  ASSERT_TRUE(q->set_gpu(gpu));
  EXPECT_TRUE(q->start());
  EXPECT_EQ(q->stride_size(), 2048u);
}

TEST(EthQueue, PacketBufferMustMatchTheRing) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open(kSample);
  ASSERT_TRUE(dev.has_value());
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  auto pool = gpu.create_buf_arr(MemKind::Gpu, 128, 2048);
  ASSERT_TRUE(pool.has_value());
  ASSERT_TRUE(q->set_num_strides(256));
  ASSERT_TRUE(q->set_stride_size(2048));
  ASSERT_TRUE(q->set_gpu(gpu));
  ASSERT_TRUE(q->set_packet_buffer(*pool));
  Status s = q->start();
  EXPECT_EQ(s.code(), Errc::InvalidValue);
  EXPECT_TRUE(contains(s, "128")) << s.message();
  EXPECT_TRUE(contains(s, "256")) << s.message();
  auto right = gpu.create_buf_arr(MemKind::Gpu, 256, 2048);
  ASSERT_TRUE(right.has_value());
  ASSERT_TRUE(q->set_packet_buffer(*right));
  EXPECT_TRUE(q->start());
  EXPECT_TRUE(q->destroy());
}

TEST(Layering, GpuHandlesNeedAStartedQueueWithAGpuDatapath) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open(kSample);
  ASSERT_TRUE(dev.has_value());
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  ASSERT_TRUE(q->set_gpu(gpu));
  auto early = GpuRxq::create(gpu, *q);
  EXPECT_EQ(early.status().code(), Errc::BadState);
  EXPECT_TRUE(contains(early.status(), "start"));

  auto host_dev = EthDevice::open(kSample);
  auto host_q = host_dev->create_rxq(0);
  ASSERT_TRUE(host_q->start());
  auto no_gpu = GpuRxq::create(gpu, *host_q);
  EXPECT_EQ(no_gpu.status().code(), Errc::BadState);
  EXPECT_TRUE(contains(no_gpu.status(), "set_gpu"));

  ASSERT_TRUE(q->start());
  EXPECT_EQ(q->host_receive(8).status().code(), Errc::BadState);
  auto h = GpuRxq::create(gpu, *q);
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  EXPECT_NE(h->handle().ring().data, nullptr);
}

TEST(Layering, TeardownOutOfOrderIsBadState) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open(kSample);
  auto txdev = EthDevice::open("loop:");
  ASSERT_TRUE(dev.has_value() && txdev.has_value());
  auto rxq = dev->create_rxq(0);
  auto txq = txdev->create_txq(0);
  ASSERT_TRUE(rxq.has_value() && txq.has_value());
  ASSERT_TRUE(rxq->set_gpu(gpu));
  ASSERT_TRUE(txq->set_gpu(gpu));
  ASSERT_TRUE(rxq->start());
  ASSERT_TRUE(txq->start());
  auto hrx = GpuRxq::create(gpu, *rxq);
  auto htx = GpuTxq::create(gpu, *txq);
  auto sem = GpuSemaphore::create(gpu, 4, 16);
  ASSERT_TRUE(hrx.has_value() && htx.has_value() && sem.has_value());

  EXPECT_EQ(rxq->destroy().code(), Errc::BadState);
  EXPECT_EQ(rxq->stop().code(), Errc::BadState);
  EXPECT_EQ(txq->destroy().code(), Errc::BadState);
  Status close = gpu.close();
  EXPECT_EQ(close.code(), Errc::BadState);
  EXPECT_TRUE(contains(close, "3 GPU handle(s)")) << close.message();

  ASSERT_TRUE(hrx->destroy());
  ASSERT_TRUE(htx->destroy());
  ASSERT_TRUE(sem->destroy());
  EXPECT_EQ(gpu.close().code(), Errc::BadState);  // the queues still run on it
  EXPECT_TRUE(rxq->destroy());
  EXPECT_TRUE(txq->destroy());
  EXPECT_TRUE(gpu.close());
}

TEST(Engine, FullRingDropsAtTheNicAndCountsExactly) {
  GNIO_OPEN_TEST_GPU(gpu);
  // A paced source is a wire: what arrives at a full ring is lost and counted.
  auto dev = EthDevice::open("synthetic:count=1000,size=128,pps=200000");
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  ASSERT_TRUE(dev->caps().drops_when_full);
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q->set_num_strides(64));
  ASSERT_TRUE(q->set_stride_size(2048));
  ASSERT_TRUE(q->set_max_packet_size(1024));
  ASSERT_TRUE(q->set_gpu(gpu));
  ASSERT_TRUE(q->start());
  ASSERT_TRUE(eventually([&] { return q->stats().packets + q->stats().rx_missed == 1000; }));
  const RxqStats st = q->stats();
  EXPECT_EQ(st.packets, 64u);  // one stride per packet, nothing released
  EXPECT_EQ(st.rx_missed, 936u);
  EXPECT_EQ(st.dropped[static_cast<size_t>(DropReason::RingFull)], 936u);
  EXPECT_EQ(st.offered, 1000u);
  EXPECT_EQ(st.released, 0u);
  EXPECT_FALSE(q->at_end());  // delivered packets were never released
}

TEST(Engine, PullSourceIsLosslessWhenTheRingIsFull) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open("synthetic:count=1000,size=128");
  ASSERT_FALSE(dev->caps().drops_when_full);
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q->set_num_strides(64));
  ASSERT_TRUE(q->set_max_packet_size(1024));
  ASSERT_TRUE(q->set_gpu(gpu));
  ASSERT_TRUE(q->start());
  ASSERT_TRUE(eventually([&] { return q->stats().packets == 64; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(q->stats().packets, 64u);
  EXPECT_EQ(q->stats().rx_missed, 0u);
}

TEST(Engine, CorruptCaptureStopsTheSourceWithFileAndOffset) {
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string file = GNIO_DATA_DIR "/corrupt/truncated.pcap";
  auto dev = EthDevice::open("pcap:" + file);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q->set_gpu(gpu));
  ASSERT_TRUE(q->start());
  ASSERT_TRUE(eventually([&] { return !q->source_status().is_ok(); }));
  Status s = q->source_status();
  EXPECT_EQ(s.code(), Errc::IoError) << s.to_string();
  EXPECT_TRUE(contains(s, "truncated.pcap"));
  EXPECT_TRUE(contains(s, "offset"));
  EXPECT_EQ(q->stats().errors, 1u);
}

TEST(EthQueue, MaxPacketSizeDefaultsToWhatTheBackendDelivers) {
  auto dev = EthDevice::open("synthetic:count=10");
  ASSERT_TRUE(dev.has_value());
  auto q = dev->create_rxq(0);
  EXPECT_EQ(q->max_packet_size(), dev->caps().max_packet_size);  // the default ring holds it twice
  ASSERT_TRUE(q->set_num_strides(64));
  ASSERT_TRUE(q->set_stride_size(128));
  EXPECT_EQ(q->max_packet_size(), 64u * 128 / 2);  // a small ring: half of it
  ASSERT_TRUE(q->set_max_packet_size(1500));
  EXPECT_EQ(q->max_packet_size(), 1500u);
  const RxOffloads off = q->rx_offloads();
  EXPECT_FALSE(off.packet_type || off.checksum || off.rss_hash);
}

TEST(EthQueue, EnginePlacementInTheSpecIsCheckedAndNotSeenByTheBackend) {
  for (const char* bad : {"synthetic:count=10,threads=0", "synthetic:count=10,cores=x", "synthetic:count=10,cores=3-1",
                          "loop:,poll=sometimes"}) {
    auto dev = EthDevice::open(bad);
    ASSERT_FALSE(dev.has_value()) << bad;
    EXPECT_EQ(dev.status().code(), Errc::InvalidValue) << bad;
    EXPECT_NE(dev.status().message().find("is not valid"), std::string::npos) << dev.status().to_string();
  }
  for (const char* good : {"synthetic:count=10,threads=2,queues=2", "synthetic:cores=0:1,count=10",
                           "loop:,poll=busy", "loop:cable,threads=1"}) {
    auto dev = EthDevice::open(good);
    EXPECT_TRUE(dev.has_value()) << good << ": " << dev.status().to_string();
    if (dev) {
      EXPECT_EQ(dev->spec(), good);
    }
  }
}

}  // namespace
