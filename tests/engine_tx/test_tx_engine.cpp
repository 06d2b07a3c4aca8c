// SPDX-License-Identifier: Apache-2.0
// The TX NIC engine: how it plans the copies of device-memory payloads, what
// one poll() does with a burst (copies, waits, bytes out, errors, send times)
// when the ring is filled by hand on the emulated device, and kernels sending
// from device memory on the device under test (GNIO_TEST_GPU).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "engine/tx_engine.hpp"
#include "engine/queue_state.hpp"
#include "gnio/dev/txq.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "../core/test_support.hpp"
#include "device_send_kernel.hpp"

using namespace gnio;

namespace {

using Bytes = std::vector<uint8_t>;

// ---- the copy plan ---------------------------------------------------------

TEST(TxCopyPlan, PayloadsBackToBackAreOneCopy) {
  detail::TxCopyPlan plan(4096, 256);
  EXPECT_EQ(plan.add(1000, 100, 0), 0u);
  EXPECT_EQ(plan.add(1100, 50, 0), 100u);
  EXPECT_EQ(plan.add(1150, 10, 0), 150u);
  ASSERT_EQ(plan.copies().size(), 1u);
  EXPECT_EQ(plan.copies()[0].src, 1000u);
  EXPECT_EQ(plan.copies()[0].len, 160u);
  EXPECT_EQ(plan.bytes(), 160u);
}

TEST(TxCopyPlan, StridesWithGapsAreOneCopyThatKeepsTheGaps) {
  detail::TxCopyPlan plan(8192, 256);
  // Packets in consecutive 256-byte strides, shorter than a stride.
  EXPECT_EQ(plan.add(4096, 60, 4096), 0u);
  EXPECT_EQ(plan.add(4096 + 256, 200, 4096), 256u);
  EXPECT_EQ(plan.add(4096 + 512, 64, 4096), 512u);
  ASSERT_EQ(plan.copies().size(), 1u);
  EXPECT_EQ(plan.copies()[0].len, 512u + 64u);
  EXPECT_EQ(plan.add(4096 + 512 + 64 + 257, 8, 4096), 576u);  // a 257-byte gap: a copy of its own
  EXPECT_EQ(plan.copies().size(), 2u);
}

TEST(TxCopyPlan, FarApartOtherAllocationOrBackwardsStartsAnotherCopy) {
  detail::TxCopyPlan plan(1 << 16, 256);
  EXPECT_EQ(plan.add(10000, 100, 0), 0u);
  EXPECT_EQ(plan.add(10100 + 257, 10, 0), 100u);   // 257 bytes past the end: too far
  EXPECT_EQ(plan.add(10367, 20, 10367), 110u);     // adjacent, but another allocation
  EXPECT_EQ(plan.add(10000, 30, 10367), 130u);     // before the last copy's start
  ASSERT_EQ(plan.copies().size(), 4u);
  EXPECT_EQ(plan.copies()[1].src, 10357u);
  EXPECT_EQ(plan.copies()[2].dst, 110u);
  EXPECT_EQ(plan.bytes(), 160u);
}

TEST(TxCopyPlan, ThePayloadTwiceIsCopiedOnce) {
  detail::TxCopyPlan plan(4096, 0);
  EXPECT_EQ(plan.add(5000, 100, 0), 0u);
  EXPECT_EQ(plan.add(5000, 100, 0), 0u);
  EXPECT_EQ(plan.add(5040, 100, 0), 40u);  // overlaps: grows the copy by 40
  ASSERT_EQ(plan.copies().size(), 1u);
  EXPECT_EQ(plan.copies()[0].len, 140u);
}

TEST(TxCopyPlan, AFullArenaRefusesAndKeepsWhatItPlanned) {
  detail::TxCopyPlan plan(300, 64);
  EXPECT_EQ(plan.add(0, 200, 0), 0u);
  EXPECT_FALSE(plan.add(210, 100, 0).has_value());   // merged it would need 310
  EXPECT_FALSE(plan.add(9000, 101, 0).has_value());  // alone it would need 301
  EXPECT_EQ(plan.add(9000, 100, 0), 200u);
  EXPECT_EQ(plan.bytes(), 300u);
  plan.clear();
  EXPECT_TRUE(plan.empty());
  EXPECT_EQ(plan.add(0, 300, 0), 0u);
}

// ---- one engine, polled by hand on the emulated device ---------------------

// What a descriptor sends: device/mapped memory at `data`, or `staged` bytes
// written into its staging slot.
struct Send {
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  Bytes staged;
  uint64_t send_time_ns = 0;
};

Bytes pattern(uint32_t seed, uint32_t len) {
  Bytes b(len);
  for (uint32_t j = 0; j < len; ++j) b[j] = static_cast<uint8_t>(seed * 31 + j * 7 + (j >> 8));
  return b;
}

// The ring's device side is plain host memory on the emulated device, so
// the test plays the kernel with the device API from the host.
class DrivenTxEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    auto g = Gpu::open("cpu");
    ASSERT_TRUE(g.has_value()) << g.status().to_string();
    gpu_ = std::move(*g);
    static std::atomic<int> wires{0};
    const std::string wire = "loop:tx-driven-" + std::to_string(getpid()) + "-" + std::to_string(++wires);
    auto near_end = backend::open_backend(wire);
    auto far_end = backend::open_backend(wire);
    ASSERT_TRUE(near_end.has_value() && far_end.has_value());
    q_.dev = std::make_shared<detail::DeviceImpl>();
    q_.dev->spec = wire;
    q_.dev->backend = std::move(*near_end);
    far_ = std::move(*far_end);
    q_.depth = 128;
    q_.max_packet_size = 2048;
    q_.gpu = gpu_.impl();
    auto e = detail::TxEngine::start(q_, /*own_thread=*/false);
    ASSERT_TRUE(e.has_value()) << e.status().to_string();
    q_.engine = std::move(*e);
    txq_ = dev::Txq(q_.engine->device_ring());
  }

  // A fresh engine over `be` (nullptr: the same backend), with this max
  // packet size and staging slot.
  void restart(std::unique_ptr<backend::Backend> be, uint32_t max, uint32_t slot) {
    q_.engine.reset();
    if (be) q_.dev->backend = std::move(be);
    q_.max_packet_size = max;
    q_.staging_slot_size = slot;
    auto e = detail::TxEngine::start(q_, /*own_thread=*/false);
    ASSERT_TRUE(e.has_value()) << e.status().to_string();
    q_.engine = std::move(*e);
    txq_ = dev::Txq(q_.engine->device_ring());
  }

  uint64_t dropped(TxDropReason r) const { return q_.counters.dropped[static_cast<size_t>(r)].load(); }

  uint8_t* alloc(size_t bytes, MemKind kind) {
    auto m = gpu_.alloc(bytes, kind, 4096);
    EXPECT_TRUE(m.has_value());
    if (!m) return nullptr;
    memory_.push_back(std::move(*m));
    return static_cast<uint8_t*>(memory_.back().device_ptr());
  }

  // Reserves, fills, commits and pushes one batch, as a kernel would.
  void push(const std::vector<Send>& sends) {
    dev::TxBatch b = txq_.reserve<Scope::Thread>(static_cast<uint32_t>(sends.size()));
    ASSERT_EQ(b.status(), dev::Status::Success);
    for (uint32_t i = 0; i < sends.size(); ++i) {
      const Send& s = sends[i];
      if (s.data) {
        b.set(i, s.data, s.len, s.send_time_ns);
      } else {
        if (!s.staged.empty()) std::memcpy(b.staging(i), s.staged.data(), s.staged.size());
        b.set_staged(i, static_cast<uint32_t>(s.staged.size()), s.send_time_ns);
      }
    }
    txq_.commit<Scope::Thread>(b);
    txq_.push();
  }

  std::vector<Bytes> received() {
    std::vector<Bytes> out;
    std::vector<backend::RxFrame> frames(64);
    for (;;) {
      auto n = far_->rx_burst(0, frames);
      EXPECT_TRUE(n.has_value());
      if (!n || *n == 0) return out;
      for (size_t i = 0; i < *n; ++i) out.emplace_back(frames[i].data, frames[i].data + frames[i].len);
    }
  }

  Gpu gpu_;
  detail::TxqImpl q_;
  std::unique_ptr<backend::Backend> far_;
  dev::Txq txq_;
  std::vector<DeviceMemory> memory_;
};

