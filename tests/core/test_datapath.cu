// SPDX-License-Identifier: Apache-2.0
// The device API end to end through persistent kernels, on the device named
// by GNIO_TEST_GPU (the emulated device by default): ring wrap-around at
// every scope and ring memory, TX with Again and drain, wait-on-time,
// semaphores, stop with a stalled kernel, and teardown while a kernel runs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <tuple>
#include <vector>

#include "../support/gpu_choice.hpp"
#include "gnio/host_reference.hpp"
#include "gnio/dev/stock_kernels.hpp"
#include "gnio/dev/semaphore.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "test_support.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace gnio;
using gnio::test::eventually;

namespace {

// Ignores its exit flag until *release is set: a stand-in for a kernel stuck
// on a queue that never drains. Its heartbeat does not move while stuck.
struct StuckKernel {
  uint32_t* release;
  GNIO_HD void operator()(const dev::KernelCtx&) const {
    for (uint32_t spins = 0; dev::load_acquire(release) == 0; ++spins) dev::backoff(spins);
  }
};

struct IdleKernel {
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    for (uint32_t spins = 0; ctx.running(); ++spins) {
      ctx.heartbeat();
      dev::backoff(spins);
    }
  }
};

// Sends n frames written into the staging slots: frame i carries i in its
// first 8 bytes and (i + j) & 0xff after. send_times[i] != 0 holds frame i.
struct StagedSendKernel {
  dev::Txq txq;
  uint32_t n;
  uint32_t size;
  const uint64_t* send_times;
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    for (uint32_t i = 0; i < n && ctx.running(); ++i) {
      dev::TxBatch b = txq.reserve<Scope::Thread>(1);
      while (b.status() == dev::Status::Again && ctx.running()) {
        ctx.count_again();
        txq.wait_completions(txq.completed() + 1, 100000);
        b = txq.reserve<Scope::Thread>(1);
      }
      if (b.status() != dev::Status::Success) return;
      uint8_t* p = b.staging(0);
      for (uint32_t j = 0; j < 8; ++j) p[j] = static_cast<uint8_t>(static_cast<uint64_t>(i) >> (8 * j));
      for (uint32_t j = 8; j < size; ++j) p[j] = static_cast<uint8_t>(i + j);
      b.set_staged(0, size, send_times ? send_times[i] : 0);
      txq.commit<Scope::Thread>(b);
      txq.push();
      ctx.count_packets(1, size);
      ctx.count_burst<Scope::Thread>();
    }
    while (ctx.running()) ctx.heartbeat();
  }
};

// Reserves the whole ring without committing (the engine cannot complete
// anything), then one more: that one must be Again. Then commits, pushes,
// drains, and reserves again: Success.
struct ReserveAllKernel {
  dev::Txq txq;
  int32_t* results;  // [0]: status of the extra reserve, [1]: after drain, [2]: drain status
  GNIO_HD void operator()(const dev::KernelCtx&) const {
    const uint32_t depth = txq.depth();
    dev::TxBatch all = txq.reserve<Scope::Thread>(depth);
    dev::TxBatch extra = txq.reserve<Scope::Thread>(1);
    results[0] = static_cast<int32_t>(extra.status());
    for (uint32_t i = 0; i < all.count(); ++i) {
      all.staging(i)[0] = static_cast<uint8_t>(i);
      all.set_staged(i, 64);
    }
    txq.commit<Scope::Thread>(all);
    txq.push();
    results[2] = static_cast<int32_t>(txq.wait_completions(all.first() + all.count(), 5000000000ull));
    results[1] = static_cast<int32_t>(txq.reserve<Scope::Thread>(1).status());
  }
};

struct SemaphoreKernel {
  dev::Semaphore sem;
  GNIO_HD void operator()(const dev::KernelCtx&) const {
    for (uint32_t i = 0; i < sem.count(); ++i) {
      uint64_t v = 7ull * i + 1;
      std::memcpy(sem.payload(i), &v, sizeof(v));
      sem.set_status(i, dev::SemStatus::Ready);
    }
    for (uint32_t spins = 0; sem.get_status(0) != dev::SemStatus::Exit; ++spins) dev::backoff(spins);
  }
};

// Records what it saw at each descriptor index: packets must arrive in
// source order, each exactly once.
struct SeenPacket {
  uint32_t len;
  uint32_t times;
  uint64_t fnv;
};

