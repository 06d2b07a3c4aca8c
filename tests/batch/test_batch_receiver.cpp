// SPDX-License-Identifier: Apache-2.0
// BatchReceiver on the emulated device: every frame of a source is in
// exactly one batch (bytes, lengths and per-queue order equal to the host
// path's reading of the same spec), or counted as dropped by reason.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../core/test_support.hpp"
#include "gnio/batch.hpp"
#include "host_frames.hpp"

using namespace gnio;

namespace {

using test::host_frames;

// A receiver's settings on the emulated device.
BatchConfig emulated(const std::string& spec, uint32_t batch, uint32_t snap, uint32_t buffers = 0) {
  BatchConfig cfg;
  cfg.spec = spec;
  cfg.gpu = "cpu";
  cfg.batch = batch;
  cfg.snap = snap;
  cfg.buffers = buffers;
  return cfg;
}

// Takes every batch until the end, checks each packet against `want`.
void receive_all_and_compare(const std::string& spec, uint16_t queues, uint32_t batch, uint32_t snap) {
  const auto want = host_frames(spec, queues, snap);
  BatchConfig cfg = emulated(spec, batch, snap);
  cfg.queues = queues;
  cfg.timeout = std::chrono::microseconds(200);
  auto rx = BatchReceiver::open(cfg);
  ASSERT_TRUE(rx) << rx.status().to_string();
  std::map<uint16_t, size_t> seen;
  uint64_t batches = 0;
  for (;;) {
    auto n = rx->next(std::chrono::seconds(10));
    ASSERT_TRUE(n) << n.status().to_string();
    ASSERT_NE(n->what, BatchNext::What::Timeout) << "no batch within 10 s";
    if (n->what == BatchNext::What::End) break;
    const BatchRef& b = n->batch;
    ++batches;
    ASSERT_GE(b.count, 1u);
    ASSERT_LE(b.count, batch);
    const BatchArrays a = rx->arrays(b.buffer);
    const auto* data = static_cast<const uint8_t*>(a.data);
    const auto* lengths = static_cast<const uint32_t*>(a.lengths);
    const auto* qids = static_cast<const uint16_t*>(a.queue);
    for (uint32_t j = 0; j < b.count; ++j) {
      ASSERT_EQ(qids[j], b.queue);
      const size_t idx = seen[b.queue]++;
      const auto& w = want.at(b.queue);
      ASSERT_LT(idx, w.size()) << "more packets than the source has on queue " << b.queue;
      ASSERT_EQ(lengths[j], w[idx].len) << "queue " << b.queue << " packet " << idx;
      const uint8_t* p = data + size_t{j} * snap;
      ASSERT_EQ(0, std::memcmp(p, w[idx].bytes.data(), w[idx].bytes.size())) << "queue " << b.queue << " packet " << idx;
      for (size_t k = w[idx].bytes.size(); k < snap; ++k) ASSERT_EQ(p[k], 0) << "padding of packet " << idx;
    }
    ASSERT_TRUE(rx->release(b.buffer));
    EXPECT_FALSE(rx->release(b.buffer)) << "a second release must be refused";
  }
  ASSERT_TRUE(rx->close());
  const BatchStats s = rx->stats();
  uint64_t total = 0;
  for (const auto& [q, frames] : want) {
    EXPECT_EQ(seen[q], frames.size()) << "queue " << q;
    total += frames.size();
  }
  EXPECT_EQ(s.total.delivered, total);
  EXPECT_EQ(s.total.offered, total);
  EXPECT_EQ(s.total.batches, batches);
  EXPECT_EQ(s.total.in_flight, 0u);
  for (uint64_t d : s.total.dropped) EXPECT_EQ(d, 0u);
  std::printf("%s: %llu packets in %llu batches\n", spec.c_str(), (unsigned long long)total,
              (unsigned long long)batches);
}

}  // namespace

TEST(BatchReceiver, EveryPacketOfACaptureOnceWithItsBytes) {
  receive_all_and_compare(std::string("pcap:") + GNIO_DATA_DIR + "/captures/http.pcap", 1, 7, 2048);
}

TEST(BatchReceiver, SnapCutsAndPadsEveryPacket) {
  receive_all_and_compare(std::string("pcap:") + GNIO_DATA_DIR + "/captures/dns.pcap", 1, 16, 60);
}

