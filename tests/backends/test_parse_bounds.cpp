// SPDX-License-Identifier: Apache-2.0
// Every header of every frame of data/sample.pcap and of
// data/adversarial/cut_*.pcap, cut at every byte offset: by the capture (the
// frame ends early) and by the IP length field (the datagram ends early,
// Ethernet padding follows). Each cut frame lies in a buffer of exactly its
// size, so that under AddressSanitizer any read past it fails the test; and
// each is evaluated again with different bytes after its end (or after its
// IP datagram), which must not change any answer: a read of those bytes is
// a failure without a sanitizer too.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <vector>

#include "engine/rx_metadata.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/classify.hpp"
#include "test_util.hpp"

namespace gnio::dev {
namespace {

using backend::testing::data_path;

constexpr uint32_t kL4Types =
    bit(PacketFlags::L4Udp) | bit(PacketFlags::L4Tcp) | bit(PacketFlags::L4Icmp) | bit(PacketFlags::L4Icmpv6) |
    bit(PacketFlags::L4Other);
constexpr uint32_t kL3State = bit(PacketFlags::L3CsumGood) | bit(PacketFlags::L3CsumBad);
constexpr uint32_t kL4State =
    bit(PacketFlags::L4CsumGood) | bit(PacketFlags::L4CsumBad) | bit(PacketFlags::L4CsumPartial);

// Everything the header helpers answer for one frame.
struct Answers {
  bool parsed;
  ParsedPacket pp;
  uint32_t flags, rss;
  gnio::detail::RxMetadata meta;
  examples::TrafficCounters counters;
  bool echo;
  HeaderStatus swap_status, update_status;
  std::vector<uint8_t> swapped, updated;  // the frame's bytes after each transform