template <Scope S>
struct RecordKernel {
  dev::Rxq rxq;
  SeenPacket* seen;  // GpuCpu memory, one per source packet
  uint64_t capacity;
  uint32_t burst;
  GNIO_HD void operator()(const dev::KernelCtx& ctx) const {
    while (dev::scope_all<S>(ctx.running())) {
      ctx.heartbeat();
      dev::RxBurst b = rxq.receive<S>(burst, dev::kPollNs);
      if (b.count() == 0) continue;
      for (uint32_t i = dev::scope_rank<S>(); i < b.count(); i += dev::scope_size<S>()) {
        const uint64_t idx = b.first() + i;
        if (idx >= capacity) {
          ctx.count_error();
          continue;
        }
        dev::Packet p = b[i];
        seen[idx].len = p.size();
        seen[idx].fnv = dev::fnv1a64(p.data(), p.size());
        ++seen[idx].times;
      }
      rxq.release<S>(b);
    }
  }
};

// Writes `value` into n words, or counts the words that are not zero.
struct FillKernel {
  uint64_t* words;
  uint32_t n;
  uint64_t value;
  GNIO_HD void operator()(const dev::KernelCtx&) const {
    for (uint32_t i = dev::thread_index(); i < n; i += dev::scope_size<Scope::Block>()) words[i] = value;
  }
};

struct CountNonzeroKernel {
  const uint64_t* words;
  uint32_t n;
  uint64_t* nonzero;  // GpuCpu
  GNIO_HD void operator()(const dev::KernelCtx&) const {
    uint64_t mine = 0;
    for (uint32_t i = dev::thread_index(); i < n; i += dev::scope_size<Scope::Block>()) mine += words[i] != 0;
    dev::fetch_add_relaxed(nonzero, mine);
  }
};

LaunchConfig launch_config(uint32_t grid, uint32_t block, const char* name) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.name = name;
  return c;
}

uint32_t block_for(const Gpu& gpu, Scope s) { return gpu.emulated() || s == Scope::Thread ? 1 : 64; }

// What a ReceiveKernel run saw, next to what the host sees in the same source.
struct ReceiveRun {
  dev::ReceiveTotals got{};
  dev::ReceiveTotals want{};
  KernelTotals kernel{};
  std::vector<dev::BlockCounters> blocks;
};

// Runs ReceiveKernel at `scope` over a started queue until its source drains.
void receive_all(Gpu& gpu, EthRxq& q, const std::string& spec, Scope scope, LaunchConfig cfg, uint32_t burst,
                 ReceiveRun& run) {
  auto h = GpuRxq::create(gpu, q);
  auto totals = gpu.alloc(sizeof(dev::ReceiveTotals), MemKind::GpuCpu);
  ASSERT_TRUE(h.has_value() && totals.has_value());
  auto* t_dev = static_cast<dev::ReceiveTotals*>(totals->device_ptr());
  auto k = with_scope(scope, [&]<Scope S>() {
    return PersistentKernel::launch(gpu, cfg, dev::ReceiveKernel<S>{dev::RxQueueSet::of(h->handle()), t_dev, burst});
  });
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  EXPECT_TRUE(eventually([&] { return q.at_end(); }, std::chrono::seconds(60)));
  ASSERT_TRUE(k->stop());
  run.got = *static_cast<const dev::ReceiveTotals*>(totals->host_ptr());
  run.kernel = k->totals();
  run.blocks = k->counters();
  auto want = host_receive_totals(spec);
  ASSERT_TRUE(want.has_value());
  run.want = *want;
}

// 64 strides of 256 bytes, bursts of 16: frames of 96..1500 bytes take 1..6
// strides, so the ring wraps hundreds of times, packets straddle its end and
// a large frame often has to wait for room.
void start_small_ring(Gpu& gpu, EthRxq& q, RingMem mem) {
  for (Status s : {q.set_num_strides(64), q.set_stride_size(256), q.set_max_packet_size(1500), q.set_burst_size(16),
                   q.set_ring_mem(mem), q.set_gpu(gpu), q.start()})
    ASSERT_TRUE(s) << s.to_string();
}

class WrapAround : public ::testing::TestWithParam<std::tuple<Scope, RingMem>> {};

