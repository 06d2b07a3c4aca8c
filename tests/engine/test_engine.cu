// SPDX-License-Identifier: Apache-2.0
// The RX NIC engine on the device named by GNIO_TEST_GPU (the emulated
// device by default): frames in place in backend-owned memory and copied
// from it, drop reasons and truncation, offered == delivered + dropped for
// every backend, offloads on and off, and engine threads shared by queues.
#include <gtest/gtest.h>

#include <dirent.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <set>
#include <string>

#include "../core/test_support.hpp"
#include "gnio/host_reference.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "engine/rx_engine.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/log.hpp"
#include "gnio/metrics.hpp"
#include "gnio/persistent_kernel.hpp"
#include "owned_backend.hpp"

using namespace gnio;
using gnio::test::eventually;
using gnio::test::OwnedBackend;
using gnio::test::OwnedOptions;

namespace {

// What the kernel saw at one descriptor index.
struct Seen {
  uint32_t len, flags, rss_hash, times;
  uint64_t timestamp_ns, fnv;
};

// Records every descriptor; waits for *go before it receives anything.
struct RecordKernel {
  dev::Rxq rxq;
  Seen* seen;  // GpuCpu memory
  uint64_t capacity;
  const uint32_t* go;
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    for (uint32_t spins = 0; go && dev::load_acquire(go) == 0 && ctx.running(); ++spins) dev::backoff(spins);
    while (ctx.running()) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<Scope::Thread>(32, dev::kPollNs);
      for (uint32_t i = 0; i < b.count(); ++i) {
        const uint64_t idx = b.first() + i;
        if (idx >= capacity) {
          ctx.count_error();
          continue;
        }
        dev::Packet p = b[i];
        seen[idx] = {p.size(), p.flags(), p.rss_hash(), seen[idx].times + 1, p.timestamp_ns(),
                     dev::fnv1a64(p.data(), p.size())};
      }
      rxq.release<Scope::Thread>(b);
    }
  }
};

LaunchConfig one_thread(const char* name) {
  LaunchConfig c;
  c.grid = 1;
  c.block = 1;
  c.name = name;
  return c;
}

struct Received {
  std::vector<Seen> seen;
  RxqStats stats;
  const uint8_t* ring_data = nullptr;
};

// Receives from a started queue until `done()`, recording every descriptor.
template <typename Done>
void record(Gpu& gpu, EthRxq& q, size_t capacity, Done&& done, Received& run, uint32_t* go = nullptr,
            void (*before_go)(EthRxq&) = nullptr) {
  auto h = GpuRxq::create(gpu, q);
  ASSERT_TRUE(h.has_value()) << h.status().to_string();
  auto seen = gpu.alloc(sizeof(Seen) * capacity, MemKind::GpuCpu);
  ASSERT_TRUE(seen.has_value());
  auto k = PersistentKernel::launch(
      gpu, one_thread("record"), RecordKernel{h->handle(), static_cast<Seen*>(seen->device_ptr()), capacity, go});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  if (before_go) before_go(q);
  if (go) dev::store_release(go, 1u);
  EXPECT_TRUE(eventually([&] { return done(); }, std::chrono::seconds(60)));
  ASSERT_TRUE(k->stop());
  EXPECT_EQ(k->totals().errors, 0u) << "descriptors beyond what the source offered";
  const auto* s = static_cast<const Seen*>(seen->host_ptr());
  run.seen.assign(s, s + capacity);
  run.stats = q.stats();
  run.ring_data = q.impl()->engine->device_ring().data;
}

void start_queue(Gpu& gpu, EthRxq& q, RingMem mem, uint32_t strides, uint32_t max_packet = 0,
                 RxOffloads offloads = {}) {
  ASSERT_TRUE(q.set_num_strides(strides));
  ASSERT_TRUE(q.set_stride_size(2048));
  if (max_packet) {
    ASSERT_TRUE(q.set_max_packet_size(max_packet));
  }
  for (Status s : {q.set_burst_size(32), q.set_ring_mem(mem), q.set_rx_offloads(offloads), q.set_gpu(gpu), q.start()})
    ASSERT_TRUE(s) << s.to_string();
}

