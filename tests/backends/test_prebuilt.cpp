// SPDX-License-Identifier: Apache-2.0
// mem: the prebuilt in-memory source: exact frames in stream order, frames
// pointing into the memory it names, buffers lent again only after release,
// RSS spreading over queues, the copy path, pacing losses, spec errors.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <set>
#include <thread>

#include "backends/synthetic.hpp"
#include "gnio/dev/headers.hpp"
#include "recording_sink.hpp"
#include "test_util.hpp"

namespace gnio::backend {
namespace {

using testing::data_path;
using testing::Frame;
using testing::open_ok;
using testing::RecordingSink;

std::vector<uint8_t> bytes_of(const RxFrame& f) { return std::vector<uint8_t>(f.data, f.data + f.len); }

// Every frame of `queue` until the source ends, each given back right after
// it was read; fails on an error or a burst that delivers nothing.
std::vector<std::vector<uint8_t>> drain_releasing(Backend& b, uint16_t queue) {
  std::vector<std::vector<uint8_t>> frames;
  std::array<RxFrame, 7> burst{};  // not a divisor of the ring: bursts straddle its wrap
  while (!b.at_end(queue)) {
    auto n = b.rx_burst(queue, burst);
    if (!n || *n == 0) {
      ADD_FAILURE() << "rx_burst on queue " << queue << ": "
                    << (n ? std::string("nothing delivered before the end") : n.status().to_string());
      break;
    }
    for (size_t i = 0; i < *n; ++i) frames.push_back(bytes_of(burst[i]));
    b.rx_release(queue, std::span<const RxFrame>(burst.data(), *n));
  }
  return frames;
}

SyntheticOptions generator(const std::string& options) {
  auto o = parse_synthetic_spec("synthetic:" + options);
  EXPECT_TRUE(o) << o.status().to_string();
  return o ? *o : SyntheticOptions{};
}

TEST(Prebuilt, GeneratorFramesLoopInStreamOrder) {
  auto b = open_ok("mem:frames=10,size=64-300,seed=9,proto=mix,count=35,ring=16");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().driver, "mem");
  auto frames = drain_releasing(*b, 0);
  ASSERT_EQ(frames.size(), 35u);
  const SyntheticOptions o = generator("size=64-300,seed=9,proto=mix");
  for (size_t k = 0; k < frames.size(); ++k) EXPECT_EQ(frames[k], make_synthetic_frame(o, k % 10)) << "frame " << k;
  EXPECT_TRUE(b->at_end(0));
}

TEST(Prebuilt, CaptureFramesMatchThePcapDriver) {
  const std::string file = data_path("sample.pcap");
  auto reference = testing::drain(*open_ok("pcap:" + file), 0);
  ASSERT_FALSE(reference.empty());
  auto b = open_ok("mem:" + file + ",count=" + std::to_string(2 * reference.size() + 3));
  ASSERT_TRUE(b);
  auto frames = drain_releasing(*b, 0);
  ASSERT_EQ(frames.size(), 2 * reference.size() + 3);
  for (size_t k = 0; k < frames.size(); ++k)
    EXPECT_EQ(frames[k], reference[k % reference.size()].bytes) << "frame " << k;

  // Without count= one pass.
  auto once = open_ok("mem:" + file);
  ASSERT_TRUE(once);
  EXPECT_EQ(drain_releasing(*once, 0).size(), reference.size());
}

TEST(Prebuilt, FramesLiveInItsMemoryAndBuffersAreReusedOnlyAfterRelease) {
  auto b = open_ok("mem:frames=4,size=64,ring=8,count=0");
  ASSERT_TRUE(b);
  auto mem = b->rx_memory(0);
  ASSERT_TRUE(mem);
  ASSERT_NE(mem->base, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mem->base) % 4096, 0u) << "frame memory is page-aligned";
  EXPECT_GE(mem->bytes, 8u * 64u);