TEST_F(DrivenTxEngine, StridesOfABurstInDeviceMemoryAreOneCopyAndOneWait) {
  constexpr uint32_t kStride = 256, kCount = 48;
  uint8_t* ring = alloc(kCount * kStride, MemKind::Gpu);
  ASSERT_NE(ring, nullptr);
  std::vector<Send> sends;
  std::vector<Bytes> want;
  for (uint32_t i = 0; i < kCount; ++i) {
    want.push_back(pattern(i, 60 + (i * 37) % 190));
    std::memcpy(ring + i * kStride, want.back().data(), want.back().size());
    sends.push_back({ring + i * kStride, static_cast<uint32_t>(want.back().size()), {}, 0});
  }
  push(sends);
  EXPECT_EQ(q_.engine->poll(), kCount);
  EXPECT_EQ(q_.engine->poll(), 0u);
  const detail::TxCopyStats c = q_.engine->copy_stats();
  EXPECT_EQ(c.payloads, kCount);
  EXPECT_EQ(c.copies, 1u);
  EXPECT_EQ(c.waits, 1u);
  EXPECT_EQ(c.bytes, (kCount - 1) * kStride + want.back().size());
  EXPECT_EQ(received(), want);
  EXPECT_EQ(txq_.completed(), kCount);
  EXPECT_EQ(txq_.completion_errors(), 0u);
  EXPECT_EQ(q_.counters.packets.load(), kCount);
  EXPECT_EQ(q_.counters.completions.load(), kCount);
  // The queue's stats read the same counters.
  EXPECT_EQ(q_.counters.copies.load(), 1u);
  EXPECT_EQ(q_.counters.copy_waits.load(), 1u);
  EXPECT_EQ(q_.counters.copy_bytes.load(), c.bytes);
}