uint64_t dropped_total(const RxqStats& s) {
  uint64_t n = 0;
  for (uint64_t d : s.dropped) n += d;
  return n;
}

// What the queue should have delivered of the backend's frame i, cut to max.
void expect_frame(const Seen& got, const std::vector<uint8_t>& want, uint32_t max_packet, uint64_t i) {
  const uint32_t len = std::min<uint32_t>(static_cast<uint32_t>(want.size()), max_packet);
  const bool cut = len < want.size();
  EXPECT_EQ(got.times, 1u) << "frame " << i;
  EXPECT_EQ(got.len, len) << "frame " << i;
  EXPECT_EQ(got.fnv, dev::fnv1a64(want.data(), len)) << "frame " << i;
  EXPECT_EQ(dev::has_flag(got.flags, dev::PacketFlags::FrameTruncated), cut) << "frame " << i;
}

// Every frame of an owned backend arrived once, in order, with its bytes and
// timestamp, and none was dropped.
void expect_every_owned_frame(const Received& run, OwnedBackend& be, const EthRxq& q, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    expect_frame(run.seen[i], be.frame(i), q.max_packet_size(), i);
    EXPECT_EQ(run.seen[i].timestamp_ns, i + 1);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(run.stats.offered, count);
  EXPECT_EQ(run.stats.packets, count);
  EXPECT_EQ(dropped_total(run.stats), 0u);
}

// Every buffer went back to the owned backend, in the order it was lent.
void expect_every_buffer_back(OwnedBackend& be, uint64_t count) {
  EXPECT_TRUE(eventually([&] { return be.released() == count; }));
  EXPECT_EQ(be.out_of_order(), 0u);
  EXPECT_EQ(be.outstanding(), 0u);
}

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
    EXPECT_EQ(run.stats.copies, 0u);
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

// ---- backend memory into a ring in device memory: one DMA per run -----------

// RecordKernel at a receive scope: the threads of a warp or block share
// each burst.
template <Scope S>
struct ScopedRecordKernel {
  dev::Rxq rxq;
  Seen* seen;  // GpuCpu memory
  uint64_t capacity;
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    while (ctx.running()) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(32, dev::kPollNs);
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        const uint64_t idx = b.first() + i;
        if (idx >= capacity) {
          ctx.count_error();
          continue;
        }
        dev::Packet p = b[i];
        seen[idx] = {p.size(), p.flags(), p.rss_hash(), seen[idx].times + 1, p.timestamp_ns(),
                     dev::fnv1a64(p.data(), p.size())};
      }
      rxq.release<S>(b);
    }
  }
};

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
      gpu, c, ScopedRecordKernel<S>{h->handle(), static_cast<Seen*>(seen->device_ptr()), capacity});
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

// The most copies a run of `packets` frames of one stride each may take:
// per publish one run and one descriptor range, plus one more of each
// where the backend's buffers, the ring's strides or its descriptors wrap.
uint64_t run_copy_bound(const RxqStats& s, uint64_t buffers, uint64_t strides) {
  return 2 * s.bursts + s.packets / buffers + 2 * (s.packets / strides) + 3;
}

class DeviceRingFromBackendMemory : public ::testing::TestWithParam<Scope> {};

