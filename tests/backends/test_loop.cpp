// SPDX-License-Identifier: Apache-2.0
// loop: and loop:NAME wires: delivery, queues, backpressure, named pairs,
// and a producer/consumer pair of threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "test_util.hpp"

namespace gnio::backend {
namespace {

using ::testing::HasSubstr;
using testing::drain;
using testing::open_ok;

std::vector<uint8_t> frame_with(uint32_t seq, size_t len = 64) {
  std::vector<uint8_t> f(len, 0);
  for (int i = 0; i < 4; ++i) f[i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
  return f;
}

uint32_t seq_of(const uint8_t* f) {
  return static_cast<uint32_t>(f[0]) << 24 | static_cast<uint32_t>(f[1]) << 16 | static_cast<uint32_t>(f[2]) << 8 | f[3];
}

// Sends frames first..first+n-1 on `queue`; returns how many were taken.
size_t send(Backend& b, uint16_t queue, uint32_t first, size_t n) {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<TxFrame> tx;
  for (size_t i = 0; i < n; ++i) bytes.push_back(frame_with(first + static_cast<uint32_t>(i), 60 + i));
  for (size_t i = 0; i < n; ++i) tx.push_back({bytes[i].data(), static_cast<uint32_t>(bytes[i].size()), 1000 + first + i});
  auto r = b.tx_burst(queue, tx);
  EXPECT_TRUE(r) << r.status().to_string();
  return r ? *r : 0;
}

std::vector<uint32_t> receive(Backend& b, uint16_t queue, size_t max = 64) {
  std::vector<RxFrame> burst(max);
  auto n = b.rx_burst(queue, burst);
  EXPECT_TRUE(n) << n.status().to_string();
  std::vector<uint32_t> seqs;
  for (size_t i = 0; n && i < *n; ++i) seqs.push_back(seq_of(burst[i].data));
  return seqs;
}

TEST(Loop, TxQueueArrivesOnSameRxQueue) {
  auto b = open_ok("loop:queues=2");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().driver, "loop");
  EXPECT_EQ(b->caps().max_rx_queues, 2);
  EXPECT_EQ(b->caps().max_tx_queues, 2);
  EXPECT_FALSE(b->caps().drops_when_full);
  ASSERT_EQ(send(*b, 1, 100, 5), 5u);
  EXPECT_TRUE(receive(*b, 0).empty());

  std::array<RxFrame, 8> burst{};
  auto n = b->rx_burst(1, burst);
  ASSERT_TRUE(n);
  ASSERT_EQ(*n, 5u);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(seq_of(burst[i].data), 100 + i);
    EXPECT_EQ(burst[i].len, 60 + i);
    EXPECT_EQ(burst[i].timestamp_ns, 1100 + i);
  }
  EXPECT_FALSE(b->at_end(1));
}

TEST(Loop, FullQueueGivesBackpressureNotLoss) {
  auto b = open_ok("loop:,depth=8");
  ASSERT_TRUE(b);
  EXPECT_EQ(send(*b, 0, 0, 20), 8u);
  EXPECT_EQ(send(*b, 0, 8, 12), 0u);
  EXPECT_EQ(receive(*b, 0, 5), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(send(*b, 0, 8, 12), 5u);
  std::vector<uint32_t> rest = receive(*b, 0);
  EXPECT_EQ(rest, (std::vector<uint32_t>{5, 6, 7, 8, 9, 10, 11, 12}));
}

TEST(Loop, NamedPairConnectsTwoEnds) {
  auto a = open_ok("loop:pair1,queues=2");
  auto b = open_ok("loop:pair1");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->caps().max_rx_queues, 2) << "the second end takes the first end's wire";
  ASSERT_EQ(send(*a, 1, 7, 3), 3u);
  EXPECT_TRUE(receive(*a, 1).empty()) << "an end does not hear itself";
  EXPECT_EQ(receive(*b, 1), (std::vector<uint32_t>{7, 8, 9}));
  ASSERT_EQ(send(*b, 0, 50, 2), 2u);
  EXPECT_EQ(receive(*a, 0), (std::vector<uint32_t>{50, 51}));

  auto third = open_backend("loop:pair1");
  ASSERT_FALSE(third);
  EXPECT_EQ(third.status().code(), Errc::BadState);
  EXPECT_THAT(third.status().message(), HasSubstr("loop:pair1"));

  auto mismatch = open_backend("loop:pair2,queues=2");
  ASSERT_TRUE(mismatch);
  auto other = open_backend("loop:pair2,queues=3");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.status().code(), Errc::InvalidValue);
  EXPECT_THAT(other.status().message(), HasSubstr("queues=3"));
  EXPECT_THAT(other.status().message(), HasSubstr("queues=2"));