TEST_F(DrivenTxEngine, MixedPayloadsKeepTheirOrderAndMappedOnesAreNotCopied) {
  uint8_t* dev_a = alloc(8192, MemKind::Gpu);
  uint8_t* dev_b = alloc(8192, MemKind::Gpu);
  uint8_t* pinned = alloc(8192, MemKind::CpuGpu);
  ASSERT_TRUE(dev_a && dev_b && pinned);
  std::vector<Bytes> want;
  std::vector<Send> sends;
  auto device = [&](uint8_t* base, uint32_t off, uint32_t len) {
    want.push_back(pattern(static_cast<uint32_t>(want.size()), len));
    std::memcpy(base + off, want.back().data(), len);
    sends.push_back({base + off, len, {}, 0});
  };
  device(dev_a, 0, 100);
  want.push_back(pattern(1, 300));
  sends.push_back({nullptr, 0, want.back(), 0});  // staged
  device(pinned, 64, 1500);                       // mapped: read in place
  device(dev_a, 128, 90);                         // joins the first copy
  device(dev_b, 4000, 2048);                      // another allocation
  device(dev_a, 1024, 64);                        // back to the first: a third copy
  push(sends);
  EXPECT_EQ(q_.engine->poll(), sends.size());
  const detail::TxCopyStats c = q_.engine->copy_stats();
  EXPECT_EQ(c.payloads, 4u);
  EXPECT_EQ(c.copies, 3u);
  EXPECT_EQ(c.waits, 1u);
  EXPECT_EQ(c.bytes, 218u + 2048u + 64u);
  EXPECT_EQ(received(), want);
}

TEST_F(DrivenTxEngine, PayloadsStagedByTheDeviceAreNotCopiedByTheEngine) {
  uint8_t* mem = alloc(8192, MemKind::Gpu);
  ASSERT_NE(mem, nullptr);
  const std::vector<uint32_t> lens = {64, 1500, 17, 2048, 100};  // aligned and not, whole chunks and not
  const std::vector<uint32_t> offsets = {0, 128, 1701, 2048, 4099};
  std::vector<Bytes> want;
  for (size_t i = 0; i < lens.size(); ++i) {
    want.push_back(pattern(static_cast<uint32_t>(i), lens[i]));
    std::memcpy(mem + offsets[i], want.back().data(), lens[i]);
  }
  dev::TxBatch b = txq_.reserve<Scope::Thread>(static_cast<uint32_t>(lens.size()));
  ASSERT_EQ(b.status(), dev::Status::Success);
  for (uint32_t i = 0; i < lens.size(); ++i) b.stage(i, mem + offsets[i], lens[i]);
  txq_.commit<Scope::Thread>(b);
  txq_.push();
  EXPECT_EQ(q_.engine->poll(), lens.size());
  EXPECT_EQ(q_.engine->copy_stats().copies, 0u);
  EXPECT_EQ(q_.engine->copy_stats().payloads, 0u);
  EXPECT_EQ(received(), want);
  EXPECT_EQ(txq_.completion_errors(), 0u);
}