  std::array<RxFrame, 16> first{};
  auto n = b->rx_burst(0, first);
  ASSERT_TRUE(n);
  ASSERT_EQ(*n, 8u) << "a ring of 8 buffers lends 8 frames";
  std::set<const uint8_t*> buffers;
  const SyntheticOptions o = generator("size=64");
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_GE(first[i].data, mem->base);
    EXPECT_LE(first[i].data + first[i].len, mem->base + mem->bytes);
    EXPECT_EQ(bytes_of(first[i]), make_synthetic_frame(o, i % 4));
    EXPECT_NE(first[i].timestamp_ns, 0u);
    buffers.insert(first[i].data);
  }
  EXPECT_EQ(buffers.size(), 8u) << "every lent frame has its own buffer";

  std::array<RxFrame, 16> more{};
  n = b->rx_burst(0, more);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u) << "no buffer is free before a release";

  b->rx_release(0, std::span<const RxFrame>(first.data(), 3));
  n = b->rx_burst(0, more);
  ASSERT_TRUE(n);
  ASSERT_EQ(*n, 3u) << "each released buffer is lent once more";
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(more[i].data, first[i].data) << "buffers come back in ring order";
    EXPECT_EQ(bytes_of(more[i]), make_synthetic_frame(o, (8 + i) % 4));
    EXPECT_GT(more[i].cookie, first[7].cookie);
  }
  // A frame given back out of order frees nothing.
  b->rx_release(0, std::span<const RxFrame>(more.data(), 1));
  n = b->rx_burst(0, std::span(more).subspan(3));
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u);
}

TEST(Prebuilt, QueuesTakeTheirFlowsByRssHashInOrder) {
  const uint16_t kQueues = 4;
  auto b = open_ok("mem:frames=64,flows=64,size=80,count=128,ring=64,queues=4");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().max_rx_queues, kQueues);
  const SyntheticOptions o = generator("flows=64,size=80");
  std::set<std::vector<uint8_t>> seen;
  size_t total = 0;
  std::set<const uint8_t*> bases;
  for (uint16_t q = 0; q < kQueues; ++q) {
    auto mem = b->rx_memory(q);
    ASSERT_TRUE(mem) << "queue " << q << " got no frames: 64 flows should reach every queue";
    bases.insert(mem->base);
    // The queue's frames are the stream's frames of its flows, in stream order.
    std::vector<std::vector<uint8_t>> expected;
    for (uint64_t k = 0; k < 128; ++k) {
      auto f = make_synthetic_frame(o, k % 64);
      if (dev::rss_hash(f.data(), static_cast<uint32_t>(f.size())) % kQueues == q) expected.push_back(f);
    }
    auto got = drain_releasing(*b, q);
    EXPECT_EQ(got, expected) << "queue " << q;
    total += got.size();
    seen.insert(got.begin(), got.end());
  }
  EXPECT_EQ(total, 128u);
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_EQ(bases.size(), kQueues) << "one region per queue";
  EXPECT_FALSE(b->rx_burst(kQueues, std::span<RxFrame>()).has_value());
}

TEST(Prebuilt, CopyPathOffersTheSameFramesAndKeepsARefusedOne) {
  auto b = open_ok("mem:frames=5,size=100-200,seed=4,count=12,ring=5");
  ASSERT_TRUE(b);
  RecordingSink sink(9216);
  sink.set_room(4);
  sink.refuse_claims(1);
  auto n = b->rx_into(0, sink);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u) << "a pulled source keeps a frame the ring has no room for";
  testing::drain_into(*b, sink, 4);
  const SyntheticOptions o = generator("size=100-200,seed=4");
  ASSERT_EQ(sink.events.size(), 12u);
  for (size_t k = 0; k < 12; ++k) {
    EXPECT_FALSE(sink.events[k].dropped);
    EXPECT_EQ(sink.events[k].bytes, make_synthetic_frame(o, k % 5)) << "frame " << k;
  }
}

