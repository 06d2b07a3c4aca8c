// SPDX-License-Identifier: Apache-2.0
// The NIC engine's descriptor metadata (src/engine/rx_metadata.hpp) against
// the device helpers it replaces on the host: the table-driven Toeplitz hash
// and the word-wise checksum against straightforward references.
#include "engine/rx_metadata.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "backends/synthetic.hpp"
#include "test_util.hpp"

namespace gnio::detail {
namespace {

// RFC 1071 word by word: big-endian 16-bit words, odd byte padded.
uint16_t reference_sum(const uint8_t* p, uint32_t len, uint32_t initial) {
  uint64_t sum = initial;
  for (uint32_t i = 0; i + 1 < len; i += 2) sum += (static_cast<uint32_t>(p[i]) << 8) | p[i + 1];
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

TEST(RxMetadata, OnesComplementSumEqualsTheWordByWordSumAtEveryLengthAndAlignment) {
  std::mt19937 rng(5);
  std::vector<uint8_t> buf(1600 + 8);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (uint32_t len = 0; len <= 1600; len += (len < 64 ? 1 : 37)) {
    for (uint32_t offset = 0; offset < 4; ++offset) {
      const uint32_t initial = rng() & (offset % 2 ? 0xFFFFu : 0x3FFFFu);  // folded and unfolded
      ASSERT_EQ(dev::ones_complement_sum(buf.data() + offset, len, initial),
                reference_sum(buf.data() + offset, len, initial))
          << "len " << len << " offset " << offset << " initial " << initial;
    }
  }
  // All-ones data: the sum saturates at 0xFFFF and must not wrap to 0.
  std::vector<uint8_t> ones(1500, 0xFF);
  EXPECT_EQ(dev::ones_complement_sum(ones.data(), 1500), 0xFFFF);
}

TEST(RxMetadata, TableHashEqualsTheBitwiseToeplitzHash) {
  const RssTable& table = default_rss_table();
  const dev::RssKey key = dev::rss_default_key();
  std::mt19937 rng(3);
  uint8_t in[dev::kRssMaxInput];
  for (int trial = 0; trial < 2000; ++trial) {
    const uint32_t n = rng() % (dev::kRssMaxInput + 1);
    for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<uint8_t>(rng());
    ASSERT_EQ(table.hash(in, n), dev::toeplitz_hash(key.bytes, sizeof(key.bytes), in, n)) << "n " << n;
  }
}

TEST(RxMetadata, DescribeFrameEqualsClassifyAndRssHash) {
  std::vector<std::vector<uint8_t>> frames;
  auto opts = backend::parse_synthetic_spec("synthetic:count=4000,size=96-1500,proto=mix,ipv6=mix,seed=13");
  ASSERT_TRUE(opts.has_value()) << opts.status().to_string();
  for (uint64_t i = 0; i < 4000; ++i) frames.push_back(backend::make_synthetic_frame(*opts, i));
  auto pcap = backend::testing::open_ok("pcap:" + backend::testing::data_path("sample.pcap"));
  ASSERT_TRUE(pcap);
  for (auto& f : backend::testing::drain(*pcap, 0)) frames.push_back(f.bytes);
  // Damaged copies: a flipped payload byte, and every frame cut short.
  const size_t whole = frames.size();
  for (size_t i = 0; i < whole; i += 7) {
    auto bad = frames[i];
    bad[bad.size() - 1] ^= 0x20;
    frames.push_back(bad);
    frames.emplace_back(frames[i].begin(), frames[i].begin() + static_cast<long>(frames[i].size() / 3));
  }
  size_t hashed = 0, bad_csum = 0, partial_csum = 0;
  for (const auto& f : frames) {
    const uint32_t len = static_cast<uint32_t>(f.size());
    const RxMetadata m = describe_frame(f.data(), len);
    ASSERT_EQ(m.flags, dev::classify(f.data(), len));
    ASSERT_EQ(m.rss_hash, dev::rss_hash(f.data(), len));
    hashed += m.rss_hash != 0;
    bad_csum += dev::has_flag(m.flags, dev::PacketFlags::L4CsumBad);
    partial_csum += dev::has_flag(m.flags, dev::PacketFlags::L4CsumPartial);
  }
  EXPECT_GT(hashed, whole / 2);  // the comparison covered real hashes
  EXPECT_GT(bad_csum, 0u);       // and bad checksums
  EXPECT_GT(partial_csum, 0u);   // and partial ones (the loopback capture's)
}

}  // namespace
}  // namespace gnio::detail