TEST_F(DrivenTxEngine, PayloadsStagedByGroupsOfLanesArriveWhole) {
  uint8_t* mem = alloc(8192, MemKind::Gpu);
  ASSERT_NE(mem, nullptr);
  const std::vector<uint32_t> lens = {64, 1500, 17, 2048, 100, 1};  // aligned and not, whole words and not
  const std::vector<uint32_t> offsets = {0, 128, 1701, 2048, 4099, 6000};
  std::vector<Bytes> want;
  for (size_t i = 0; i < lens.size(); ++i) {
    want.push_back(pattern(static_cast<uint32_t>(i), lens[i]));
    std::memcpy(mem + offsets[i], want.back().data(), lens[i]);
  }
  EXPECT_EQ(dev::TxBatch::staging_lanes(64), 2u);
  EXPECT_EQ(dev::TxBatch::staging_lanes(1500), 32u);
  EXPECT_EQ(dev::TxBatch::staging_lanes(1), 1u);
  dev::TxBatch b = txq_.reserve<Scope::Thread>(static_cast<uint32_t>(lens.size() + 1));
  ASSERT_EQ(b.status(), dev::Status::Success);
  // The lanes of a group one after another, the last lane first: lane 0's
  // descriptor and the others' words do not depend on their order.
  for (uint32_t i = 0; i < lens.size(); ++i) {
    const uint32_t lanes = i == 2 ? 3 : dev::TxBatch::staging_lanes(lens[i]);
    for (uint32_t lane = lanes; lane-- > 0;)
      EXPECT_EQ(b.stage_part(i, mem + offsets[i], lens[i], lane, lanes), dev::Status::Success) << i << " " << lane;
  }
  const uint32_t over = static_cast<uint32_t>(lens.size());
  EXPECT_EQ(b.stage_part(over, mem, b.slot_size() + 1, 1, 2), dev::Status::InvalidValue);
  EXPECT_EQ(b.stage_part(over, mem, b.slot_size() + 1, 0, 2), dev::Status::InvalidValue);
  EXPECT_EQ(b.stage_part(over, mem, 64, 2, 2), dev::Status::InvalidValue);  // no such lane
  txq_.commit<Scope::Thread>(b);
  txq_.push();
  EXPECT_EQ(q_.engine->poll(), lens.size() + 1);
  EXPECT_EQ(q_.engine->copy_stats().copies, 0u);
  EXPECT_EQ(received(), want);  // the refused one is not sent
  EXPECT_EQ(dropped(TxDropReason::TooLong), 1u);
}

TEST_F(DrivenTxEngine, AFullArenaSplitsTheBurstNeverAPacket) {
  // Full-size packets with 4000-byte holes between them: one copy each way
  // would be cheaper in bytes, the plan merges them and runs out of arena.
  constexpr uint32_t kCount = 64, kLen = 2048, kSpacing = kLen + 4000;
  uint8_t* mem = alloc(kCount * kSpacing, MemKind::Gpu);
  ASSERT_NE(mem, nullptr);
  std::vector<Bytes> want;
  std::vector<Send> sends;
  for (uint32_t i = 0; i < kCount; ++i) {
    want.push_back(pattern(i, kLen));
    std::memcpy(mem + i * kSpacing, want.back().data(), kLen);
    sends.push_back({mem + i * kSpacing, kLen, {}, 0});
  }
  push(sends);
  const size_t first = q_.engine->poll();
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, kCount);
  EXPECT_EQ(txq_.completed(), first);
  size_t total = first;
  for (int polls = 0; total < kCount && polls < 8; ++polls) total += q_.engine->poll();
  EXPECT_EQ(total, kCount);
  EXPECT_GE(q_.engine->copy_stats().waits, 2u);
  EXPECT_EQ(received(), want);
}

// A backend whose every transmit call fails.
class FailingTx final : public backend::Backend {
 public:
  const EthCaps& caps() const override { return caps_; }
  Result<size_t> rx_burst(uint16_t, std::span<backend::RxFrame>) override { return size_t{0}; }
  bool at_end(uint16_t) const override { return true; }
  Result<size_t> tx_burst(uint16_t, std::span<const backend::TxFrame>) override {
    return Status(Errc::IoError, Layer::Backend, "test backend: transmit refused");
  }

 private:
  EthCaps caps_;
};

