// SPDX-License-Identifier: Apache-2.0
// synthetic: generator: determinism, well-formed frames, sequence numbers,
// RSS spreading over queues, pacing.
#include "backends/synthetic.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "gnio/dev/headers.hpp"
#include "test_util.hpp"

namespace gnio::backend {
namespace {

using dev::bit;
using dev::has_flag;
using dev::PacketFlags;
using testing::drain;
using testing::Frame;
using testing::open_ok;

uint64_t sequence_of(const std::vector<uint8_t>& f) {
  dev::ParsedPacket pp;
  EXPECT_TRUE(dev::parse_packet(f.data(), static_cast<uint32_t>(f.size()), pp));
  uint64_t seq = 0;
  for (int i = 0; i < 8; ++i) seq = seq << 8 | f[pp.payload_offset + i];
  return seq;
}

TEST(Synthetic, SameSpecSameBytesAndMatchesMakeFrame) {
  const std::string spec = "synthetic:count=300,size=82-1500,flows=7,seed=42,proto=mix,ipv6=mix";
  auto a = drain(*open_ok(spec), 0);
  auto b = drain(*open_ok(spec), 0);
  ASSERT_EQ(a.size(), 300u);
  ASSERT_EQ(b.size(), 300u);
  auto opts = parse_synthetic_spec(spec);
  ASSERT_TRUE(opts);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].bytes, b[i].bytes) << i;
    ASSERT_EQ(a[i].bytes, make_synthetic_frame(*opts, i)) << i;
  }

  auto c = drain(*open_ok("synthetic:count=300,size=82-1500,flows=7,seed=43,proto=mix,ipv6=mix"), 0);
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i].bytes != c[i].bytes ? 1 : 0;
  EXPECT_EQ(differ, a.size()) << "another seed changes every frame";
}

TEST(Synthetic, FramesAreWellFormedWithSequenceNumbers) {
  auto frames = drain(*open_ok("synthetic:count=600,size=82-1500,flows=12,proto=mix,ipv6=mix"), 0);
  ASSERT_EQ(frames.size(), 600u);
  std::set<uint32_t> kinds;
  std::set<size_t> sizes;
  std::set<std::vector<uint8_t>> tuples;
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i].bytes;
    uint32_t len = static_cast<uint32_t>(f.size());
    ASSERT_GE(len, 82u);
    ASSERT_LE(len, 1500u);
    sizes.insert(len);
    uint32_t flags = dev::classify(f.data(), len);
    ASSERT_TRUE(has_flag(flags, PacketFlags::L4CsumGood)) << "frame " << i << " flags " << flags;
    ASSERT_FALSE(has_flag(flags, PacketFlags::L3CsumBad));
    kinds.insert(flags & (bit(PacketFlags::L3Ipv4) | bit(PacketFlags::L3Ipv6) | bit(PacketFlags::L4Udp) |
                          bit(PacketFlags::L4Tcp) | bit(PacketFlags::L4Icmp) | bit(PacketFlags::L4Icmpv6)));
    EXPECT_EQ(sequence_of(f), i);
    dev::ParsedPacket pp;
    ASSERT_TRUE(dev::parse_packet(f.data(), len, pp));
    EXPECT_EQ(pp.l3_end, len) << "no padding: the IP datagram fills the frame";
    std::vector<uint8_t> tuple(f.begin() + pp.l3_offset + (has_flag(flags, PacketFlags::L3Ipv4) ? 12 : 8),
                               f.begin() + pp.l4_offset);
    tuple.push_back(pp.l4_proto);
    if (has_flag(flags, PacketFlags::L4Udp) || has_flag(flags, PacketFlags::L4Tcp)) {
      tuple.insert(tuple.end(), f.begin() + pp.l4_offset, f.begin() + pp.l4_offset + 4);
    }
    tuples.insert(tuple);
  }
  EXPECT_EQ(kinds.size(), 6u) << "IPv4/IPv6 x UDP/TCP/ICMP";
  EXPECT_GT(sizes.size(), 100u);
  EXPECT_EQ(tuples.size(), 12u) << "one 5-tuple per flow";
}

TEST(Synthetic, SizeRangeStaysInRange) {
  auto frames = drain(*open_ok("synthetic:count=500,size=64-1500,seed=9"), 0);
  ASSERT_EQ(frames.size(), 500u);
  std::set<size_t> sizes;
  for (const Frame& f : frames) {
    ASSERT_GE(f.bytes.size(), 64u);
    ASSERT_LE(f.bytes.size(), 1500u);
    sizes.insert(f.bytes.size());
    ASSERT_TRUE(has_flag(dev::classify(f.bytes.data(), static_cast<uint32_t>(f.bytes.size())), PacketFlags::L4CsumGood));
  }
  EXPECT_GT(sizes.size(), 200u);
  EXPECT_LT(*sizes.begin(), 200u);
  EXPECT_GT(*sizes.rbegin(), 1300u);
}