TEST(BatchReceiver, SyntheticSourceOnFourQueues) {
  receive_all_and_compare("synthetic:count=20000,size=64-1500,proto=mix,seed=4,queues=4", 4, 256, 128);
}

TEST(BatchReceiver, MemSourceInPlace) {
  receive_all_and_compare("mem:count=5000,queues=2", 2, 64, 96);
}

// The consumer holds every buffer: what the kernel receives then is
// counted as pool_full, and after close every offered frame is accounted.
TEST(BatchReceiver, HeldBuffersCountPoolFull) {
  BatchConfig cfg = emulated("synthetic:count=5000,size=64", 100, 64, 2);
  cfg.when_full = WhenFull::Drop;
  auto rx = BatchReceiver::open(cfg);
  ASSERT_TRUE(rx) << rx.status().to_string();
  std::vector<BatchRef> held;
  while (held.size() < 2) {
    auto n = rx->next(std::chrono::seconds(10));
    ASSERT_TRUE(n);
    ASSERT_EQ(n->what, BatchNext::What::Batch);
    held.push_back(n->batch);
  }
  // Holding both buffers, the kernel drops the rest of the source.
  BatchStats s;
  test::eventually([&] {
    s = rx->stats();
    return s.total.delivered + s.total.dropped[static_cast<size_t>(BatchDropReason::PoolFull)] == 5000;
  });
  EXPECT_EQ(s.held, 2u);
  EXPECT_EQ(s.total.delivered, 200u);
  EXPECT_EQ(s.total.dropped[static_cast<size_t>(BatchDropReason::PoolFull)], 4800u);
  ASSERT_TRUE(rx->close());
  s = rx->stats();
  uint64_t dropped = 0;
  for (uint64_t d : s.total.dropped) dropped += d;
  EXPECT_EQ(s.total.offered, 5000u);
  EXPECT_EQ(s.total.offered, s.total.delivered + dropped);
  EXPECT_EQ(s.total.in_flight, 0u);
  // The held buffers stay readable after close, and go back once.
  const auto* lengths = static_cast<const uint32_t*>(rx->arrays(held[0].buffer).lengths);
  EXPECT_EQ(lengths[0], 64u);
  for (const BatchRef& b : held) EXPECT_TRUE(rx->release(b.buffer));
}

// Out-of-order releases: the kernel refills whichever buffer is free, and
// nothing is lost with WhenFull::Wait on a pull source.
TEST(BatchReceiver, ReleasingOutOfOrderLosesNothing) {
  BatchConfig cfg = emulated("synthetic:count=3000,size=64-200,seed=2", 50, 32, 3);
  auto rx = BatchReceiver::open(cfg);
  ASSERT_TRUE(rx) << rx.status().to_string();
  EXPECT_EQ(rx->config().when_full, WhenFull::Wait);
  std::vector<BatchRef> pending;
  uint64_t got = 0, next_seq = 0;
  for (;;) {
    auto n = rx->next(std::chrono::seconds(10));
    ASSERT_TRUE(n);
    ASSERT_NE(n->what, BatchNext::What::Timeout);
    if (n->what == BatchNext::What::End) break;
    EXPECT_EQ(n->batch.seq, next_seq++) << "batches of a queue come in order";
    got += n->batch.count;
    pending.push_back(n->batch);
    if (pending.size() == 2) {  // the newer first
      ASSERT_TRUE(rx->release(pending[1].buffer));
      ASSERT_TRUE(rx->release(pending[0].buffer));
      pending.clear();
    }
  }
  for (const BatchRef& b : pending) ASSERT_TRUE(rx->release(b.buffer));
  ASSERT_TRUE(rx->close());
  EXPECT_EQ(got, 3000u);
  EXPECT_EQ(rx->stats().total.delivered, 3000u);
}

TEST(BatchReceiver, BadArgumentsAreInvalidValue) {
  BatchConfig cfg = emulated("synthetic:count=10", 4096, 0);
  auto rx = BatchReceiver::open(cfg);
  ASSERT_FALSE(rx);
  EXPECT_EQ(rx.status().code(), Errc::InvalidValue);
  EXPECT_NE(rx.status().message().find("snap=0"), std::string::npos) << rx.status().message();
  cfg.snap = 64;
  cfg.queues = 3;  // the generator has one queue by default
  auto rx2 = BatchReceiver::open(cfg);
  ASSERT_FALSE(rx2);
  EXPECT_EQ(rx2.status().code(), Errc::InvalidValue);
}
