// SPDX-License-Identifier: Apache-2.0
// pcap: and pcap-out: backends: replay, loops, pacing, round trip and the
// error of each broken file in data/corrupt/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "recording_sink.hpp"
#include "test_util.hpp"

namespace gnio::backend {
namespace {

using ::testing::HasSubstr;
using testing::data_path;
using testing::drain;
using testing::Frame;
using testing::open_ok;
using testing::RecordingSink;

// Facts of data/sample.pcap recorded with capinfos (see data/README.md).
constexpr size_t kSampleFrames = 226;
constexpr uint64_t kSampleBytes = 100214;
constexpr uint64_t kFirstTimestamp = 1796234182176858364ull;
constexpr uint64_t kLastTimestamp = 1796234184146738733ull;

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

std::vector<TxFrame> as_tx(const std::vector<Frame>& frames) {
  std::vector<TxFrame> tx;
  for (const Frame& f : frames) tx.push_back({f.bytes.data(), static_cast<uint32_t>(f.bytes.size()), f.timestamp_ns});
  return tx;
}

// Reads `queue` until an error; returns the frames before it and the error.
std::pair<size_t, Status> read_until_error(Backend& b) {
  std::array<RxFrame, 4> burst{};
  size_t frames = 0;
  while (!b.at_end(0)) {
    auto n = b.rx_burst(0, burst);
    if (!n) return {frames, n.status()};
    frames += *n;
  }
  return {frames, Status::ok()};
}

TEST(Pcap, ReplaysSampleWithFileTimestamps) {
  auto b = open_ok("pcap:" + data_path("sample.pcap"));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().driver, "pcap");
  EXPECT_FALSE(b->caps().tx_supported);
  EXPECT_FALSE(b->caps().drops_when_full);
  EXPECT_EQ(b->caps().max_rx_queues, 1);
  auto frames = drain(*b, 0);
  ASSERT_EQ(frames.size(), kSampleFrames);
  uint64_t bytes = 0;
  for (const Frame& f : frames) bytes += f.bytes.size();
  EXPECT_EQ(bytes, kSampleBytes);
  EXPECT_EQ(frames.front().timestamp_ns, kFirstTimestamp);
  EXPECT_EQ(frames.back().timestamp_ns, kLastTimestamp);
  EXPECT_TRUE(b->at_end(0));
  std::array<RxFrame, 4> burst{};
  EXPECT_EQ(b->rx_burst(0, burst).value(), 0u);
}

TEST(Pcap, LoopPlaysTheFileNTimes) {
  auto once = drain(*open_ok("pcap:" + data_path("sample.pcap")), 0);
  auto b = open_ok("pcap:" + data_path("sample.pcap") + ",loop=3");
  ASSERT_TRUE(b);
  auto frames = drain(*b, 0);
  ASSERT_EQ(frames.size(), 3 * kSampleFrames);
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_EQ(frames[i].bytes, once[i % kSampleFrames].bytes) << i;
    ASSERT_EQ(frames[i].timestamp_ns, once[i % kSampleFrames].timestamp_ns) << i;
  }

  auto forever = open_ok("pcap:" + data_path("sample.pcap") + ",loop=0");
  ASSERT_TRUE(forever);
  EXPECT_EQ(drain(*forever, 0, 5 * kSampleFrames).size(), 5 * kSampleFrames);
  EXPECT_FALSE(forever->at_end(0));
}

TEST(Pcap, ReadsPcapng) {
  auto head = drain(*open_ok("pcap:" + data_path("sample-head.pcapng")), 0);
  auto all = drain(*open_ok("pcap:" + data_path("sample.pcap")), 0);
  ASSERT_EQ(head.size(), 20u);
  for (size_t i = 0; i < head.size(); ++i) {
    EXPECT_EQ(head[i].bytes, all[i].bytes);
    EXPECT_EQ(head[i].timestamp_ns, all[i].timestamp_ns);
  }
}