TEST_P(WrapAround, EveryPacketOnceThroughASmallRing) {
  GNIO_OPEN_TEST_GPU(gpu);
  const auto [scope, mem] = GetParam();
  const std::string spec = "synthetic:count=20000,size=96-1500,proto=mix,ipv6=mix,seed=7";
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  start_small_ring(gpu, *q, mem);
  ASSERT_EQ(q->state(), QueueState::Started);
  ReceiveRun run;
  receive_all(gpu, *q, spec, scope, launch_config(1, block_for(gpu, scope), "wrap"), 16, run);
  EXPECT_EQ(run.got.packets, 20000u);
  EXPECT_EQ(run.got.packets, run.want.packets);
  EXPECT_EQ(run.got.bytes, run.want.bytes);
  EXPECT_EQ(run.got.checksum, run.want.checksum);
  EXPECT_EQ(run.got.bad_release, 0u);
  EXPECT_EQ(q->stats().rx_missed, 0u);
  EXPECT_EQ(q->stats().released, 20000u);
  EXPECT_EQ(run.kernel.packets, 20000u);  // per-block counters agree with the kernel's own sums
}

std::string scope_and_mem_name(const ::testing::TestParamInfo<std::tuple<Scope, RingMem>>& info) {
  static const char* const kScopes[] = {"thread", "warp", "block"};
  return std::string(kScopes[static_cast<int>(std::get<0>(info.param))]) +
         (std::get<1>(info.param) == RingMem::Gpu ? "_mem_gpu" : "_mem_host");
}

INSTANTIATE_TEST_SUITE_P(ScopesAndMemory, WrapAround,
                         ::testing::Combine(::testing::Values(Scope::Thread, Scope::Warp, Scope::Block),
                                            ::testing::Values(RingMem::Gpu, RingMem::Host)),
                         scope_and_mem_name);


// A frame that does not fit the ring yet waits; smaller frames behind it
// must not overtake it. Mixed sizes through a small ring make that happen
// on almost every lap.
class SourceOrder : public ::testing::TestWithParam<std::tuple<Scope, RingMem>> {};

TEST_P(SourceOrder, EveryPacketArrivesOnceInSourceOrder) {
  GNIO_OPEN_TEST_GPU(gpu);
  const auto& [scope_param, mem] = GetParam();
  const Scope scope = scope_param;  // captured by the kernel lambda (clang 14: no structured bindings there)
  const std::string spec = "synthetic:count=20000,size=96-1500,proto=mix,ipv6=mix,seed=11";
  std::vector<std::vector<uint8_t>> want;
  ASSERT_TRUE(for_each_host_frame(spec, [&](const std::vector<uint8_t>& f) { want.push_back(f); }));
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  start_small_ring(gpu, *q, mem);
  ASSERT_EQ(q->state(), QueueState::Started);
  auto h = GpuRxq::create(gpu, *q);
  auto seen_mem = gpu.alloc(sizeof(SeenPacket) * want.size(), MemKind::GpuCpu);
  ASSERT_TRUE(h.has_value() && seen_mem.has_value());
  auto* seen = static_cast<SeenPacket*>(seen_mem->device_ptr());
  auto k = with_scope(scope, [&]<Scope S>() {
    return PersistentKernel::launch(gpu, launch_config(1, block_for(gpu, scope), "order"),
                                    RecordKernel<S>{h->handle(), seen, want.size(), 16});
  });
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  EXPECT_TRUE(eventually([&] { return q->at_end(); }, std::chrono::seconds(60)));
  ASSERT_TRUE(k->stop());
  EXPECT_EQ(k->totals().errors, 0u);  // no descriptor beyond the source
  const auto* got = static_cast<const SeenPacket*>(seen_mem->host_ptr());
  size_t wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool ok = got[i].times == 1 && got[i].len == want[i].size() &&
                    got[i].fnv == dev::fnv1a64(want[i].data(), want[i].size());
    if (!ok && wrong++ < 5)
      ADD_FAILURE() << "descriptor " << i << ": seen " << got[i].times << " times, " << got[i].len
                    << " bytes; the source's packet " << i << " has " << want[i].size() << " bytes";
  }
  EXPECT_EQ(wrong, 0u);
}

INSTANTIATE_TEST_SUITE_P(ScopesAndMemory, SourceOrder,
                         ::testing::Combine(::testing::Values(Scope::Thread, Scope::Warp, Scope::Block),
                                            ::testing::Values(RingMem::Gpu, RingMem::Host)),
                         scope_and_mem_name);

