// SPDX-License-Identifier: Apache-2.0
// The fault backend: every injected fault leaves the run either going or
// stopped cleanly, and offered == delivered + dropped(reason) exactly.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <string>

#include "../core/test_support.hpp"
#include "gnio/persistent_kernel.hpp"
#include "rig.hpp"

using namespace gnio;
using namespace std::chrono_literals;

namespace {

struct Outcome {
  RxqStats stats;
  KernelTotals kernel;
  Status source;
  std::chrono::milliseconds elapsed;
};

uint64_t dropped(const RxqStats& s) { return std::accumulate(s.dropped.begin(), s.dropped.end(), uint64_t{0}); }

// Receives a whole spec in the stage kernel and stops it cleanly.
Outcome receive_all(const Gpu& gpu, const std::string& spec) {
  Outcome out{};
  obs_test::Rig rig;
  obs_test::open_rig(rig, gpu, spec, 0);
  if (::testing::Test::HasFatalFailure()) return out;
  LaunchConfig cfg;
  cfg.grid = rig.kernel.nq;
  cfg.block = 1;
  cfg.name = "fault";
  const auto t0 = std::chrono::steady_clock::now();
  auto k = obs_test::launch_stage_kernel(gpu, cfg, rig.kernel);
  EXPECT_TRUE(k) << k.status().to_string();
  if (!k) return out;
  EXPECT_TRUE(test::eventually([&] { return rig.rxqs[0].at_end(); }, 30s)) << spec;
  out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  Status st = k->stop();
  EXPECT_TRUE(st) << st.to_string();
  out.stats = rig.rxqs[0].stats();
  out.kernel = k->totals();
  out.source = rig.rxqs[0].source_status();
  EXPECT_EQ(out.stats.offered, out.stats.packets + dropped(out.stats)) << spec;
  EXPECT_EQ(out.kernel.packets, out.stats.packets) << spec;
  EXPECT_EQ(out.stats.released, out.stats.packets) << spec;
  rig.teardown();
  return out;
}

}  // namespace

TEST(Fault, ShortReadsAndAStallLoseNothing) {
  GNIO_OPEN_TEST_GPU(gpu);
  Outcome o = receive_all(gpu, "fault:short=3,stall_at=500,stall_ms=150,inner=synthetic:count=3000,size=64-512,seed=9");
  EXPECT_TRUE(o.source) << o.source.to_string();
  EXPECT_EQ(o.stats.offered, 3000u);
  EXPECT_EQ(o.stats.packets, 3000u);
  EXPECT_EQ(dropped(o.stats), 0u);
  EXPECT_GE(o.stats.bursts, 1000u);  // no publication carried more than 3 frames
  EXPECT_GE(o.elapsed, 150ms);
}

TEST(Fault, MalformedBurstIsCountedUnderItsReason) {
  GNIO_OPEN_TEST_GPU(gpu);
  Outcome o = receive_all(gpu, "fault:malformed_at=100,malformed=37,inner=synthetic:count=1000,size=64-256,seed=1");
  EXPECT_TRUE(o.source) << o.source.to_string();
  EXPECT_EQ(o.stats.offered, 1037u);
  EXPECT_EQ(o.stats.packets, 1000u);
  EXPECT_EQ(o.stats.dropped[static_cast<size_t>(DropReason::Malformed)], 37u);
  EXPECT_EQ(dropped(o.stats), 37u);
}

TEST(Fault, IoErrorStopsTheSourceCleanlyAtItsPosition) {
  GNIO_OPEN_TEST_GPU(gpu);
  Outcome o = receive_all(gpu, "fault:error_at=250,inner=synthetic:count=1000,size=64,seed=1");
  ASSERT_FALSE(o.source);
  EXPECT_EQ(o.source.code(), Errc::IoError);
  EXPECT_NE(o.source.message().find("error_at=250"), std::string::npos) << o.source.message();
  EXPECT_EQ(o.stats.offered, 250u);
  EXPECT_EQ(o.stats.packets, 250u);
  EXPECT_EQ(o.stats.errors, 1u);
}