TEST_F(DrivenTxEngine, AFailedTransmitCompletesTheBurstAsDroppedBackendError) {
  restart(std::make_unique<FailingTx>(), 2048, 0);
  push({{nullptr, 0, pattern(1, 64), 0}, {nullptr, 0, pattern(2, 100), 0}, {nullptr, 0, {}, 0}});
  EXPECT_EQ(q_.engine->poll(), 3u);
  EXPECT_EQ(txq_.completed(), 3u);
  EXPECT_EQ(txq_.completion_errors(), 3u);
  EXPECT_EQ(dropped(TxDropReason::BackendError), 2u);
  EXPECT_EQ(dropped(TxDropReason::Empty), 1u);
  EXPECT_EQ(q_.counters.packets.load(), 0u);
  EXPECT_EQ(q_.counters.submitted.load(), 3u);
}

TEST_F(DrivenTxEngine, DescriptorsPushedButNotSentAtStopCompleteAsDroppedStopped) {
  const Bytes now = pattern(1, 64), later = pattern(2, 64);
  push({{nullptr, 0, now, 0}, {nullptr, 0, later, dev::host_now_ns() + 60'000'000'000ull}});  // +60 s
  EXPECT_EQ(q_.engine->poll(), 1u);
  EXPECT_EQ(q_.engine->stop(0).code(), Errc::Timeout);
  EXPECT_EQ(txq_.completed(), 2u) << "a kernel waiting on it must see it done";
  EXPECT_EQ(txq_.completion_errors(), 1u);
  EXPECT_EQ(dropped(TxDropReason::Stopped), 1u);
  EXPECT_EQ(q_.counters.packets.load(), 1u);
  EXPECT_EQ(q_.counters.submitted.load(), 2u);
  EXPECT_EQ(q_.counters.completions.load(), 2u);
  EXPECT_EQ(received(), std::vector<Bytes>{now});
}

TEST_F(DrivenTxEngine, AMaxSizePayloadInDeviceMemoryFitsTheArenaWhateverTheSlot) {
  // 64-byte slots: a burst of slots and their gaps is far less than one
  // 256 KiB frame, which must still be sent (not waited on forever).
  const std::string out = "/tmp/gnio-tx-arena-" + std::to_string(getpid()) + ".pcap";
  auto be = backend::open_backend("pcap-out:" + out);
  ASSERT_TRUE(be.has_value()) << be.status().to_string();
  restart(std::move(*be), 262144, 64);
  ASSERT_EQ(q_.engine->device_ring().slot_size, 64u);
  ASSERT_EQ(q_.engine->device_ring().max_len, 262144u);
  uint8_t* mem = alloc(262144 + 4096, MemKind::Gpu);
  ASSERT_NE(mem, nullptr);
  const Bytes big = pattern(3, 262144), small = pattern(4, 100);
  std::memcpy(mem, small.data(), small.size());
  std::memcpy(mem + 4096, big.data(), big.size());
  push({{mem, 100, {}, 0}, {mem + 4096, 262144, {}, 0}});
  size_t done = 0;
  for (int polls = 0; done < 2 && polls < 4; ++polls) done += q_.engine->poll();
  EXPECT_EQ(done, 2u);
  EXPECT_EQ(q_.counters.packets.load(), 2u);
  EXPECT_EQ(q_.counters.bytes.load(), 262144u + 100u);
  EXPECT_EQ(txq_.completion_errors(), 0u);
  std::remove(out.c_str());
}

TEST_F(DrivenTxEngine, APayloadOutsideRegisteredMemoryCompletesWithAnError) {
  uint8_t* mem = alloc(4096, MemKind::Gpu);
  ASSERT_NE(mem, nullptr);
  static const uint8_t unregistered[64] = {};
  const Bytes a = pattern(1, 80), b = pattern(2, 90);
  std::memcpy(mem, a.data(), a.size());
  std::memcpy(mem + 256, b.data(), b.size());
  push({{mem, 80, {}, 0}, {unregistered, 64, {}, 0}, {mem + 256, 90, {}, 0}, {mem + 4000, 200, {}, 0}});
  EXPECT_EQ(q_.engine->poll(), 4u);
  EXPECT_EQ(txq_.completed(), 4u);
  EXPECT_EQ(txq_.completion_errors(), 2u);  // not registered; runs past its allocation
  EXPECT_EQ(q_.counters.dropped[static_cast<size_t>(TxDropReason::NotRegistered)].load(), 2u);
  EXPECT_EQ(received(), (std::vector<Bytes>{a, b}));
}

TEST_F(DrivenTxEngine, ADescriptorHeldForItsSendTimeStopsThePoll) {
  const Bytes first = pattern(1, 64), held = pattern(2, 64);
  const uint64_t at = dev::host_now_ns() + 30'000'000;  // +30 ms
  push({{nullptr, 0, first, 0}, {nullptr, 0, held, at}});
  EXPECT_EQ(q_.engine->poll(), 1u);  // what is due goes at once
  EXPECT_EQ(q_.engine->hold_until_ns(), at);
  EXPECT_EQ(q_.engine->poll(), 0u);
  EXPECT_EQ(q_.engine->hold_until_ns(), at);
  EXPECT_EQ(q_.counters.waited_on_time.load(), 1u);  // counted once, however often polled
  EXPECT_EQ(received(), std::vector<Bytes>{first});
  gnio::test::eventually([&] { return q_.engine->poll() == 1; }, std::chrono::seconds(5));
  EXPECT_GE(dev::host_now_ns(), at);
  EXPECT_EQ(q_.engine->hold_until_ns(), 0u);
  EXPECT_EQ(received(), std::vector<Bytes>{held});
  EXPECT_EQ(txq_.completed(), 2u);
}

// ---- a kernel sending from device memory, on the device under test --------

using tx_test::frame_byte;
using tx_test::frame_len;
using tx_test::kSendStride;

TEST(TxFromDeviceMemory, EveryFrameArrivesByteExactInOrder) {
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string wire = "loop:tx-devmem-" + std::to_string(getpid()) + "-" + gpu.bus_id();
  auto a = EthDevice::open(wire);
  auto b = EthDevice::open(wire);
  ASSERT_TRUE(a.has_value() && b.has_value());
  auto txq = a->create_txq(0);
  ASSERT_TRUE(txq.has_value());
  ASSERT_TRUE(txq->set_depth(256));
  ASSERT_TRUE(txq->set_gpu(gpu));
  ASSERT_TRUE(txq->start());
  auto host_rx = b->create_rxq(0);
  ASSERT_TRUE(host_rx.has_value());
  ASSERT_TRUE(host_rx->start());
  auto h = GpuTxq::create(gpu, *txq);
  ASSERT_TRUE(h.has_value());
  const uint32_t n = 3000, burst = 40;
  auto strides = gpu.alloc(static_cast<size_t>(n) * kSendStride, MemKind::Gpu);
  ASSERT_TRUE(strides.has_value());
  LaunchConfig one_thread;
  one_thread.grid = 1;
  one_thread.block = 1;
  one_thread.name = "tx-devmem";
  auto k = tx_test::launch_device_send(gpu, one_thread, h->handle(), static_cast<uint8_t*>(strides->device_ptr()), n,
                                       burst);
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  std::vector<HostFrame> frames;
  gnio::test::eventually([&] {
    auto f = host_rx->host_receive(256);
    if (f)
      for (auto& x : *f) frames.push_back(std::move(x));
    return frames.size() >= n;
  });
  ASSERT_TRUE(k->stop());
  ASSERT_EQ(frames.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    Bytes want(frame_len(i));
    for (uint32_t j = 0; j < want.size(); ++j) want[j] = frame_byte(i, j);
    ASSERT_EQ(frames[i].data, want) << "frame " << i;
  }
  const TxqStats s = txq->stats();
  EXPECT_EQ(s.packets, n);
  EXPECT_EQ(s.completions, n);
  EXPECT_EQ(s.errors, 0u);
  // Every payload lies in device memory: read through the arena, strides
  // of a burst in one copy that keeps the gaps between them.
  uint64_t payload_bytes = 0;
  for (uint32_t i = 0; i < n; ++i) payload_bytes += frame_len(i);
  EXPECT_GE(s.copy_waits, 1u);
  EXPECT_GE(s.copies, s.copy_waits);
  EXPECT_LE(s.copies, n);
  EXPECT_GE(s.copy_bytes, payload_bytes);
  EXPECT_LE(s.copy_bytes, static_cast<uint64_t>(n) * kSendStride);
  EXPECT_EQ(k->totals().packets, n);
  ASSERT_TRUE(h->destroy());
  ASSERT_TRUE(txq->destroy());
}

}  // namespace