// Buffers the size of a stride: the frames lie at the same distances in the
// backend's memory and in the ring, so they are copied in runs, not one by
// one; every frame arrives once, in order, and goes back to the backend.
TEST_P(DeviceRingFromBackendMemory, RunsOfFramesFromOwnedBuffersInOrderAndEveryBufferBack) {
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
  EXPECT_LE(run.stats.copies, run_copy_bound(run.stats, o.buffers, 1024))
      << run.stats.bursts << " publications of " << run.stats.packets << " frames";
  EXPECT_LE(run.stats.copies * 4, run.stats.packets) << "frames copied one by one";
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
  // 30000 frames through 1000 buffers: they went back to the source.
  EXPECT_LE(run.stats.copies, run_copy_bound(run.stats, 1000, 512));
  EXPECT_LE(run.stats.copies * 4, run.stats.packets);
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

// offered == delivered + sum(dropped), and delivered == what the host path
// reads of the same source, for every backend.
TEST(Engine, OfferedIsDeliveredPlusDroppedForEveryBackend) {
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string sample = std::string("pcap:") + GNIO_DATA_DIR + "/sample.pcap";
  for (const std::string& spec : {std::string("synthetic:count=3000,size=64-9000,proto=mix,seed=3"), sample}) {
    SCOPED_TRACE(spec);
    auto want = host_receive_totals(spec);
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    auto dev = EthDevice::open(spec);
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    auto q = dev->create_rxq(0);
    ASSERT_TRUE(q.has_value());
    start_queue(gpu, *q, RingMem::Host, 512);
    Received run;
    record(gpu, *q, want->packets + 1, [&] { return q->at_end(); }, run);
    uint64_t bytes = 0, checksum = 0;
    for (uint64_t i = 0; i < want->packets; ++i) {
      bytes += run.seen[i].len;
      checksum += run.seen[i].fnv;
    }
    EXPECT_EQ(run.stats.packets, want->packets);
    EXPECT_EQ(bytes, want->bytes);
    EXPECT_EQ(checksum, want->checksum);
    EXPECT_EQ(run.stats.packets + dropped_total(run.stats), run.stats.offered);
  }
  // loop: what the host sends on TX queue 0 arrives on RX queue 0.
  auto dev = EthDevice::open("loop:");
  ASSERT_TRUE(dev.has_value());
  auto rxq = dev->create_rxq(0);
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(rxq.has_value() && txq.has_value());
  start_queue(gpu, *rxq, RingMem::Gpu, 512);
  ASSERT_TRUE(txq->start());
  backend::SyntheticOptions so = *backend::parse_synthetic_spec("synthetic:size=60-1500,seed=5");
  std::vector<std::vector<uint8_t>> frames;
  for (uint64_t i = 0; i < 2000; ++i) frames.push_back(backend::make_synthetic_frame(so, i));
  Received run;
  std::thread sender([&] {
    for (size_t i = 0; i < frames.size();) {
      std::span<const uint8_t> one[1] = {frames[i]};
      auto n = txq->host_send(one);
      if (n && *n == 1) ++i;
    }
  });
  record(gpu, *rxq, frames.size() + 1, [&] { return rxq->stats().released == frames.size(); }, run);
  sender.join();
  for (size_t i = 0; i < frames.size(); ++i) {
    expect_frame(run.seen[i], frames[i], rxq->max_packet_size(), i);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_EQ(run.stats.offered, frames.size());
  EXPECT_EQ(run.stats.packets, frames.size());
}

// Descriptor metadata is computed only when asked for; when asked, it is
// what the device-side parser says of the same bytes.
TEST(Engine, OffloadsOffLeaveMetadataEmptyOnFillItCorrectly) {
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string spec = "synthetic:count=2000,size=96-1500,proto=mix,ipv6=mix,seed=13,queues=2";
  for (bool on : {false, true}) {
    for (uint16_t queue : {0, 1}) {
      SCOPED_TRACE(std::string(on ? "offloads on" : "offloads off") + ", queue " + std::to_string(queue));
      std::vector<std::vector<uint8_t>> want;
      {
        auto d = EthDevice::open(spec);
        auto hq = d->create_rxq(queue);
        ASSERT_TRUE(hq->start());
        while (!hq->at_end()) {
          auto got = hq->host_receive(64);
          ASSERT_TRUE(got.has_value()) << got.status().to_string();
          for (HostFrame& f : *got) want.push_back(std::move(f.data));
        }
      }
      auto dev = EthDevice::open(spec);
      auto q = dev->create_rxq(queue);
      ASSERT_TRUE(q.has_value());
      start_queue(gpu, *q, RingMem::Host, 256, 0, on ? RxOffloads::all() : RxOffloads{});
      Received run;
      record(gpu, *q, want.size(), [&] { return q->at_end(); }, run);
      for (size_t i = 0; i < want.size(); ++i) {
        const uint8_t* f = want[i].data();
        const uint32_t len = static_cast<uint32_t>(want[i].size());
        EXPECT_EQ(run.seen[i].flags, on ? dev::classify(f, len) : 0u) << "frame " << i;
        EXPECT_EQ(run.seen[i].rss_hash, on ? dev::rss_hash(f, len) : 0u) << "frame " << i;
        if (::testing::Test::HasFailure()) break;
      }
    }
  }
}

// Threads of this process and the cores each may run on.
// The engine threads of this process (named gnio-rx-engine; a sanitizer's
// own threads are not counted) and the cores each may run on.
std::map<std::string, std::string> threads_and_cores() {
  std::map<std::string, std::string> out;
  DIR* d = opendir("/proc/self/task");
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] == '.') continue;
    std::string name;
    std::getline(std::ifstream(std::string("/proc/self/task/") + e->d_name + "/comm"), name);
    if (name != "gnio-rx-engine") continue;
    std::ifstream status(std::string("/proc/self/task/") + e->d_name + "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.starts_with("Cpus_allowed_list:")) out[e->d_name] = line.substr(line.find_first_not_of(" \t", 18));
  }
  if (d) closedir(d);
  return out;
}

