// SPDX-License-Identifier: Apache-2.0
// What the engine accounts for: offered == delivered + dropped, and
// delivered equal to what the host path reads, for every backend; a paced
// source's losses while its buffers are lent.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <thread>

#include "backends/synthetic.hpp"
#include "engine_fixtures.hpp"
#include "gnio/host_reference.hpp"

using namespace gnio;
using namespace gnio::test;

namespace {

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
