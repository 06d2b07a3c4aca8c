// SPDX-License-Identifier: Apache-2.0
// null: — the transmit sink: its caps, every frame taken at once on every
// queue, the queue limit and spec errors, and an EthTxq's counters over it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "gnio/eth.hpp"
#include "test_util.hpp"

namespace gnio::backend {
namespace {

using ::testing::HasSubstr;
using testing::open_ok;

TEST(NullBackend, SendsOnlyAndOffersTheQueuesAsked) {
  auto b = open_ok("null:queues=3");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->caps().driver, "null");
  EXPECT_EQ(b->caps().max_tx_queues, 3);
  EXPECT_EQ(b->caps().max_rx_queues, 0);
  EXPECT_FALSE(b->caps().rx_supported);
  EXPECT_TRUE(b->caps().tx_supported);
  EXPECT_EQ(open_ok("null:")->caps().max_tx_queues, 1);
  std::vector<RxFrame> out(4);
  auto r = b->rx_burst(0, out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), Errc::NotSupported);
  EXPECT_THAT(r.status().message(), HasSubstr("transmit-only"));
}

TEST(NullBackend, TakesEveryFrameOfEveryQueueAtOnce) {
  auto b = open_ok("null:queues=2");
  ASSERT_NE(b, nullptr);
  std::vector<uint8_t> bytes(1500, 0xab);
  for (uint16_t q = 0; q < 2; ++q)
    for (size_t n : {size_t{1}, size_t{64}, size_t{1000}}) {
      std::vector<TxFrame> frames(n, TxFrame{bytes.data(), static_cast<uint32_t>(60 + n % 1400), 0});
      auto sent = b->tx_burst(q, frames);
      ASSERT_TRUE(sent) << sent.status().to_string();
      EXPECT_EQ(*sent, n) << "queue " << q;
    }
  std::vector<TxFrame> one{TxFrame{bytes.data(), 64, 0}};
  auto bad = b->tx_burst(2, one);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), Errc::InvalidValue);
  EXPECT_THAT(bad.status().message(), HasSubstr("null:queues=3"));
}

TEST(NullBackend, RefusesBadSpecsNamingTheOption) {
  for (const char* spec : {"null:queues=0", "null:queues=65", "null:depth=4", "null:file"}) {
    auto b = open_backend(spec);
    ASSERT_FALSE(b) << spec;
    EXPECT_EQ(b.status().code(), Errc::InvalidValue) << spec << ": " << b.status().to_string();
  }
  EXPECT_THAT(open_backend("null:queues=0").status().message(), HasSubstr("queues"));
}

TEST(NullBackend, ATxQueueCountsWhatItSent) {
  auto dev = EthDevice::open("null:queues=2");
  ASSERT_TRUE(dev) << dev.status().to_string();
  auto q = dev->create_txq(1);
  ASSERT_TRUE(q) << q.status().to_string();
  ASSERT_TRUE(q->start());
  std::vector<std::vector<uint8_t>> bytes;
  for (uint32_t i = 0; i < 100; ++i) bytes.emplace_back(60 + i, static_cast<uint8_t>(i));
  std::vector<std::span<const uint8_t>> frames(bytes.begin(), bytes.end());
  auto sent = q->host_send(frames);
  ASSERT_TRUE(sent) << sent.status().to_string();
  EXPECT_EQ(*sent, 100u);
  ASSERT_TRUE(q->flush());
  EXPECT_EQ(q->stats().packets, 100u);
  EXPECT_EQ(q->stats().bytes, 100u * 60 + 99 * 100 / 2);
  EXPECT_EQ(q->stats().errors, 0u);
  ASSERT_TRUE(q->destroy());
}

}  // namespace
}  // namespace gnio::backend