TEST(Fault, SuddenStopEndsTheSourceWithoutError) {
  GNIO_OPEN_TEST_GPU(gpu);
  Outcome o = receive_all(gpu, "fault:stop_at=777,inner=synthetic:count=100000,size=64,seed=1");
  EXPECT_TRUE(o.source) << o.source.to_string();
  EXPECT_EQ(o.stats.offered, 777u);
  EXPECT_EQ(o.stats.packets, 777u);
  EXPECT_EQ(o.stats.errors, 0u);
}

TEST(Fault, PcapInnerKeepsItsOwnOptions) {
  GNIO_OPEN_TEST_GPU(gpu);
  Outcome o = receive_all(gpu, "fault:short=5,inner=pcap:" GNIO_DATA_DIR "/sample.pcap,loop=2");
  EXPECT_TRUE(o.source) << o.source.to_string();
  Outcome once = receive_all(gpu, "pcap:" GNIO_DATA_DIR "/sample.pcap");
  EXPECT_GT(once.stats.packets, 0u);
  EXPECT_EQ(o.stats.packets, 2 * once.stats.packets);
  EXPECT_EQ(o.stats.bytes, 2 * once.stats.bytes);
}

TEST(Fault, SlowConsumerStillTakesEveryFrame) {
  const std::string out = ::testing::TempDir() + "fault-slow.pcap";
  auto dev = EthDevice::open("fault:slow_us=2000,inner=pcap-out:" + out);
  ASSERT_TRUE(dev) << dev.status().to_string();
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(txq) << txq.status().to_string();
  ASSERT_TRUE(txq->start());
  std::vector<uint8_t> frame(60, 0xab);
  std::vector<std::span<const uint8_t>> frames(40, std::span<const uint8_t>(frame));
  const auto t0 = std::chrono::steady_clock::now();
  size_t sent = 0;
  while (sent < frames.size()) {
    auto n = txq->host_send(std::span(frames).subspan(sent));
    ASSERT_TRUE(n) << n.status().to_string();
    sent += *n;
  }
  ASSERT_TRUE(test::eventually([&] { return txq->stats().packets == 40; }, 20s)) << txq->stats().packets;
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 40 * 2ms);
  ASSERT_TRUE(txq->stop(5000));
  ASSERT_TRUE(txq->destroy());
  // Read the capture back: 40 records of 60 bytes.
  auto back = EthDevice::open("pcap:" + out);
  ASSERT_TRUE(back) << back.status().to_string();
  auto rxq = back->create_rxq(0);
  ASSERT_TRUE(rxq);
  ASSERT_TRUE(rxq->start());
  size_t records = 0, bytes = 0;
  ASSERT_TRUE(test::eventually([&] {
    auto got = rxq->host_receive(64);
    if (got)
      for (const auto& f : *got) {
        ++records;
        bytes += f.data.size();
      }
    return rxq->at_end();
  }, 10s));
  EXPECT_EQ(records, 40u);
  EXPECT_EQ(bytes, 40u * 60u);
}

TEST(Fault, BadSpecsAreInvalidValuesNamingTheProblem) {
  struct Row {
    const char* spec;
    const char* names;
  } rows[] = {{"fault:bogus=1,inner=synthetic:count=1", "bogus"},
              {"fault:error_at=5", "inner="},
              {"fault:short=0,inner=synthetic:count=1", "short=0"},
              {"fault:stall_ms=700000,inner=synthetic:count=1", "stall_ms"},
              {"fault:inner=fault:inner=synthetic:count=1", "another backend"},
              {"fault:inner=", "another backend"}};
  for (const Row& r : rows) {
    auto dev = EthDevice::open(r.spec);
    ASSERT_FALSE(dev) << r.spec;
    EXPECT_EQ(dev.status().code(), Errc::InvalidValue) << r.spec << ": " << dev.status().to_string();
    EXPECT_NE(dev.status().message().find(r.names), std::string::npos) << dev.status().message();
  }
}