TEST(Pcap, PpsPacesReplay) {
  auto b = open_ok("pcap:" + data_path("sample.pcap") + ",pps=2000");
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->caps().drops_when_full);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(drain(*b, 0).size(), kSampleFrames);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(s, 225 / 2000.0);
  EXPECT_LT(s, 2.0);
}

TEST(Pcap, RoundTripThroughPcapOutKeepsBytesAndTimestamps) {
  auto in = drain(*open_ok("pcap:" + data_path("sample.pcap")), 0);
  std::string out = temp_path("gnio_roundtrip.pcap");
  {
    auto w = open_ok("pcap-out:" + out);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->caps().driver, "pcap-out");
    EXPECT_FALSE(w->caps().rx_supported);
    auto tx = as_tx(in);
    // In uneven bursts, as an engine would send them.
    for (size_t i = 0; i < tx.size(); i += 37) {
      std::span<const TxFrame> burst(tx.data() + i, std::min<size_t>(37, tx.size() - i));
      auto n = w->tx_burst(0, burst);
      ASSERT_TRUE(n) << n.status().to_string();
      EXPECT_EQ(*n, burst.size());
    }
    ASSERT_TRUE(w->flush());
  }
  std::ifstream file(out, std::ios::binary);
  uint8_t magic[4] = {};
  file.read(reinterpret_cast<char*>(magic), 4);
  EXPECT_EQ(magic[0] | magic[1] << 8 | magic[2] << 16 | static_cast<uint32_t>(magic[3]) << 24, 0xA1B23C4Du)
      << "a nanosecond pcap";

  auto back = drain(*open_ok("pcap:" + out), 0);
  ASSERT_EQ(back.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(back[i].bytes, in[i].bytes) << i;
    EXPECT_EQ(back[i].timestamp_ns, in[i].timestamp_ns) << i;
  }
  std::filesystem::remove(out);
}

TEST(Pcap, PcapOutSnaplenCutsFrames) {
  auto in = drain(*open_ok("pcap:" + data_path("sample.pcap")), 0);
  std::string out = temp_path("gnio_snaplen.pcap");
  {
    auto w = open_ok("pcap-out:" + out + ",snaplen=100");
    ASSERT_TRUE(w);
    auto tx = as_tx(in);
    ASSERT_EQ(w->tx_burst(0, tx).value(), tx.size());
  }
  char errbuf[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(out.c_str(), errbuf);
  ASSERT_NE(p, nullptr) << errbuf;
  EXPECT_EQ(pcap_snapshot(p), 100);
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  size_t i = 0;
  while (pcap_next_ex(p, &h, &data) == 1) {
    ASSERT_EQ(h->len, in[i].bytes.size());
    ASSERT_EQ(h->caplen, std::min<size_t>(100, in[i].bytes.size()));
    ++i;
  }
  EXPECT_EQ(i, in.size());
  pcap_close(p);
  std::filesystem::remove(out);
}

TEST(Pcap, QueueAndDirectionErrors) {
  auto r = open_ok("pcap:" + data_path("sample.pcap"));
  ASSERT_TRUE(r);
  std::array<RxFrame, 1> burst{};
  EXPECT_EQ(r->rx_burst(1, burst).status().code(), Errc::InvalidValue);
  std::vector<TxFrame> none;
  auto tx = r->tx_burst(0, none);
  EXPECT_EQ(tx.status().code(), Errc::NotSupported);
  EXPECT_THAT(tx.status().message(), HasSubstr("pcap-out:FILE"));

  std::string out = temp_path("gnio_dir_errors.pcap");
  auto w = open_ok("pcap-out:" + out);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->rx_burst(0, burst).status().code(), Errc::NotSupported);
  EXPECT_EQ(w->tx_burst(1, none).status().code(), Errc::InvalidValue);
  // One byte over pcap-out's limit, the longest record libpcap writes.
  std::vector<uint8_t> jumbo(262145, 0);
  std::vector<TxFrame> big = {{jumbo.data(), 262145, 0}};
  auto e = w->tx_burst(0, big);
  EXPECT_EQ(e.status().code(), Errc::InvalidValue);
  EXPECT_THAT(e.status().message(), HasSubstr("262145 bytes"));
  w.reset();
  std::filesystem::remove(out);
}