TEST(Synthetic, DefaultsAreUdpIpv4Of128Bytes) {
  auto b = open_ok("synthetic:");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().driver, "synthetic");
  EXPECT_FALSE(b->caps().tx_supported);
  EXPECT_FALSE(b->caps().drops_when_full);
  auto frames = drain(*b, 0);
  ASSERT_EQ(frames.size(), 1000u);
  for (const Frame& f : frames) {
    ASSERT_EQ(f.bytes.size(), 128u);
    uint32_t flags = dev::classify(f.bytes.data(), 128);
    ASSERT_TRUE(has_flag(flags, PacketFlags::L3Ipv4) && has_flag(flags, PacketFlags::L4Udp));
  }
  std::vector<TxFrame> none;
  EXPECT_EQ(b->tx_burst(0, none).status().code(), Errc::NotSupported);
}

TEST(Synthetic, QueuesSplitByRssAndSumToCount) {
  const uint16_t queues = 4;
  auto b = open_ok("synthetic:count=1000,flows=64,queues=4,proto=mix,ipv6=mix");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().max_rx_queues, queues);
  std::vector<bool> seen(1000, false);
  size_t total = 0;
  for (uint16_t q = 0; q < queues; ++q) {
    auto frames = drain(*b, q);
    EXPECT_GT(frames.size(), 0u) << "queue " << q;
    uint64_t last = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
      const auto& f = frames[i].bytes;
      EXPECT_EQ(dev::rss_hash(f.data(), static_cast<uint32_t>(f.size())) % queues, q);
      uint64_t seq = sequence_of(f);
      ASSERT_LT(seq, 1000u);
      EXPECT_FALSE(seen[seq]) << "frame " << seq << " twice";
      seen[seq] = true;
      if (i > 0) {
        EXPECT_GT(seq, last) << "each queue is in order";
      }
      last = seq;
    }
    total += frames.size();
  }
  EXPECT_EQ(total, 1000u);
}

TEST(Synthetic, EndlessCountNeverEnds) {
  auto b = open_ok("synthetic:count=0,size=64");
  ASSERT_TRUE(b);
  auto frames = drain(*b, 0, 5000);
  EXPECT_EQ(frames.size(), 5000u);
  EXPECT_FALSE(b->at_end(0));
  EXPECT_EQ(sequence_of(frames.back().bytes), 4999u);
}

TEST(Synthetic, PpsPacesTheStream) {
  auto b = open_ok("synthetic:count=200,pps=1000");
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->caps().drops_when_full);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(drain(*b, 0).size(), 200u);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(s, 0.199);
  EXPECT_LT(s, 1.5);
}

TEST(Synthetic, BadQueueIsInvalidValue) {
  auto b = open_ok("synthetic:queues=2");
  ASSERT_TRUE(b);
  std::array<RxFrame, 1> burst{};
  auto r = b->rx_burst(2, burst);
  EXPECT_EQ(r.status().code(), Errc::InvalidValue);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("queue 2"));
}

// rx_into builds each frame in the ring: the same bytes as make_synthetic_frame,
// with the flow's RSS hash handed over, cut to the sink's max frame with
// its wire length, and a frame without room is offered again, not lost.
TEST(Synthetic, RxIntoWritesTheSameFramesWithTheirRssHash) {
  const std::string spec = "synthetic:count=300,size=96-1500,proto=mix,ipv6=mix,seed=17";
  auto o = parse_synthetic_spec(spec);
  ASSERT_TRUE(o.has_value());
  auto b = open_ok(spec);
  testing::VectorSink sink(100, 1000);
  sink.set_room(32);
  while (sink.frames.size() < 100) {
    auto n = b->rx_into(0, sink);
    ASSERT_TRUE(n.has_value()) << n.status().to_string();
  }
  sink.set_capacity(300);  // the ring has room again: frame 100 comes next
  while (!b->at_end(0)) ASSERT_TRUE(b->rx_into(0, sink).has_value());
  ASSERT_EQ(sink.frames.size(), 300u);
  EXPECT_TRUE(sink.drops.empty());
  size_t cut = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    const auto want = make_synthetic_frame(*o, i);
    const auto& got = sink.frames[i];
    const size_t len = std::min<size_t>(want.size(), 1000);
    ASSERT_EQ(got.bytes, std::vector<uint8_t>(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(len))) << i;
    EXPECT_TRUE(got.flags & RxFrameRssHash);
    EXPECT_EQ(got.rss_hash, dev::rss_hash(want.data(), static_cast<uint32_t>(want.size()))) << "frame " << i;
    EXPECT_EQ((got.flags & RxFrameTruncated) != 0, want.size() > 1000) << "frame " << i;
    EXPECT_EQ(got.wire_len, want.size() > 1000 ? want.size() : 0u) << "frame " << i;
    cut += want.size() > 1000;
  }
  EXPECT_GT(cut, 0u);
}

}  // namespace
}  // namespace gnio::backend
