// SPDX-License-Identifier: Apache-2.0
// The header parser on data/adversarial/*.pcap (written by
// data/make_adversarial.py): UDP lengths that disagree with the IP payload,
// checksums good, bad, partial and absent, ICMP echo requests under 8 bytes
// and behind IPv6 routing headers; each frame's expected flags, and tshark's
// opinion of every frame where it has one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/rx_metadata.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/classify.hpp"
#include "test_util.hpp"

namespace gnio::dev {
namespace {

using backend::testing::data_path;

constexpr uint32_t kL4State =
    bit(PacketFlags::L4CsumGood) | bit(PacketFlags::L4CsumBad) | bit(PacketFlags::L4CsumPartial);

std::vector<std::vector<uint8_t>> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<uint8_t>> frames;
  EXPECT_GE(blob.size(), 24u) << path << ": run data/make_adversarial.py";
  for (size_t off = 24; off + 16 <= blob.size();) {
    uint32_t caplen;
    std::memcpy(&caplen, blob.data() + off + 8, 4);
    if (off + 16 + caplen > blob.size()) break;
    frames.emplace_back(blob.begin() + static_cast<long>(off + 16), blob.begin() + static_cast<long>(off + 16 + caplen));
    off += 16 + caplen;
  }
  return frames;
}

uint32_t flags_of(std::vector<uint8_t>& f) {
  const uint32_t len = static_cast<uint32_t>(f.size());
  const uint32_t flags = classify(f.data(), len);
  EXPECT_EQ(gnio::detail::describe_frame(f.data(), len).flags, flags);  // the NIC engine's pass agrees
  return flags;
}

uint32_t l4_state(uint32_t flags) { return flags & kL4State; }

TEST(Adversarial, UdpLengthRules) {
  auto frames = read_pcap(data_path("adversarial/udp_length.pcap"));
  ASSERT_EQ(frames.size(), 10u);
  for (size_t v = 0; v < 2; ++v) {
    SCOPED_TRACE(v == 0 ? "IPv4" : "IPv6");
    auto* f = &frames[5 * v];
    EXPECT_EQ(l4_state(flags_of(f[0])), bit(PacketFlags::L4CsumGood)) << "length = IP payload";
    // Longer than the IP payload: malformed, no checksum state; the
    // transforms refuse it with the same error.
    const uint32_t longer = flags_of(f[1]);
    EXPECT_TRUE(has_flag(longer, PacketFlags::Malformed));
    EXPECT_FALSE(has_flag(longer, PacketFlags::Truncated));
    EXPECT_EQ(l4_state(longer), 0u);
    auto copy = f[1];
    EXPECT_EQ(update_checksums(copy.data(), static_cast<uint32_t>(copy.size())), HeaderStatus::Malformed);
    EXPECT_EQ(swap_addresses(copy.data(), static_cast<uint32_t>(copy.size())), HeaderStatus::Malformed);
    EXPECT_EQ(copy, f[1]);
    EXPECT_TRUE(has_flag(flags_of(f[2]), PacketFlags::Malformed)) << "length 7";
    EXPECT_EQ(l4_state(flags_of(f[2])), 0u);
    // Shorter: the checksum covers the UDP length's 12 bytes, not the IP payload.
    EXPECT_EQ(l4_state(flags_of(f[3])), bit(PacketFlags::L4CsumGood));
    EXPECT_EQ(l4_state(flags_of(f[4])), bit(PacketFlags::L4CsumBad));
    auto fixed = f[4];
    ASSERT_EQ(update_checksums(fixed.data(), static_cast<uint32_t>(fixed.size())), HeaderStatus::Ok);
    EXPECT_EQ(fixed, f[3]);
  }
}

TEST(Adversarial, ChecksumStatesGoodBadPartialAndNone) {
  auto frames = read_pcap(data_path("adversarial/checksums.pcap"));
  ASSERT_EQ(frames.size(), 15u);
  const PacketFlags state[] = {PacketFlags::L4CsumGood, PacketFlags::L4CsumBad, PacketFlags::L4CsumPartial};
  for (size_t i = 0; i < 12; ++i) {
    const uint32_t flags = flags_of(frames[i]);
    EXPECT_EQ(l4_state(flags), bit(state[i / 4])) << "frame " << i + 1;
    if (has_flag(flags, PacketFlags::L3Ipv4)) {
      EXPECT_TRUE(has_flag(flags, PacketFlags::L3CsumGood));
    }
  }
  // IPv4 UDP with a zero checksum field: none computed, no state.
  EXPECT_EQ(l4_state(flags_of(frames[12])), 0u);
  // A 3-byte TCP header: malformed, but the IPv4 header checksum is checked.
  const uint32_t good_ip = flags_of(frames[13]), bad_ip = flags_of(frames[14]);
  EXPECT_TRUE(has_flag(good_ip, PacketFlags::Malformed) && has_flag(good_ip, PacketFlags::L3CsumGood));
  EXPECT_TRUE(has_flag(bad_ip, PacketFlags::Malformed) && has_flag(bad_ip, PacketFlags::L3CsumBad));
  EXPECT_EQ(l4_state(good_ip) | l4_state(bad_ip), 0u);
}

TEST(Adversarial, SampleLoopbackChecksumsCountAsPartialNotBad) {
  auto b = backend::testing::open_ok("pcap:" + data_path("sample.pcap"));
  ASSERT_TRUE(b);
  examples::TrafficCounters c{};
  for (auto& f : backend::testing::drain(*b, 0)) examples::account(f.bytes.data(), static_cast<uint32_t>(f.bytes.size()), c);
  EXPECT_EQ(c.packets, 226u);
  EXPECT_EQ(c.l4_csum_partial, 150u);
  EXPECT_EQ(c.l4_csum_bad, 0u);
  EXPECT_EQ(c.l3_csum_bad, 0u);
  EXPECT_EQ(c.echo_requests, 32u);
  EXPECT_EQ(c.echo_refused, 0u);
  EXPECT_EQ(c.malformed, 0u);
}

TEST(Adversarial, EchoRequestsShortOrBehindARoutingHeaderAreNotAnswered) {
  auto frames = read_pcap(data_path("adversarial/echo.pcap"));
  ASSERT_EQ(frames.size(), 10u);
  examples::TrafficCounters c{};
  for (size_t i = 0; i < 10; ++i) {
    SCOPED_TRACE(testing::Message() << "echo.pcap frame " << i + 1);
    auto& f = frames[i];
    const uint32_t len = static_cast<uint32_t>(f.size());
    const uint32_t flags = flags_of(f);
    const bool answer = examples::account(f.data(), len, c);
    auto reply = f;
    const HeaderStatus s = swap_addresses(reply.data(), len);
    if (i < 6) {  // 4, 6 and 7 bytes of ICMP / ICMPv6
      EXPECT_TRUE(has_flag(flags, PacketFlags::Malformed));
      EXPECT_FALSE(answer);
      EXPECT_EQ(s, HeaderStatus::Malformed);
      EXPECT_EQ(reply, f);
    } else if (i < 8) {  // 8 bytes: a request, answered with a valid reply
      EXPECT_TRUE(answer);
      ASSERT_EQ(s, HeaderStatus::Ok);
      ParsedPacket pp;
      ASSERT_TRUE(parse_packet(reply.data(), len, pp));
      EXPECT_EQ(reply[pp.l4_offset], i == 6 ? 0 : 129);
      EXPECT_EQ(l4_state(flags_of(reply)), bit(PacketFlags::L4CsumGood));
    } else {  // behind a routing header: refused, untouched, counted
      EXPECT_FALSE(answer);
      EXPECT_EQ(s, HeaderStatus::Unsupported);
      EXPECT_EQ(reply, f);
      // At the final destination (segments left 0) the checksum is checkable.
      EXPECT_EQ(l4_state(flags), i == 8 ? bit(PacketFlags::L4CsumGood) : 0u);
    }
  }
  EXPECT_EQ(c.echo_requests, 2u);
  EXPECT_EQ(c.echo_refused, 2u);
  EXPECT_EQ(c.malformed, 6u);
}

// ---- tshark as the oracle ---------------------------------------------------

struct TsharkView {
  std::string ip, l4;  // checksum status: "1" good, "0" bad, "2" unverified, "3" not present, "" none
  bool malformed = false, unreassembled = false;
};

// tshark's view of every frame of `path`, or an empty vector when tshark
// cannot be run.
std::vector<TsharkView> tshark_view(const std::string& path) {
  const std::string cmd =
      "tshark -n -r '" + path +
      "' -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE"
      " -o ip.defragment:FALSE -o ipv6.defragment:FALSE -T fields -E separator=/t -E occurrence=f"
      " -e frame.number -e ip.checksum.status -e udp.checksum.status -e tcp.checksum.status"
      " -e icmp.checksum.status -e icmpv6.checksum.status -e _ws.malformed -e _ws.unreassembled 2>/dev/null";
  std::vector<TsharkView> out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[1024];
  while (std::fgets(line, sizeof(line), p)) {
    std::vector<std::string> cols;
    std::stringstream ss(std::string(line, std::strcspn(line, "\n")));
    for (std::string col; std::getline(ss, col, '\t');) cols.push_back(col);
    cols.resize(8);
    TsharkView v;
    v.ip = cols[1];
    for (int i = 2; i <= 5; ++i)
      if (v.l4.empty()) v.l4 = cols[i];
    v.malformed = !cols[6].empty();
    v.unreassembled = !cols[7].empty();
    out.push_back(v);
  }
  pclose(p);
  return out;
}

// Whether the IPv6 packet is still on its way along a routing header: tshark
// then checks the L4 checksum with the final destination, the parser does not.
bool routed_onward(const uint8_t* f, const ParsedPacket& pp) {
  return pp.routing_offset != 0 && f[pp.routing_offset + 3] != 0;
}

// The rule, frame by frame:
// - ip.checksum.status 1 / 0 is L3CsumGood / L3CsumBad; anything else, neither.
// - An L4 state of ours is tshark's: L4CsumGood is 1; L4CsumBad and
//   L4CsumPartial are 0 (tshark calls a pseudo-header-only field bad).
// - No L4 state of ours: tshark has none either (empty, 2 or 3), except for
//   frames it calls malformed (it still checks a short ICMP message) and
//   packets routed onward (see routed_onward()).
// - tshark calls a frame malformed exactly when we do, except where it did
//   not dissect the L4 header: an unreassembled fragment, or an IP datagram
//   that ends where its L4 header should start (Malformed for us). A frame
//   cut by the capture is Truncated for us and "short" for tshark, never
//   malformed.
void compare_with_tshark(const std::string& name) {
  SCOPED_TRACE(name);
  auto frames = read_pcap(data_path("adversarial/" + name));
  const auto view = tshark_view(data_path("adversarial/" + name));
  if (view.empty()) GTEST_SKIP() << "tshark did not run (install tshark)";
  ASSERT_EQ(view.size(), frames.size());
  std::map<std::string, size_t> agreed;
  for (size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "frame " << i + 1);
    auto& f = frames[i];
    const TsharkView& t = view[i];
    ParsedPacket pp;
    parse_packet(f.data(), static_cast<uint32_t>(f.size()), pp);
    const uint32_t flags = flags_of(f);
    const std::string ours_ip = has_flag(flags, PacketFlags::L3CsumGood) ? "1"
                                : has_flag(flags, PacketFlags::L3CsumBad) ? "0"
                                                                          : "";
    EXPECT_EQ(ours_ip, t.ip == "1" || t.ip == "0" ? t.ip : "");
    const bool malformed = has_flag(flags, PacketFlags::Malformed);
    if (l4_state(flags) != 0) {
      EXPECT_EQ(t.l4, has_flag(flags, PacketFlags::L4CsumGood) ? "1" : "0");
      agreed["l4 state"]++;
    } else if (!t.malformed && !routed_onward(f.data(), pp)) {
      EXPECT_TRUE(t.l4.empty() || t.l4 == "2" || t.l4 == "3") << "tshark: " << t.l4;
      agreed["no l4 state"]++;
    }
    // tshark dissects no L4 header where there is not one byte of it.
    const bool l4_empty = pp.l3_end != 0 && pp.l4_offset == pp.l3_end;
    if (!(malformed && (t.unreassembled || l4_empty))) {
      EXPECT_EQ(malformed, t.malformed);
      agreed["malformed or not"]++;
    }
  }
  for (const auto& [what, n] : agreed) std::printf("%s: agreed with tshark on %zu frames (%s)\n", name.c_str(), n, what.c_str());
}

TEST(Adversarial, TsharkAgreesOnCutByCapture) { compare_with_tshark("cut_by_capture.pcap"); }
TEST(Adversarial, TsharkAgreesOnCutByLength) { compare_with_tshark("cut_by_length.pcap"); }
TEST(Adversarial, TsharkAgreesOnUdpLength) { compare_with_tshark("udp_length.pcap"); }
TEST(Adversarial, TsharkAgreesOnChecksums) { compare_with_tshark("checksums.pcap"); }
TEST(Adversarial, TsharkAgreesOnEcho) { compare_with_tshark("echo.pcap"); }

}  // namespace
}  // namespace gnio::dev