TEST(PcapErrors, MissingFileIsNotFound) {
  std::string path = data_path("no-such-capture.pcap");
  auto b = open_backend("pcap:" + path);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::NotFound);
  EXPECT_THAT(b.status().message(), HasSubstr(path));
}

TEST(PcapErrors, BadMagicIsIoErrorAtOffsetZero) {
  auto b = open_backend("pcap:" + data_path("corrupt/bad_magic.pcap"));
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::IoError);
  EXPECT_THAT(b.status().message(), HasSubstr("bad_magic.pcap"));
  EXPECT_THAT(b.status().message(), HasSubstr("byte offset 0"));
}

TEST(PcapErrors, ShortFileHeaderIsIoError) {
  auto b = open_backend("pcap:" + data_path("corrupt/short_header.pcap"));
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::IoError);
  EXPECT_THAT(b.status().message(), HasSubstr("short_header.pcap"));
  EXPECT_THAT(b.status().message(), HasSubstr("byte offset 0"));
}

// raw_linktype.pcap holds records 0-3 of sample.pcap without their Ethernet
// header; sample.pcap is loopback traffic, whose MACs are zero, so the made-up
// header restores the frames byte for byte.
TEST(Pcap, RawIpGetsBackItsEthernetHeader) {
  auto b = open_ok("pcap:" + data_path("corrupt/raw_linktype.pcap"));
  ASSERT_TRUE(b);
  auto raw = drain(*b, 0);
  auto sample = drain(*open_ok("pcap:" + data_path("sample.pcap")), 0, 4);
  ASSERT_EQ(raw.size(), 4u);
  for (size_t i = 0; i < raw.size(); ++i) {
    EXPECT_EQ(raw[i].bytes, sample[i].bytes) << i;
    EXPECT_EQ(raw[i].timestamp_ns, sample[i].timestamp_ns) << i;
  }
  b = open_ok("pcap:" + data_path("corrupt/raw_linktype.pcap"));
  std::array<RxFrame, 4> burst{};
  ASSERT_EQ(b->rx_burst(0, burst).value(), 4u);
  for (const RxFrame& f : burst) EXPECT_EQ(f.flags, RxFrameSyntheticL2);
}

TEST(PcapErrors, DirectoryIsInvalidValue) {
  auto b = open_backend("pcap:" + data_path("corrupt"));
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::InvalidValue);
  EXPECT_THAT(b.status().message(), HasSubstr("is a directory"));
}

// truncated.pcap: records 0-9 whole, record 10 (at byte offset 1164) cut.
TEST(PcapErrors, TruncatedLastRecordIsIoErrorWithOffset) {
  auto b = open_ok("pcap:" + data_path("corrupt/truncated.pcap"));
  ASSERT_TRUE(b);
  auto [frames, error] = read_until_error(*b);
  EXPECT_EQ(frames, 10u);
  EXPECT_EQ(error.code(), Errc::IoError);
  EXPECT_THAT(error.message(), HasSubstr("truncated.pcap"));
  EXPECT_THAT(error.message(), HasSubstr("record 10 at byte offset 1164"));
  // The error stays: the stream does not silently end.
  std::array<RxFrame, 1> burst{};
  EXPECT_EQ(b->rx_burst(0, burst).status().code(), Errc::IoError);
  EXPECT_FALSE(b->at_end(0));
}