// N queues need not cost N threads: threads=T runs them on T engine
// threads, cores= pins those, and each queue still receives.
TEST(Engine, QueuesShareEngineThreadsPinnedWhereAsked) {
  GNIO_OPEN_TEST_GPU(gpu);
  struct Case {
    std::string placement;
    size_t threads;
    std::string cores;  // what the new threads may run on ("" = not checked)
  };
  for (const Case& c : {Case{"", 4, ""}, Case{",threads=1", 1, ""}, Case{",threads=2", 2, ""},
                        Case{",cores=0", 1, "0"}}) {
    SCOPED_TRACE("placement '" + c.placement + "'");
    auto dev = EthDevice::open("synthetic:count=4000,size=64-512,flows=64,queues=4" + c.placement);
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    const auto before = threads_and_cores();
    std::vector<EthRxq> qs;
    for (uint16_t i = 0; i < 4; ++i) {
      auto q = dev->create_rxq(i);
      ASSERT_TRUE(q.has_value());
      start_queue(gpu, *q, RingMem::Host, 64);
      qs.push_back(std::move(*q));
    }
    const auto after = threads_and_cores();
    std::vector<std::string> added;
    for (const auto& [tid, cores] : after)
      if (!before.count(tid)) added.push_back(cores);
    EXPECT_EQ(added.size(), c.threads);
    for (const auto& cores : added) {
      if (!c.cores.empty()) {
        EXPECT_EQ(cores, c.cores);
      }
    }
    // Every queue fills its ring: each is served.
    for (auto& q : qs) EXPECT_TRUE(eventually([&] { return q.stats().packets == 64; })) << q.stats().packets;
  }
}

// ---- exact drain, engine accounting, errors ---------------------------------

// Receives on a started queue with ReceiveKernel until stopped.
struct Receiver {
  Gpu& gpu;
  std::optional<GpuRxq> handle;
  std::optional<DeviceMemory> totals;
  std::optional<PersistentKernel> kernel;

  Receiver(Gpu& g, EthRxq& q) : gpu(g) {
    auto h = GpuRxq::create(gpu, q);
    EXPECT_TRUE(h.has_value()) << h.status().to_string();
    if (!h) return;
    handle.emplace(std::move(*h));
    auto t = gpu.alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
    EXPECT_TRUE(t.has_value());
    if (!t) return;
    totals.emplace(std::move(*t));
    std::memset(totals->host_ptr(), 0, sizeof(dev::ReceiveTotals));
    auto k = PersistentKernel::launch(
        gpu, one_thread("receive"),
        dev::ReceiveKernel<Scope::Thread>{dev::RxQueueSet::of(handle->handle()),
                                               static_cast<dev::ReceiveTotals*>(totals->device_ptr()), 32});
    EXPECT_TRUE(k.has_value()) << k.status().to_string();
    if (k) kernel.emplace(std::move(*k));
  }
  bool ok() const { return kernel.has_value(); }
  // Stops the kernel; what it received in all.
  dev::ReceiveTotals stop() {
    EXPECT_TRUE(kernel->stop());
    dev::ReceiveTotals t = *static_cast<const dev::ReceiveTotals*>(totals->host_ptr());
    kernel.reset();
    handle.reset();
    return t;
  }
};