TEST(Rx, IndependentReceiversShareAQueueAndReleaseInOrder) {
  GNIO_OPEN_TEST_GPU(gpu);
  // Four blocks of one thread each claim their own bursts from one queue:
  // every packet is seen once, and releases serialise in claim order.
  const std::string spec = "synthetic:count=30000,size=96-1500,proto=mix,ipv6=mix,seed=9";
  auto dev = EthDevice::open(spec);
  auto q = dev->create_rxq(0);
  for (Status s : {q->set_num_strides(128), q->set_stride_size(512), q->set_burst_size(8), q->set_gpu(gpu), q->start()})
    ASSERT_TRUE(s) << s.to_string();
  ReceiveRun run;
  receive_all(gpu, *q, spec, Scope::Thread, launch_config(4, 1, "receivers"), 8, run);
  EXPECT_EQ(run.got.packets, 30000u);
  EXPECT_EQ(run.got.checksum, run.want.checksum);
  EXPECT_EQ(run.got.bad_release, 0u);
  uint64_t blocks_with_work = 0;
  for (const auto& c : run.blocks) blocks_with_work += c.packets > 0;
  EXPECT_EQ(run.kernel.packets, 30000u);
  // The work really was shared. Emulated blocks are OS threads: on a loaded
  // machine one of them can take every burst before the others are
  // scheduled, so only real GPU blocks, which run at once, must share.
  if (!gpu.emulated()) {
    EXPECT_GE(blocks_with_work, 2u);
  }
}

TEST(PersistentKernel, StopReportsStalledBlocksInsteadOfHanging) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto flag = gpu.alloc(sizeof(uint32_t), MemKind::CpuGpu);
  ASSERT_TRUE(flag.has_value());
  auto k = PersistentKernel::launch(gpu, launch_config(2, 1, "stuck"), StuckKernel{static_cast<uint32_t*>(flag->device_ptr())});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  Status s = k->stop(std::chrono::milliseconds(200));
  EXPECT_EQ(s.code(), Errc::Timeout);
  EXPECT_TRUE(s.message().find("2 of 2 blocks") != std::string::npos) << s.message();
  EXPECT_TRUE(s.message().find("[0,1]") != std::string::npos) << s.message();
  EXPECT_TRUE(k->running());
  dev::store_release(static_cast<uint32_t*>(flag->host_ptr()), 1u);
  EXPECT_TRUE(k->stop());
  EXPECT_FALSE(k->running());
  for (const auto& c : k->counters()) EXPECT_EQ(c.exited, 1u);
}

// Ring indices start at zero because fresh memory is zero. Device memory
// freed by one queue and handed to the next must be zeroed before a kernel
// or engine on another stream can read it.
TEST(Gpu, FreshDeviceMemoryIsZeroForTheNextKernel) {
  GNIO_OPEN_TEST_GPU(gpu);
  constexpr uint32_t kWords = 16384;
  auto nonzero = gpu.alloc(sizeof(uint64_t), MemKind::GpuCpu);
  ASSERT_TRUE(nonzero.has_value());
  auto* count = static_cast<uint64_t*>(nonzero->device_ptr());
  for (int round = 0; round < 20; ++round) {
    {
      auto used = gpu.alloc(kWords * sizeof(uint64_t), MemKind::Gpu);
      ASSERT_TRUE(used.has_value());
      auto k = PersistentKernel::launch(gpu, launch_config(1, 128, "fill"),
                                        FillKernel{static_cast<uint64_t*>(used->device_ptr()), kWords, 20000});
      ASSERT_TRUE(k.has_value() && k->stop());
    }
    auto fresh = gpu.alloc(kWords * sizeof(uint64_t), MemKind::Gpu);
    ASSERT_TRUE(fresh.has_value());
    auto k = PersistentKernel::launch(gpu, launch_config(1, 128, "read"),
                                      CountNonzeroKernel{static_cast<const uint64_t*>(fresh->device_ptr()), kWords, count});
    ASSERT_TRUE(k.has_value() && k->stop());
    ASSERT_EQ(*static_cast<const uint64_t*>(nonzero->host_ptr()), 0u) << "round " << round;
  }
}