TEST(Pcap, FrameOverNineKilobytesIsDeliveredWhole) {
  std::string path = temp_path("gnio_oversized.pcap");
  pcap_t* p = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
  ASSERT_NE(d, nullptr);
  std::vector<uint8_t> frame(10000);
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<uint8_t>(i * 7);
  for (uint32_t len : {60u, 10000u, 60u}) {
    pcap_pkthdr h{};
    h.caplen = h.len = len;
    pcap_dump(reinterpret_cast<u_char*>(d), &h, frame.data());
  }
  pcap_dump_close(d);
  pcap_close(p);

  auto b = open_ok("pcap:" + path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().max_packet_size, 65535u) << "the file's snaplen";
  auto frames = drain(*b, 0);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[1].bytes, frame);
  std::filesystem::remove(path);
}

// jumbo.pcap (data/make_linktypes.py): what tshark says of each record.
struct JumboRecord {
  uint32_t caplen, wire_len;
  const char* eth_type;  // tshark's eth.type ("" for the empty record)
};
constexpr JumboRecord kJumbo[] = {{60, 60, "0x0800"},       {9217, 9217, "0x0800"},   {0, 0, ""},
                                  {65549, 65549, "0x0800"}, {66070, 66070, "0x86dd"}, {1000, 4000, "0x0800"}};

// tshark's frame.cap_len, frame.len and eth.type of each record of `path`.
std::vector<std::string> tshark_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::string cmd = "tshark -n -r '" + path + "' -T fields -e frame.cap_len -e frame.len -e eth.type 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return lines;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) lines.emplace_back(buf);
  pclose(p);
  return lines;
}

TEST(Pcap, DeliversFramesOfEverySizeAsTsharkReadsThem) {
  const std::string path = data_path("linktypes/jumbo.pcap");
  auto lines = tshark_lines(path);
  if (lines.empty()) GTEST_SKIP() << "tshark is not installed (apt-get install tshark)";
  ASSERT_EQ(lines.size(), std::size(kJumbo));
  for (size_t i = 0; i < lines.size(); ++i) {
    const JumboRecord& r = kJumbo[i];
    EXPECT_EQ(lines[i], std::to_string(r.caplen) + "\t" + std::to_string(r.wire_len) + "\t" + r.eth_type + "\n");
  }

  auto b = open_ok("pcap:" + path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().max_packet_size, 262144u);
  std::array<RxFrame, 8> burst{};
  ASSERT_EQ(b->rx_burst(0, burst).value(), std::size(kJumbo));
  for (size_t i = 0; i < std::size(kJumbo); ++i) {
    const JumboRecord& r = kJumbo[i];
    const RxFrame& f = burst[i];
    EXPECT_EQ(f.len, r.caplen) << i;
    const bool cut = r.caplen < r.wire_len;
    EXPECT_EQ(f.flags, cut ? RxFrameTruncated : 0u) << i;
    EXPECT_EQ(f.wire_len, cut ? r.wire_len : 0u) << i;
    if (f.len >= 14) {
      char type[8];
      std::snprintf(type, sizeof type, "0x%02x%02x", f.data[12], f.data[13]);
      EXPECT_STREQ(type, r.eth_type) << i;
    }
  }
  // The IPv4 header of the 64 KiB frame says 65535 bytes; its last byte is
  // the pattern's (make_linktypes.py fills payload byte k with seed + k).
  EXPECT_EQ(burst[3].data[16] << 8 | burst[3].data[17], 65535);
  EXPECT_EQ(burst[3].data[65548], static_cast<uint8_t>(2 + 65506));
}

TEST(Pcap, RxIntoCutsAtTheQueueMaxAndCountsEmptyRecords) {
  auto full = drain(*open_ok("pcap:" + data_path("linktypes/jumbo.pcap")), 0);
  ASSERT_EQ(full.size(), std::size(kJumbo));
  auto b = open_ok("pcap:" + data_path("linktypes/jumbo.pcap"));
  ASSERT_TRUE(b);
  RecordingSink sink(2048);
  testing::drain_into(*b, sink);
  ASSERT_EQ(sink.events.size(), std::size(kJumbo));
  for (size_t i = 0; i < std::size(kJumbo); ++i) {
    const auto& e = sink.events[i];
    const JumboRecord& r = kJumbo[i];
    if (r.caplen == 0) {
      EXPECT_EQ(e.dropped, DropReason::Empty);
      continue;
    }
    ASSERT_FALSE(e.dropped) << i;
    const uint32_t len = std::min(r.caplen, 2048u);
    EXPECT_EQ(e.bytes, std::vector<uint8_t>(full[i].bytes.begin(), full[i].bytes.begin() + len)) << i;
    const bool cut = len < r.wire_len;
    EXPECT_EQ(e.flags, cut ? RxFrameTruncated : 0u) << i;
    EXPECT_EQ(e.wire_len, cut ? r.wire_len : 0u) << i;
    EXPECT_EQ(e.timestamp_ns, full[i].timestamp_ns) << i;
  }
}