// stop_source() on an endless source: stats are final when it returns, the
// kernel then consumes everything published, and what it counted is what
// the queue delivered; offered == delivered + dropped exactly.
TEST(Engine, StopSourceDrainsExactly) {
  GNIO_OPEN_TEST_GPU(gpu);
  struct Case {
    std::string spec;
    RingMem mem;
  };
  for (const Case& c : {Case{"synthetic:count=0,size=64-1500,proto=mix,seed=9", RingMem::Gpu},
                        Case{"synthetic:count=0,size=64-1500,proto=mix,seed=9", RingMem::Host},
                        Case{"mem:frames=64,ring=128,pps=3000000,count=0", RingMem::Host},
                        Case{"mem:frames=64,ring=128,pps=3000000,count=0", RingMem::Gpu}}) {
    SCOPED_TRACE(c.spec + (c.mem == RingMem::Gpu ? " mem=gpu" : " mem=host"));
    auto dev = EthDevice::open(c.spec);
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    auto q = dev->create_rxq(0);
    ASSERT_TRUE(q.has_value());
    start_queue(gpu, *q, c.mem, 256);
    Receiver rx(gpu, *q);
    ASSERT_TRUE(rx.ok());
    const bool flowing = eventually([&] { return q->stats().packets > 20000; }, std::chrono::seconds(60));
    {
      const RxqStats s = q->stats();
      ASSERT_TRUE(flowing) << "after 60 s: offered " << s.offered << ", delivered " << s.packets << ", dropped "
                           << dropped_total(s) << " (ring full " << s.rx_missed << "), released " << s.released
                           << ", publications " << s.bursts << ", copies " << s.copies << ", errors " << s.errors
                           << ", engine turns " << s.work_polls << " with work / " << s.idle_polls << " idle";
    }
    ASSERT_TRUE(q->stop_source());
    const RxqStats at_stop = q->stats();
    EXPECT_EQ(at_stop.packets + dropped_total(at_stop), at_stop.offered);
    ASSERT_TRUE(eventually([&] { return q->at_end(); }, std::chrono::seconds(60)));
    const dev::ReceiveTotals got = rx.stop();
    const RxqStats end = q->stats();
    EXPECT_EQ(end.offered, at_stop.offered) << "the source offered frames after stop_source()";
    EXPECT_EQ(end.packets, at_stop.packets);
    EXPECT_EQ(got.packets, end.packets);
    EXPECT_EQ(got.bytes, end.bytes);
    EXPECT_EQ(end.released, end.packets);
    EXPECT_EQ(end.packets + dropped_total(end), end.offered);
    EXPECT_TRUE(q->stop_source()) << "a second call returns at once";
  }
}

// The host path: no frame after stop_source(), and the queue is at its end.
TEST(Engine, StopSourceEndsTheHostPath) {
  auto dev = EthDevice::open("synthetic:count=0,size=128");
  ASSERT_TRUE(dev.has_value());
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  EXPECT_FALSE(q->stop_source()) << "a queue that has not started has no source to stop";
  ASSERT_TRUE(q->start());
  auto first = q->host_receive(16);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->size(), 16u);
  EXPECT_FALSE(q->at_end());
  ASSERT_TRUE(q->stop_source());
  EXPECT_TRUE(q->at_end());
  auto after = q->host_receive(16);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->size(), 0u);
  EXPECT_EQ(q->stats().offered, 16u);
  EXPECT_EQ(q->stats().packets, 16u);
}

