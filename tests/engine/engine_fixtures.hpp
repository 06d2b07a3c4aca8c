// SPDX-License-Identifier: Apache-2.0
// What the engine tests share: a kernel that records every descriptor it
// receives, a queue started with the tests' settings, the checks of
// delivered frames against the source's, and a receiver that only counts.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "../core/test_support.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "engine/rx_engine.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "owned_backend.hpp"

namespace gnio::test {

// What the kernel saw at one descriptor index.
struct Seen {
  uint32_t len, flags, rss_hash, times;
  uint64_t timestamp_ns, fnv;
};

// Records every descriptor; waits for *go (when set) before it receives
// anything. At warp or block scope the threads of the scope share each burst.
template <Scope S = Scope::Thread>
struct RecordKernel {
  dev::Rxq rxq;
  Seen* seen;  // GpuCpu memory
  uint64_t capacity;
  const uint32_t* go = nullptr;
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    for (uint32_t spins = 0; go && dev::load_acquire(go) == 0 && ctx.running(); ++spins) dev::backoff(spins);
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

inline LaunchConfig one_thread(const char* name) {
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
      gpu, one_thread("record"), RecordKernel<>{h->handle(), static_cast<Seen*>(seen->device_ptr()), capacity, go});
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

inline void start_queue(Gpu& gpu, EthRxq& q, RingMem mem, uint32_t strides, uint32_t max_packet = 0,
                 RxOffloads offloads = {}) {
  ASSERT_TRUE(q.set_num_strides(strides));
  ASSERT_TRUE(q.set_stride_size(2048));
  if (max_packet) {
    ASSERT_TRUE(q.set_max_packet_size(max_packet));
  }
  for (Status s : {q.set_burst_size(32), q.set_ring_mem(mem), q.set_rx_offloads(offloads), q.set_gpu(gpu), q.start()})
    ASSERT_TRUE(s) << s.to_string();
}

inline uint64_t dropped_total(const RxqStats& s) {
  uint64_t n = 0;
  for (uint64_t d : s.dropped) n += d;
  return n;
}

// What the queue should have delivered of the backend's frame i, cut to max.
inline void expect_frame(const Seen& got, const std::vector<uint8_t>& want, uint32_t max_packet, uint64_t i) {
  const uint32_t len = std::min<uint32_t>(static_cast<uint32_t>(want.size()), max_packet);
  const bool cut = len < want.size();
  EXPECT_EQ(got.times, 1u) << "frame " << i;
  EXPECT_EQ(got.len, len) << "frame " << i;
  EXPECT_EQ(got.fnv, dev::fnv1a64(want.data(), len)) << "frame " << i;
  EXPECT_EQ(dev::has_flag(got.flags, dev::PacketFlags::FrameTruncated), cut) << "frame " << i;
}

// Every frame of an owned backend arrived once, in order, with its bytes and
// timestamp, and none was dropped.
inline void expect_every_owned_frame(const Received& run, OwnedBackend& be, const EthRxq& q, uint64_t count) {
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
inline void expect_every_buffer_back(OwnedBackend& be, uint64_t count) {
  EXPECT_TRUE(eventually([&] { return be.released() == count; }));
  EXPECT_EQ(be.out_of_order(), 0u);
  EXPECT_EQ(be.outstanding(), 0u);
}

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

}  // namespace gnio::test
