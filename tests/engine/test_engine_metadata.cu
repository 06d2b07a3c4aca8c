// SPDX-License-Identifier: Apache-2.0
// Descriptor metadata: empty with the offloads off, what the device-side
// parser says of the same bytes with them on, and the IPv4 header checksum
// state of frames cut at the queue's max packet size.
#include <gtest/gtest.h>

#include <string>

#include "backends/synthetic.hpp"
#include "engine_fixtures.hpp"

using namespace gnio;
using namespace gnio::test;

namespace {

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

}  // namespace