// The engine's turns on a queue: an idle source is idle time only; frames
// wake it; busy + idle time stays within the time the queue ran, and the
// counters only grow. The exposition carries the same values.
TEST(Engine, TurnsAndBusyIdleTimeAreCountedPerQueue) {
  GNIO_OPEN_TEST_GPU(gpu);
  using Clock = std::chrono::steady_clock;
  auto dev = EthDevice::open("loop:");
  ASSERT_TRUE(dev.has_value());
  auto rxq = dev->create_rxq(0);
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(rxq.has_value() && txq.has_value());
  const auto t_before = Clock::now();
  start_queue(gpu, *rxq, RingMem::Host, 256);
  const auto t_started = Clock::now();
  ASSERT_TRUE(txq->start());
  Receiver rx(gpu, *rxq);
  ASSERT_TRUE(rx.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const RxqStats idle = rxq->stats();
  const auto t_idle = Clock::now();
  EXPECT_EQ(idle.work_polls, 0u);
  EXPECT_EQ(idle.busy_ns, 0u);
  EXPECT_GT(idle.idle_polls, 0u);
  const auto ns = [](auto d) { return static_cast<uint64_t>(std::chrono::nanoseconds(d).count()); };
  EXPECT_LE(idle.idle_ns, ns(t_idle - t_before));
  EXPECT_GE(idle.idle_ns, ns(t_idle - t_started) / 2) << "the engine thread's time is not accounted";

  backend::SyntheticOptions so = *backend::parse_synthetic_spec("synthetic:size=60-1500,seed=5");
  for (uint64_t i = 0; i < 100; ++i) {
    const std::vector<uint8_t> f = backend::make_synthetic_frame(so, i);
    std::span<const uint8_t> one[1] = {f};
    ASSERT_TRUE(eventually([&] {
      auto n = txq->host_send(one);
      return n && *n == 1;
    }));
  }
  ASSERT_TRUE(eventually([&] { return rxq->stats().released == 100; }));
  const RxqStats woke = rxq->stats();
  const auto t_woke = Clock::now();
  EXPECT_GE(woke.work_polls, 1u);
  EXPECT_LE(woke.work_polls, 200u) << "100 frames and their release at most";
  EXPECT_GT(woke.busy_ns, 0u);
  EXPECT_GE(woke.idle_polls, idle.idle_polls);
  EXPECT_GE(woke.idle_ns, idle.idle_ns);
  EXPECT_LE(woke.busy_ns + woke.idle_ns, ns(t_woke - t_before));
  EXPECT_EQ(rx.stop().packets, 100u);

  metrics::Writer w;
  metrics::add_rxq(w, woke, {{"queue", "0"}});
  auto samples = metrics::parse(w.text());
  ASSERT_TRUE(samples.has_value()) << samples.status().to_string();
  std::map<std::string, double> by_name;
  for (const metrics::Sample& m : *samples)
    if (m.label("queue") == "0") by_name[m.name] = m.value;
  EXPECT_EQ(by_name["gnio_rx_engine_work_polls_total"], static_cast<double>(woke.work_polls));
  EXPECT_EQ(by_name["gnio_rx_engine_idle_polls_total"], static_cast<double>(woke.idle_polls));
  EXPECT_DOUBLE_EQ(by_name["gnio_rx_engine_busy_seconds_total"], static_cast<double>(woke.busy_ns) / 1e9);
  EXPECT_DOUBLE_EQ(by_name["gnio_rx_engine_idle_seconds_total"], static_cast<double>(woke.idle_ns) / 1e9);
}

// A source error is the caller's to report (source_status()): the engine
// logs it at debug only, naming the queue.
TEST(Engine, SourceErrorIsLoggedAtDebugWithItsQueue) {
  GNIO_OPEN_TEST_GPU(gpu);
  struct Line {
    logging::Level level;
    std::string component;
    int queue;
    std::string message;
  };
  std::mutex mu;
  std::vector<Line> lines;
  const logging::Level was = logging::level();
  logging::set_level(logging::Level::Debug);
  logging::set_sink([&](const logging::Event& e) {
    std::lock_guard lock(mu);
    lines.push_back({e.level, std::string(e.component), e.queue, std::string(e.message)});
  });
  {
    auto dev = EthDevice::open("fault:error_at=300,inner=synthetic:count=0,size=128,queues=2");
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    auto q = dev->create_rxq(1);
    ASSERT_TRUE(q.has_value());
    start_queue(gpu, *q, RingMem::Gpu, 256);
    Receiver rx(gpu, *q);
    ASSERT_TRUE(rx.ok());
    ASSERT_TRUE(eventually([&] { return q->at_end(); }, std::chrono::seconds(60)));
    EXPECT_EQ(rx.stop().packets, 300u);
    const Status why = q->source_status();
    EXPECT_FALSE(why.is_ok());
    EXPECT_EQ(q->stats().errors, 1u);
    logging::set_sink({});
    logging::set_level(was);
    std::lock_guard lock(mu);
    size_t debug_lines = 0;
    for (const Line& l : lines) {
      if (l.component != "rx-engine") continue;
      EXPECT_NE(l.level, logging::Level::Error) << l.message;
      if (l.level == logging::Level::Debug && l.message.find(why.message()) != std::string::npos) {
        ++debug_lines;
        EXPECT_EQ(l.queue, 1);
      }
    }
    EXPECT_EQ(debug_lines, 1u);
  }
  logging::set_sink({});
  logging::set_level(was);
}

// Frames cut at the queue's max packet size keep the IPv4 header checksum
// state: the header is whole even when the L4 part is not.
TEST(Engine, CutFramesCarryTheirIpv4HeaderChecksumState) {
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string spec = "synthetic:count=300,size=1000,proto=mix,seed=4";
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value());
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  RxOffloads csum;
  csum.checksum = true;
  start_queue(gpu, *q, RingMem::Host, 256, 60, csum);
  Received run;
  record(gpu, *q, 300, [&] { return q->at_end(); }, run);
  backend::SyntheticOptions so = *backend::parse_synthetic_spec(spec);
  for (uint64_t i = 0; i < 300; ++i) {
    const std::vector<uint8_t> f = backend::make_synthetic_frame(so, i);
    const uint32_t flags = run.seen[i].flags;
    EXPECT_EQ(run.seen[i].len, 60u) << "frame " << i;
    EXPECT_TRUE(dev::has_flag(flags, dev::PacketFlags::FrameTruncated)) << "frame " << i;
    EXPECT_TRUE(dev::has_flag(flags, dev::PacketFlags::L3CsumGood)) << "frame " << i << " flags " << flags;
    EXPECT_FALSE(dev::has_flag(flags, dev::PacketFlags::L3CsumBad)) << "frame " << i;
    EXPECT_EQ(flags & ~dev::bit(dev::PacketFlags::FrameTruncated), dev::classify(f.data(), 60)) << "frame " << i;
    if (::testing::Test::HasFailure()) break;
  }
}