  // A closed end can be opened again; it is end B of the same wire.
  b.reset();
  auto b2 = open_ok("loop:pair1");
  ASSERT_TRUE(b2);
  ASSERT_EQ(send(*a, 0, 1, 1), 1u);
  EXPECT_EQ(receive(*b2, 0), (std::vector<uint32_t>{1}));

  // With both ends closed the name is free for a new wire.
  a.reset();
  b2.reset();
  auto fresh = open_ok("loop:pair1,queues=3");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->caps().max_rx_queues, 3);
}

TEST(Loop, ErrorsNameQueueAndSize) {
  auto b = open_ok("loop:");
  ASSERT_TRUE(b);
  std::array<RxFrame, 1> burst{};
  auto r = b->rx_burst(1, burst);
  EXPECT_EQ(r.status().code(), Errc::InvalidValue);
  EXPECT_THAT(r.status().message(), HasSubstr("RX queue 1"));
  std::vector<uint8_t> jumbo(9300, 0);
  std::vector<TxFrame> big = {{jumbo.data(), 9300, 0}};
  auto t = b->tx_burst(0, big);
  EXPECT_EQ(t.status().code(), Errc::InvalidValue);
  EXPECT_THAT(t.status().message(), HasSubstr("9300 bytes"));
}

TEST(Loop, ConcurrentProducerAndConsumerLoseNothing) {
  auto a = open_ok("loop:threads,depth=64");
  auto b = open_ok("loop:threads");
  ASSERT_TRUE(a && b);
  constexpr uint32_t kFrames = 50000;
  std::thread producer([&] {
    uint32_t next = 0;
    while (next < kFrames) {
      size_t n = std::min<size_t>(16, kFrames - next);
      next += static_cast<uint32_t>(send(*a, 0, next, n));
    }
  });
  uint32_t expect = 0;
  std::array<RxFrame, 32> burst{};
  bool in_order = true;
  while (expect < kFrames) {
    auto n = b->rx_burst(0, burst);
    ASSERT_TRUE(n);
    for (size_t i = 0; i < *n; ++i) in_order = in_order && seq_of(burst[i].data) == expect++;
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_TRUE(receive(*b, 0).empty());
}

// rx_into copies waiting frames straight into the ring; one that finds no
// room stays first on the wire and comes next.
TEST(Loop, RxIntoKeepsAFrameWithoutRoomOnTheWire) {
  auto b = open_ok("loop:");
  std::vector<std::vector<uint8_t>> frames;
  std::vector<TxFrame> tx;
  for (uint32_t i = 0; i < 10; ++i) frames.push_back(std::vector<uint8_t>(60 + i, static_cast<uint8_t>(i)));
  for (const auto& f : frames) tx.push_back({f.data(), static_cast<uint32_t>(f.size()), 0});
  ASSERT_EQ(b->tx_burst(0, tx).value(), 10u);
  testing::VectorSink sink(4, 64);
  EXPECT_EQ(b->rx_into(0, sink).value(), 4u);
  sink.set_capacity(10);
  EXPECT_EQ(b->rx_into(0, sink).value(), 6u);
  ASSERT_EQ(sink.frames.size(), 10u);
  for (uint32_t i = 0; i < 10; ++i) {
    const size_t len = std::min<size_t>(frames[i].size(), 64);
    EXPECT_EQ(sink.frames[i].bytes, std::vector<uint8_t>(frames[i].begin(), frames[i].begin() + len)) << i;
    EXPECT_EQ((sink.frames[i].flags & RxFrameTruncated) != 0, frames[i].size() > 64) << i;
  }
}

}  // namespace
}  // namespace gnio::backend