  bool operator==(const Answers& o) const {
    return parsed == o.parsed && std::memcmp(&pp, &o.pp, sizeof(pp)) == 0 && flags == o.flags && rss == o.rss &&
           meta.flags == o.meta.flags && meta.rss_hash == o.meta.rss_hash &&
           std::memcmp(&counters, &o.counters, sizeof(counters)) == 0 && echo == o.echo &&
           swap_status == o.swap_status && update_status == o.update_status && swapped == o.swapped &&
           updated == o.updated;
  }
};

void PrintTo(const Answers& a, std::ostream* os) {
  *os << "{parsed " << a.parsed << " flags 0x" << std::hex << a.flags << " parse flags 0x" << a.pp.flags << std::dec
      << " l4 " << a.pp.l4_offset << " payload " << a.pp.payload_offset << " l3_end " << a.pp.l3_end << " rss "
      << a.rss << " dns " << a.counters.dns << " http " << a.counters.http << " echo " << a.echo << " swap "
      << static_cast<int>(a.swap_status) << " update " << static_cast<int>(a.update_status) << "}";
}

// Runs every helper on the first `len` bytes of `buf` (which may be longer);
// the transforms work on copies of the same size as `buf`, of which the
// first `keep` bytes are kept for comparison (all `len` by default).
Answers evaluate(const std::vector<uint8_t>& buf, uint32_t len, uint32_t keep = UINT32_MAX) {
  keep = std::min(keep, len);
  Answers a{};
  a.parsed = parse_packet(buf.data(), len, a.pp);
  a.flags = classify(buf.data(), len);
  a.rss = rss_hash(buf.data(), len);
  a.meta = gnio::detail::describe_frame(buf.data(), len);
  a.echo = examples::account(buf.data(), len, a.counters);
  auto swapped = buf;
  a.swap_status = swap_addresses(swapped.data(), len);
  a.swapped.assign(swapped.begin(), swapped.begin() + keep);
  auto updated = buf;
  a.update_status = update_checksums(updated.data(), len);
  a.updated.assign(updated.begin(), updated.begin() + keep);
  // Nothing past `keep` is written.
  EXPECT_TRUE(std::equal(swapped.begin() + keep, swapped.end(), buf.begin() + keep));
  EXPECT_TRUE(std::equal(updated.begin() + keep, updated.end(), buf.begin() + keep));
  return a;
}

// Bytes a careless parser would take for ports 53, "GET " or an echo request.
std::vector<uint8_t> poison(size_t n, uint8_t salt) {
  static const uint8_t pattern[] = {0x00, 0x35, 0x00, 0x35, 'G', 'E', 'T', ' ', 8, 0, 0x50, 0x50};
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(pattern[i % sizeof(pattern)] ^ salt);
  return v;
}

// The first `len` bytes of `frame` followed by `tail`.
std::vector<uint8_t> with_tail(const std::vector<uint8_t>& frame, uint32_t len, const std::vector<uint8_t>& tail) {
  std::vector<uint8_t> v(frame.begin(), frame.begin() + len);
  v.insert(v.end(), tail.begin(), tail.end());
  return v;
}

// Frames of a pcap file (any caplen; the bytes as captured). Read here, not
// through the pcap backend, so that this test needs nothing but the parser.
std::vector<std::vector<uint8_t>> read_pcap(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> blob((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::vector<uint8_t>> frames;
  EXPECT_GE(blob.size(), 24u) << path;
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, blob.data() + at, 4);
    return v;
  };
  for (size_t off = 24; off + 16 <= blob.size();) {
    const uint32_t caplen = u32(off + 8);
    EXPECT_LE(off + 16 + caplen, blob.size()) << path;
    frames.emplace_back(blob.begin() + static_cast<long>(off + 16), blob.begin() + static_cast<long>(off + 16 + caplen));
    off += 16 + caplen;
  }
  return frames;
}

std::vector<std::vector<uint8_t>> sample_frames() { return read_pcap(data_path("sample.pcap")); }

// Checks one frame cut by the capture to `len` bytes; `whole` is the uncut
// frame, well-formed, with `full` its parse.
void check_capture_cut(const std::vector<uint8_t>& whole, const ParsedPacket& full, uint32_t whole_flags,
                       uint32_t len) {
  SCOPED_TRACE(testing::Message() << "cut by the capture at " << len << " of " << whole.size());
  const std::vector<uint8_t> exact(whole.begin(), whole.begin() + len);
  const Answers a = evaluate(exact, len);
  EXPECT_EQ(a, evaluate(with_tail(whole, len, poison(64, 0)), len));
  EXPECT_EQ(a, evaluate(with_tail(whole, len, poison(64, 0xFF)), len));

  EXPECT_FALSE(a.parsed);
  EXPECT_TRUE(has_flag(a.flags, PacketFlags::Truncated));
  EXPECT_FALSE(has_flag(a.flags, PacketFlags::Malformed));
  EXPECT_EQ(a.flags & kL4State, 0u);
  const bool ipv4_header_whole =
      has_flag(full.flags, PacketFlags::L3Ipv4) && len >= full.l3_offset + 4u * (whole[full.l3_offset] & 0x0F);
  EXPECT_EQ(a.flags & kL3State, ipv4_header_whole ? whole_flags & kL3State : 0u);
  EXPECT_EQ(a.flags & kL4Types, len >= full.l4_offset ? full.flags & kL4Types : 0u);
  EXPECT_EQ(a.meta.flags, a.flags);
  EXPECT_EQ(a.rss, 0u);
  EXPECT_EQ(a.swap_status, HeaderStatus::Truncated);
  EXPECT_EQ(a.update_status, HeaderStatus::Truncated);
  EXPECT_EQ(a.swapped, exact);
  EXPECT_EQ(a.updated, exact);
  EXPECT_FALSE(a.echo);  // a cut echo request cannot be answered
}

// Checks `frame` (whose IP datagram ends at `end`) against copies with other
// bytes after the datagram.
void check_padding_ignored(const std::vector<uint8_t>& frame, uint32_t end) {
  const Answers a = evaluate(frame, static_cast<uint32_t>(frame.size()), end);
  for (uint8_t salt : {0x00, 0x5A, 0xFF}) {
    auto other = with_tail(frame, end, poison(frame.size() - end, salt));
    EXPECT_EQ(a, evaluate(other, static_cast<uint32_t>(other.size()), end)) << "padding salt " << int(salt);
  }
  // account() answers an echo request only when swap_addresses() makes the reply.
  if (a.echo) {
    EXPECT_EQ(a.swap_status, HeaderStatus::Ok);
  }
  EXPECT_EQ(a.counters.echo_requests, a.echo ? 1u : 0u);
}

// `whole` with its IP datagram cut to end at `end` by the IP length field
// (the IPv4 header checksum kept valid), then `pad` bytes of padding.
std::vector<uint8_t> cut_by_length(const std::vector<uint8_t>& whole, const ParsedPacket& full, uint32_t end,
                                   size_t pad) {
  auto f = with_tail(whole, end, poison(pad, 0x33));
  const uint32_t l3 = full.l3_offset;
  if (has_flag(full.flags, PacketFlags::L3Ipv4)) {
    detail::store16(f.data() + l3 + 2, static_cast<uint16_t>(end - l3));
    detail::store16(f.data() + l3 + 10, 0);
    detail::store16(f.data() + l3 + 10, internet_checksum(f.data() + l3, 4u * (f[l3] & 0x0F)));
  } else {
    detail::store16(f.data() + l3 + 4, static_cast<uint16_t>(end - l3 - 40));
  }
  return f;
}

// Checks one datagram cut by its IP length field at `end`.
void check_length_cut(const std::vector<uint8_t>& whole, const ParsedPacket& full, uint32_t end) {
  SCOPED_TRACE(testing::Message() << "IP datagram cut at frame offset " << end << " of " << whole.size());
  const auto f = cut_by_length(whole, full, end, 32);
  check_padding_ignored(f, end);
  ParsedPacket pp;
  const bool parsed = parse_packet(f.data(), static_cast<uint32_t>(f.size()), pp);
  EXPECT_EQ(pp.l3_end, end);
  EXPECT_FALSE(has_flag(pp.flags, PacketFlags::Truncated));
  const uint32_t flags = classify(f.data(), static_cast<uint32_t>(f.size()));
  if (has_flag(full.flags, PacketFlags::L3Ipv4)) {
    EXPECT_TRUE(has_flag(flags, PacketFlags::L3CsumGood));
  }
  const bool has_l4_header = full.payload_offset > full.l4_offset;
  if (has_l4_header && end < full.payload_offset) {
    // The L4 header does not fit in its datagram.
    EXPECT_FALSE(parsed);
    EXPECT_TRUE(has_flag(flags, PacketFlags::Malformed));
    EXPECT_EQ(flags & kL4State, 0u);
    auto g = f;
    EXPECT_EQ(swap_addresses(g.data(), static_cast<uint32_t>(g.size())), HeaderStatus::Malformed);
    EXPECT_EQ(update_checksums(g.data(), static_cast<uint32_t>(g.size())), HeaderStatus::Malformed);
    EXPECT_EQ(g, f);
  }
}

void check_every_cut(const std::vector<uint8_t>& whole) {
  ParsedPacket full;
  ASSERT_TRUE(parse_packet(whole.data(), static_cast<uint32_t>(whole.size()), full));
  const uint32_t whole_flags = classify(whole.data(), static_cast<uint32_t>(whole.size()));
  for (uint32_t len = 0; len < whole.size(); ++len) check_capture_cut(whole, full, whole_flags, len);
  const bool ip = (full.flags & (bit(PacketFlags::L3Ipv4) | bit(PacketFlags::L3Ipv6))) != 0;
  if (!ip) return;
  // Every end from the end of the IP header (options included) on; past the
  // L4 header only the first 64 bytes of payload, which is where DNS and
  // HTTP detection look.
  const uint32_t ip_header =
      has_flag(full.flags, PacketFlags::L3Ipv4) ? 4u * (whole[full.l3_offset] & 0x0F) : 40u;
  const uint32_t last = std::min<uint32_t>(full.l3_end, full.payload_offset + 64u);
  for (uint32_t end = full.l3_offset + ip_header; end < last; ++end) check_length_cut(whole, full, end);
}

TEST(ParseBounds, EverySampleFrameCutAtEveryOffset) {
  const auto frames = sample_frames();
  ASSERT_EQ(frames.size(), 226u);
  for (size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "sample.pcap frame " << i);
    check_every_cut(frames[i]);
    if (HasFailure()) break;  // one frame's failures are enough to read
  }
}

// The templates of data/adversarial/cut_by_capture.pcap (VLAN tags, IPv4
// options, IPv6 extension headers, a first fragment), rebuilt whole from
// their longest cut, which lacks only the last byte.
TEST(ParseBounds, AdversarialTemplatesCutAtEveryOffset) {
  const auto records = read_pcap(data_path("adversarial/cut_by_capture.pcap"));
  ASSERT_FALSE(records.empty());
  size_t templates = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const bool last_of_template = i + 1 == records.size() || records[i + 1].empty();
    if (!last_of_template) continue;
    // The original frame length is in the record header; the last byte of
    // every template is payload, so any value completes it.
    auto whole = records[i];
    whole.push_back('!');
    SCOPED_TRACE(testing::Message() << "template ending at record " << i);
    ++templates;
    check_every_cut(whole);
  }
  EXPECT_EQ(templates, 8u);
}

// The frames of data/adversarial/cut_by_length.pcap as they are, with other
// padding in place of theirs.
TEST(ParseBounds, AdversarialLengthCutsIgnorePadding) {
  const auto frames = read_pcap(data_path("adversarial/cut_by_length.pcap"));
  ASSERT_EQ(frames.size(), 200u);
  size_t malformed = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "cut_by_length.pcap frame " << i + 1);
    ParsedPacket pp;
    parse_packet(frames[i].data(), static_cast<uint32_t>(frames[i].size()), pp);
    ASSERT_NE(pp.l3_end, 0u);
    check_padding_ignored(frames[i], pp.l3_end);
    malformed += has_flag(pp.flags, PacketFlags::Malformed);
  }
  EXPECT_GT(malformed, 100u);
}

}  // namespace
}  // namespace gnio::dev