// A paced prebuilt source whose buffers are all lent loses what comes due,
// as a NIC does; every lost frame is offered and counted under ring_full.
TEST(Engine, PacedPrebuiltSourceCountsWhatItLoses) {
  GNIO_OPEN_TEST_GPU(gpu);
  for (RingMem mem : {RingMem::Host, RingMem::Gpu}) {
    SCOPED_TRACE(mem == RingMem::Gpu ? "mem=gpu" : "mem=host");
    auto dev = EthDevice::open("mem:frames=16,ring=64,pps=2000000,count=20000");
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    auto q = dev->create_rxq(0);
    ASSERT_TRUE(q.has_value());
    start_queue(gpu, *q, mem, 256);  // no consumer: the 64 buffers stay lent
    ASSERT_TRUE(eventually([&] { return q->stats().offered == 20000; }, std::chrono::seconds(30)))
        << q->stats().offered;
    const RxqStats s = q->stats();
    EXPECT_EQ(s.packets, 64u);
    EXPECT_EQ(s.dropped[static_cast<size_t>(DropReason::RingFull)], 20000u - 64u);
    EXPECT_EQ(s.rx_missed, 20000u - 64u);
    EXPECT_EQ(s.packets + dropped_total(s), s.offered);
  }
}

}  // namespace
