// pcap: and pcap-out: backends: replay, loops, pacing, round trip and the
// error of each broken file in data/corrupt/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "test_util.hpp"

namespace gnio::backend {
namespace {

using ::testing::HasSubstr;
using testing::data_path;
using testing::drain;
using testing::Frame;
using testing::open_ok;

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
  std::vector<uint8_t> jumbo(9217, 0);
  std::vector<TxFrame> big = {{jumbo.data(), 9217, 0}};
  auto e = w->tx_burst(0, big);
  EXPECT_EQ(e.status().code(), Errc::InvalidValue);
  EXPECT_THAT(e.status().message(), HasSubstr("9217 bytes"));
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

TEST(PcapErrors, NonEthernetLinkTypeIsInvalidValue) {
  auto b = open_backend("pcap:" + data_path("corrupt/raw_linktype.pcap"));
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::InvalidValue);
  EXPECT_THAT(b.status().message(), HasSubstr("raw_linktype.pcap"));
  EXPECT_THAT(b.status().message(), HasSubstr("link type RAW"));
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

TEST(PcapErrors, OversizedFrameNamesTheRecord) {
  std::string path = temp_path("gnio_oversized.pcap");
  pcap_t* p = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* d = pcap_dump_open(p, path.c_str());
  ASSERT_NE(d, nullptr);
  std::vector<uint8_t> frame(10000, 0xEE);
  for (uint32_t len : {60u, 10000u, 60u}) {
    pcap_pkthdr h{};
    h.caplen = h.len = len;
    pcap_dump(reinterpret_cast<u_char*>(d), &h, frame.data());
  }
  pcap_dump_close(d);
  pcap_close(p);

  auto b = open_ok("pcap:" + path);
  ASSERT_TRUE(b);
  auto [frames, error] = read_until_error(*b);
  EXPECT_EQ(frames, 1u);
  EXPECT_EQ(error.code(), Errc::InvalidValue);
  EXPECT_THAT(error.message(), HasSubstr("record 1 (byte offset 100)"));
  EXPECT_THAT(error.message(), HasSubstr("10000 bytes"));
  std::filesystem::remove(path);
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