TEST(Pcap, RxIntoKeepsAFrameThatFindsNoRoom) {
  auto want = drain(*open_ok("pcap:" + data_path("sample.pcap")), 0);
  auto b = open_ok("pcap:" + data_path("sample.pcap"));
  ASSERT_TRUE(b);
  RecordingSink sink(9216);
  sink.set_room(10);
  EXPECT_EQ(b->rx_into(0, sink).value(), 10u);
  sink.set_room(10);
  sink.refuse_claims(1);  // the ring is full at the 11th frame
  EXPECT_EQ(b->rx_into(0, sink).value(), 0u);
  sink.set_room(5);
  EXPECT_EQ(b->rx_into(0, sink).value(), 5u);
  testing::drain_into(*b, sink, 7);
  ASSERT_EQ(sink.events.size(), want.size()) << "nothing lost, nothing twice";
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(sink.events[i].bytes, want[i].bytes) << i;
    ASSERT_EQ(sink.events[i].timestamp_ns, want[i].timestamp_ns) << i;
  }
}

TEST(Pcap, RxIntoFromAWireDropsWhatFindsNoRoom) {
  auto b = open_ok("pcap:" + data_path("sample.pcap") + ",pps=100000000");
  ASSERT_TRUE(b);
  RecordingSink sink(9216);
  sink.set_room(0);
  EXPECT_EQ(b->rx_into(0, sink).value(), 0u);  // starts the pacer's clock
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sink.refuse_claims(3);
  sink.set_room(8);
  EXPECT_EQ(b->rx_into(0, sink).value(), 11u);
  ASSERT_EQ(sink.events.size(), 11u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(sink.events[i].dropped, DropReason::RingFull) << i;
  for (size_t i = 3; i < 11; ++i) EXPECT_FALSE(sink.events[i].dropped) << i;
}

// snaplen_cut.pcap (data/make_linktypes.py), snaplen 128: record 1 holds 300
// bytes; libpcap delivers 128 of them. Record 3, at byte offset 530, is cut
// by the end of the file.
TEST(PcapErrors, OffsetAfterARecordLongerThanTheSnaplen) {
  auto b = open_ok("pcap:" + data_path("linktypes/snaplen_cut.pcap"));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->caps().max_packet_size, 128u);
  std::array<RxFrame, 8> burst{};
  ASSERT_EQ(b->rx_burst(0, burst).value(), 3u);
  EXPECT_EQ(burst[0].len, 60u);
  EXPECT_EQ(burst[1].len, 128u);
  EXPECT_EQ(burst[1].flags, RxFrameTruncated);
  EXPECT_EQ(burst[1].wire_len, 300u);
  EXPECT_EQ(burst[2].len, 98u);
  auto error = b->rx_burst(0, burst);
  ASSERT_FALSE(error);
  EXPECT_EQ(error.status().code(), Errc::IoError);
  EXPECT_THAT(error.status().message(), HasSubstr("record 3 at byte offset 530 "));
}

TEST(PcapErrors, PcapOutIntoMissingDirectoryIsIoError) {
  std::string path = temp_path("no-such-dir/out.pcap");
  auto b = open_backend("pcap-out:" + path);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::IoError);
  EXPECT_THAT(b.status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace gnio::backend