TEST(Prebuilt, PacedSourceLosesFramesThatFindNoRoom) {
  // The copy path: a due frame with no room in the ring is counted as a ring-full drop.
  auto b = open_ok("mem:frames=8,size=64,count=20,pps=1000000");
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->caps().drops_when_full);
  RecordingSink sink(9216);
  // No room in the first call: it only starts the clock. With room, a thread
  // preempted for 20 us inside it would take all 20 frames before any claim
  // is refused.
  sink.set_room(0);
  auto started = b->rx_into(0, sink);
  ASSERT_TRUE(started);
  EXPECT_EQ(*started, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // all 20 frames are due
  sink.refuse_claims(3);
  testing::drain_into(*b, sink, 20);
  ASSERT_EQ(sink.events.size(), 20u);
  size_t drops = 0;
  for (const auto& e : sink.events) drops += e.dropped == DropReason::RingFull;
  EXPECT_EQ(drops, 3u);

  // The lending path: frames that come due while every buffer is lent are lost.
  auto lent = open_ok("mem:frames=8,size=64,count=200,ring=8,pps=1000000");
  ASSERT_TRUE(lent);
  std::array<RxFrame, 64> burst{};
  (void)lent->rx_burst(0, std::span(burst).first(0));  // starts the clock
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // all 200 frames are due
  auto got = lent->rx_burst(0, burst);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, 8u);
  auto none = lent->rx_burst(0, burst);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0u);
  EXPECT_TRUE(lent->at_end(0)) << "the 192 frames due while no buffer was free are gone";
  // ... and handed to the engine to count, once.
  const DropCounts lost = lent->take_rx_drops(0);
  EXPECT_EQ(lost[static_cast<size_t>(DropReason::RingFull)], 192u);
  for (size_t r = 0; r < kDropReasons; ++r) {
    if (r != static_cast<size_t>(DropReason::RingFull)) {
      EXPECT_EQ(lost[r], 0u) << drop_reason_name(DropReason(r));
    }
  }
  EXPECT_EQ(lent->take_rx_drops(0)[static_cast<size_t>(DropReason::RingFull)], 0u);
}

TEST(Prebuilt, FramesCarryTheRssHashTheyWereSpreadBy) {
  auto b = open_ok("mem:frames=32,flows=32,size=80,count=32,queues=2");
  ASSERT_TRUE(b);
  for (uint16_t q = 0; q < 2; ++q) {
    std::array<RxFrame, 64> burst{};
    auto n = b->rx_burst(q, burst);
    ASSERT_TRUE(n);
    ASSERT_GT(*n, 0u) << "queue " << q;
    for (size_t i = 0; i < *n; ++i) {
      const uint32_t hash = dev::rss_hash(burst[i].data, burst[i].len);
      EXPECT_TRUE(burst[i].flags & RxFrameRssHash);
      EXPECT_EQ(burst[i].rss_hash, hash);
      EXPECT_EQ(hash % 2, q);
      EXPECT_EQ(rss_spread(burst[i].data, burst[i].len, 2).queue, q);
    }
  }
}

TEST(Prebuilt, SpecErrorsNameTheOption) {
  for (const char* bad : {"mem:frames=0", "mem:ring=0", "mem:queues=65", "mem:size=20", "mem:bogus=1",
                          "mem:pps=-1"}) {
    auto b = open_backend(bad);
    ASSERT_FALSE(b) << bad;
    EXPECT_EQ(b.status().code(), Errc::InvalidValue) << bad << ": " << b.status().to_string();
  }
  auto with_file = open_backend("mem:" + data_path("sample.pcap") + ",size=64");
  ASSERT_FALSE(with_file);
  EXPECT_NE(with_file.status().message().find("size"), std::string::npos) << with_file.status().to_string();
  auto missing = open_backend("mem:/nonexistent/x.pcap");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), Errc::NotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/x.pcap"), std::string::npos);
}

}  // namespace
}  // namespace gnio::backend
