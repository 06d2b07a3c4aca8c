// SPDX-License-Identifier: Apache-2.0
// The tunnel parsers (apps/packet_processing/tunnel_*.hpp) through
// analyze(), on the first frame of each capture in data/captures/tunnels/:
// the datagram ended at every byte inside the tunnel header (its IP and UDP
// lengths shortened to match, so that only the tunnel header is short)
// gives that header's cut reason, and the whole frame opens the tunnel with
// the id tshark shows for it (test_tunnels.cpp compares every frame). The
// library's headers only, no libgnio.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "packet_processing/analyze.hpp"

namespace {

using namespace gnio::dev::app;
using Frame = std::vector<uint8_t>;

// The frames of a classic pcap file (little-endian, as make_tunnels.py and tcpdump write here).
std::vector<Frame> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Frame> out;
  auto u32 = [&](size_t at) {
    return uint32_t(uint8_t(d[at])) | uint32_t(uint8_t(d[at + 1])) << 8 | uint32_t(uint8_t(d[at + 2])) << 16 |
           uint32_t(uint8_t(d[at + 3])) << 24;
  };
  for (size_t off = 24; off + 16 <= d.size();) {
    const uint32_t cap = u32(off + 8);
    if (off + 16 + cap > d.size()) break;
    out.emplace_back(d.begin() + off + 16, d.begin() + off + 16 + cap);
    off += 16 + cap;
  }
  return out;
}

const std::string kDir = std::string(GNIO_DATA_DIR) + "/captures/tunnels/";

std::string reason_name(uint32_t r) { return r < kReasonCount ? kReasonNames[r] : "?"; }

void put16(Frame& f, size_t at, uint32_t v) {
  f[at] = static_cast<uint8_t>(v >> 8);
  f[at + 1] = static_cast<uint8_t>(v);
}

// The frame (outer IPv4 after 14 bytes of Ethernet) cut to `len` bytes, its
// IPv4 total length and, for UDP, its UDP length shortened to match.
Frame shortened(const Frame& f, size_t len) {
  Frame g(f.begin(), f.begin() + static_cast<long>(len));
  put16(g, 16, static_cast<uint32_t>(len - 14));
  if (g[23] == 17) put16(g, 38, static_cast<uint32_t>(len - 34));
  return g;
}

struct Case {
  const char* capture;
  uint32_t type;
  uint32_t header_at;   // first byte of the tunnel header in the first frame
  uint32_t header_len;  // its bytes, options and extensions included
  uint32_t cut;         // the reason of a datagram that ends inside it
  uint64_t id;          // the first frame's tunnel id (as tshark shows it)
};

class TunnelHeaderCut : public ::testing::TestWithParam<Case> {};

TEST_P(TunnelHeaderCut, EveryShorterDatagramHasTheCutReason) {
  const Case c = GetParam();
  const std::vector<Frame> frames = read_pcap(kDir + c.capture);
  ASSERT_FALSE(frames.empty()) << c.capture;
  const Frame& whole = frames.front();
  const Analysis a = analyze(whole.data(), static_cast<uint32_t>(whole.size()));
  EXPECT_EQ(reason_name(a.reason), "none");
  EXPECT_EQ(a.tunnel, c.type);
  EXPECT_EQ(a.key.tunnel, c.type);
  EXPECT_EQ(a.key.tunnel_id, c.id);
  EXPECT_NE(a.key.version, 0);
  const Analysis closed = analyze(whole.data(), static_cast<uint32_t>(whole.size()), kDecapAll & ~(1u << c.type));
  EXPECT_EQ(closed.tunnel, uint32_t{kTunnelNone});
  EXPECT_EQ(closed.key.tunnel, 0);
  for (uint32_t k = 0; k < c.header_len; ++k) {
    const bool mpls = c.type == kTunnelMpls;
    const Frame f = mpls ? Frame(whole.begin(), whole.begin() + c.header_at + k) : shortened(whole, c.header_at + k);
    const Analysis cut = analyze(f.data(), static_cast<uint32_t>(f.size()));
    uint32_t want = c.cut;
    // GTP-U: past its 8 mandatory bytes the length field claims what is gone.
    if (c.type == kTunnelGtpu && k >= 8) want = kGtpuBadLength;
    EXPECT_EQ(reason_name(cut.reason), reason_name(want)) << c.capture << " ended " << k << " bytes into the header";
    EXPECT_EQ(cut.tunnel, c.type) << k;
    EXPECT_EQ(cut.key.tunnel, 0) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Tunnels, TunnelHeaderCut,
    ::testing::Values(Case{"vxlan.pcap", kTunnelVxlan, 42, 8, kVxlanHeaderCut, 100},
                      Case{"geneve.pcap", kTunnelGeneve, 42, 16, kGeneveHeaderCut, 300},
                      Case{"gre.pcap", kTunnelGre, 34, 8, kGreHeaderCut, 1001},
                      Case{"gtpu.pcap", kTunnelGtpu, 42, 8, kGtpuHeaderCut, 0x1234ABCD},
                      Case{"mpls.pcap", kTunnelMpls, 14, 4, kMplsStackCut, 16}),
    [](const auto& info) { return std::string(kTunnelNames[info.param.type]); });

// The GTP-U frame with a sequence number and an extension header: cut
// inside the optional fields, then inside the extension.
TEST(TunnelHeaderCut, GtpuOptionalFieldsAndExtensions) {
  const std::vector<Frame> frames = read_pcap(kDir + "gtpu.pcap");
  ASSERT_GE(frames.size(), 7u);
  const Frame& f = frames[6];  // TEID 0x42, S and E set, one 4-byte extension
  const Analysis a = analyze(f.data(), static_cast<uint32_t>(f.size()));
  ASSERT_EQ(reason_name(a.reason), "none");
  EXPECT_EQ(a.key.tunnel_id, 0x42u);
  EXPECT_EQ(a.key.version, 6);
  EXPECT_EQ(a.record, uint32_t{kRecordDns});
  for (uint32_t k = 8; k < 16; ++k) {
    Frame g = shortened(f, 42 + k);
    put16(g, 44, k - 8);  // the GTP-U length: what is left after the 8 mandatory bytes
    const Analysis cut = analyze(g.data(), static_cast<uint32_t>(g.size()));
    EXPECT_EQ(reason_name(cut.reason), k < 12 ? "gtpu_header_cut" : "gtpu_ext_length") << k;
  }
}

// An outer IPv4 fragment is never opened.
TEST(TunnelHeaderCut, OuterFragmentIsNotOpened) {
  std::vector<Frame> frames = read_pcap(kDir + "vxlan.pcap");
  ASSERT_FALSE(frames.empty());
  Frame f = frames.front();
  f[20] |= 0x20;  // more fragments
  const Analysis a = analyze(f.data(), static_cast<uint32_t>(f.size()));
  EXPECT_EQ(a.tunnel, uint32_t{kTunnelNone});
  EXPECT_EQ(a.key.tunnel, 0);
}

}  // namespace