#if GNIO_HAVE_CUDA
// Streams made while a persistent kernel runs must still run their work
// (each RX engine has its own stream): none may wait behind the kernel that
// never ends, whatever hardware queue CUDA maps it to.
TEST(Gpu, StreamsDoNotQueueBehindAPersistentKernel) {
  GNIO_OPEN_TEST_GPU(gpu);
  if (gpu.emulated()) GTEST_SKIP() << "hardware work queues exist on a GPU only";
  auto k = PersistentKernel::launch(gpu, launch_config(1, 32, "idle"), IdleKernel{});
  ASSERT_TRUE(k.has_value());
  constexpr int kStreams = 24;
  auto target = gpu.alloc(4096, MemKind::Gpu);
  ASSERT_TRUE(target.has_value());
  std::vector<cudaStream_t> streams(kStreams, nullptr);
  for (cudaStream_t& st : streams) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(target->device_ptr(), 1, 4096, st), cudaSuccess);
  }
  int done = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (done < kStreams && std::chrono::steady_clock::now() < deadline) {
    done = 0;
    for (cudaStream_t st : streams) done += cudaStreamQuery(st) == cudaSuccess;
  }
  EXPECT_EQ(done, kStreams) << "streams still waiting after 5 s while a persistent kernel runs";
  ASSERT_TRUE(k->stop());
  for (cudaStream_t st : streams) {
    cudaStreamSynchronize(st);
    cudaStreamDestroy(st);
  }
}
#endif

TEST(PersistentKernel, HeartbeatMovesAndHandlesCannotGoWhileItRuns) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto dev = EthDevice::open("synthetic:count=10");
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q->set_gpu(gpu));
  ASSERT_TRUE(q->start());
  auto h = GpuRxq::create(gpu, *q);
  ASSERT_TRUE(h.has_value());
  auto k = PersistentKernel::launch(gpu, launch_config(1, 1, "idle"), IdleKernel{});
  ASSERT_TRUE(k.has_value());
  EXPECT_TRUE(eventually([&] { return k->counters()[0].heartbeat > 10; }));
  EXPECT_TRUE(k->stalled_blocks(std::chrono::milliseconds(50)).empty());
  Status hs = h->destroy();
  EXPECT_EQ(hs.code(), Errc::BadState);
  EXPECT_TRUE(hs.message().find("kernel") != std::string::npos);
  EXPECT_EQ(gpu.close().code(), Errc::BadState);
  ASSERT_TRUE(k->stop());
  EXPECT_TRUE(h->destroy());
  EXPECT_TRUE(q->destroy());
  EXPECT_TRUE(gpu.close());
}

struct LoopPair {
  EthDevice kernel_end, host_end;
  EthTxq txq;
  EthRxq host_rx;
};

void open_loop(const std::string& name, Gpu& gpu, uint32_t depth, LoopPair& p) {
  auto a = EthDevice::open("loop:" + name);
  auto b = EthDevice::open("loop:" + name);
  ASSERT_TRUE(a.has_value() && b.has_value());
  p.kernel_end = std::move(*a);
  p.host_end = std::move(*b);
  auto txq = p.kernel_end.create_txq(0);
  ASSERT_TRUE(txq.has_value());
  p.txq = std::move(*txq);
  ASSERT_TRUE(p.txq.set_depth(depth));
  ASSERT_TRUE(p.txq.set_gpu(gpu));
  ASSERT_TRUE(p.txq.start());
  auto rx = p.host_end.create_rxq(0);
  ASSERT_TRUE(rx.has_value());
  p.host_rx = std::move(*rx);
  ASSERT_TRUE(p.host_rx.start());
}

std::vector<HostFrame> receive_n(EthRxq& q, size_t n) {
  std::vector<HostFrame> out;
  gnio::test::eventually([&] {
    auto f = q.host_receive(256);
    if (f)
      for (auto& x : *f) out.push_back(std::move(x));
    return out.size() >= n;
  });
  return out;
}

TEST(Tx, StagedSendsArriveInOrderExactlyOnceThroughASmallRing) {
  GNIO_OPEN_TEST_GPU(gpu);
  LoopPair p;
  open_loop("tx-staged-" + gpu.bus_id(), gpu, 16, p);
  auto h = GpuTxq::create(gpu, p.txq);
  ASSERT_TRUE(h.has_value());
  const uint32_t n = 5000, size = 200;
  auto k = PersistentKernel::launch(gpu, launch_config(1, 1, "staged"), StagedSendKernel{h->handle(), n, size, nullptr});
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  auto frames = receive_n(p.host_rx, n);
  ASSERT_TRUE(k->stop());
  ASSERT_EQ(frames.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(frames[i].data.size(), size);
    uint64_t seq = 0;
    for (uint32_t j = 0; j < 8; ++j) seq |= static_cast<uint64_t>(frames[i].data[j]) << (8 * j);
    ASSERT_EQ(seq, i);
    ASSERT_EQ(frames[i].data[size - 1], static_cast<uint8_t>(i + size - 1));
  }
  EXPECT_EQ(p.txq.stats().packets, n);
  EXPECT_EQ(p.txq.stats().completions, n);
  EXPECT_EQ(p.txq.stats().errors, 0u);
  EXPECT_EQ(k->totals().packets, n);
}

TEST(Tx, FullRingIsAgainAndDrainingClearsIt) {
  GNIO_OPEN_TEST_GPU(gpu);
  LoopPair p;
  open_loop("tx-again-" + gpu.bus_id(), gpu, 32, p);
  auto h = GpuTxq::create(gpu, p.txq);
  auto results = gpu.alloc(4 * sizeof(int32_t), MemKind::CpuGpu);
  ASSERT_TRUE(h.has_value() && results.has_value());
  auto* r = static_cast<int32_t*>(results->host_ptr());
  r[0] = r[1] = r[2] = -1;
  auto k = PersistentKernel::launch(gpu, launch_config(1, 1, "again"),
                                    ReserveAllKernel{h->handle(), static_cast<int32_t*>(results->device_ptr())});
  ASSERT_TRUE(k.has_value());
  auto frames = receive_n(p.host_rx, 32);
  ASSERT_TRUE(k->stop());
  EXPECT_EQ(r[0], static_cast<int32_t>(dev::Status::Again));
  EXPECT_EQ(r[2], static_cast<int32_t>(dev::Status::Success));
  EXPECT_EQ(r[1], static_cast<int32_t>(dev::Status::Success));
  ASSERT_EQ(frames.size(), 32u);
  for (uint32_t i = 0; i < 32; ++i) EXPECT_EQ(frames[i].data[0], i);
}

TEST(Tx, WaitOnTimeHoldsEachPacketUntilItsSendTime) {
  GNIO_OPEN_TEST_GPU(gpu);
  LoopPair p;
  open_loop("tx-time-" + gpu.bus_id(), gpu, 16, p);
  ASSERT_EQ(p.txq.type(), TxqType::Regular);
  auto h = GpuTxq::create(gpu, p.txq);
  auto times = gpu.alloc(3 * sizeof(uint64_t), MemKind::CpuGpu);
  ASSERT_TRUE(h.has_value() && times.has_value());
  auto* t = static_cast<uint64_t*>(times->host_ptr());
  const uint64_t start = dev::host_now_ns();
  t[0] = 0;
  t[1] = start + 40'000'000;  // +40 ms
  t[2] = start + 80'000'000;  // +80 ms
  auto k = PersistentKernel::launch(gpu, launch_config(1, 1, "timed"),
                                    StagedSendKernel{h->handle(), 3, 64, static_cast<uint64_t*>(times->device_ptr())});
  ASSERT_TRUE(k.has_value());
  auto frames = receive_n(p.host_rx, 3);
  ASSERT_TRUE(k->stop());
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_GE(frames[1].timestamp_ns, t[1]);
  EXPECT_GE(frames[2].timestamp_ns, t[2]);
  EXPECT_LT(frames[0].timestamp_ns, t[1]);
  EXPECT_EQ(p.txq.stats().waited_on_time, 2u);
}

TEST(Semaphore, KernelPublishesItemsTheHostPolls) {
  GNIO_OPEN_TEST_GPU(gpu);
  auto sem = GpuSemaphore::create(gpu, 8, 16);
  ASSERT_TRUE(sem.has_value());
  EXPECT_EQ(sem->status(3), dev::SemStatus::Free);
  auto k = PersistentKernel::launch(gpu, launch_config(1, 1, "sem"), SemaphoreKernel{sem->handle()});
  ASSERT_TRUE(k.has_value());
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(sem->wait(i, dev::SemStatus::Ready, 5000));
    uint64_t v = 0;
    std::memcpy(&v, sem->payload(i), sizeof(v));
    EXPECT_EQ(v, 7ull * i + 1);
  }
  Status late = sem->wait(0, dev::SemStatus::Done, 10);
  EXPECT_EQ(late.code(), Errc::Timeout);
  sem->set_status(0, dev::SemStatus::Exit);
  EXPECT_TRUE(k->stop());
  EXPECT_TRUE(sem->destroy());
}

}  // namespace
