// SPDX-License-Identifier: Apache-2.0
// pcapng-out's rotation: by size and by duration (the frames' own times and
// the send clock of an EthTxq), names reused in turn with files=N, and a
// next file that cannot be opened. Every file is read alone by tshark and
// capinfos; together, in order, they are the input: no frame lost, none
// twice, the drops counted where they happened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "gnio/eth.hpp"
#include "pcapng_checks.hpp"

namespace gnio::backend::pcapng_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// FILE, FILE.1, FILE.2, ... as long as they exist.
std::vector<std::string> rotated_files(const std::string& base) {
  std::vector<std::string> files;
  for (size_t i = 0;; ++i) {
    const std::string f = i == 0 ? base : base + "." + std::to_string(i);
    if (!fs::exists(f)) return files;
    files.push_back(f);
  }
}

// The bytes of a frame's Enhanced Packet Block by the pcapng spec: 28 bytes
// of header and fields, the data padded to 32 bits, epb_flags (8),
// opt_endofopt (4), the trailing length (4).
uint64_t packet_block(size_t len) { return 28 + ((len + 3) & ~size_t{3}) + 8 + 4 + 4; }

// Reads each file alone: its frames, its summary, its blocks and its
// statistics, which count from the capture's start (`dropped` frames were
// lost before file `dropped_before`). Returns each file's frames.
std::vector<std::vector<Frame>> read_each(const std::vector<std::string>& files, size_t dropped_before = 0,
                                          uint64_t dropped = 0) {
  std::vector<std::vector<Frame>> all;
  uint64_t delivered = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(files[i]);
    std::vector<Frame> frames = tshark_frames(files[i]);
    EXPECT_FALSE(frames.empty()) << "no empty file";
    delivered += frames.size();
    expect_capinfos(files[i], frames.size(), {"txq0"});
    const std::vector<Block> blocks = pcapng_blocks(files[i]);
    expect_layout(blocks, 1, frames.size());
    const uint64_t lost = i >= dropped_before ? dropped : 0;
    expect_statistics(blocks, 0, {delivered + lost, lost, delivered});
    all.push_back(std::move(frames));
  }
  return all;
}

std::vector<Frame> joined(const std::vector<std::vector<Frame>>& files) {
  std::vector<Frame> all;
  for (const auto& f : files) all.insert(all.end(), f.begin(), f.end());
  return all;
}

TEST_F(PcapngDir, BySizeEveryFileIsWholeAndTogetherTheyAreTheInput) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/sample.pcap");
  const std::string out = path("size.pcapng");
  constexpr uint64_t kLimit = 16384;
  {
    auto b = open_backend("pcapng-out:" + out + ",rotate=16K");
    ASSERT_TRUE(b) << b.status().to_string();
    send_in_bursts(**b, 0, as_tx(in));
  }
  const std::vector<std::string> files = rotated_files(out);
  ASSERT_GE(files.size(), 5u) << "about 100 KB in 16 KiB files";
  const std::vector<std::vector<Frame>> each = read_each(files);
  size_t next = 0;  // the input's index of the next file's first frame
  for (size_t i = 0; i < files.size(); ++i) {
    const uint64_t size = fs::file_size(files[i]);
    next += each[i].size();
    EXPECT_LE(size, kLimit) << files[i];
    if (i + 1 < files.size()) {
      EXPECT_GT(size + packet_block(in.bytes[next].size()), kLimit) << files[i] << ": it had room for one more frame";
    }
  }
  expect_frames(joined(each), expected(in, 0, "txq0"));
}

TEST_F(PcapngDir, ByDurationAFileCoversThatLongFromItsFirstFrame) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/captures/dns.pcap");
  const std::string out = path("time.pcapng");
  constexpr uint64_t kDuration = 250'000'000;
  {
    auto b = open_backend("pcapng-out:" + out + ",rotate=250ms");
    ASSERT_TRUE(b) << b.status().to_string();
    send_in_bursts(**b, 0, as_tx(in));
  }
  const std::vector<std::string> files = rotated_files(out);
  ASSERT_GE(files.size(), 3u) << "dns.pcap spans 1.5 s";
  const std::vector<std::vector<Frame>> each = read_each(files);
  for (size_t i = 0; i < each.size(); ++i) {
    ASSERT_FALSE(each[i].empty());
    for (const Frame& f : each[i]) EXPECT_LT(f.time_ns - each[i].front().time_ns, kDuration) << files[i];
    if (i > 0) {
      EXPECT_GE(each[i].front().time_ns - each[i - 1].front().time_ns, kDuration) << files[i];
    }
  }
  expect_frames(joined(each), expected(in, 0, "txq0"));
}

// Through an EthTxq the frames' times are their send times: three groups
// 150 ms apart with rotate=100ms make three files.
TEST_F(PcapngDir, ByDurationOnTheSendClockOfAnEthTxq) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/captures/arp.pcap");
  ASSERT_GE(in.bytes.size(), 15u);
  const std::string out = path("clock.pcapng");
  TxqStats stats;
  {
    auto dev = EthDevice::open("pcapng-out:" + out + ",rotate=100ms");
    ASSERT_TRUE(dev) << dev.status().to_string();
    auto txq = dev->create_txq(0);
    ASSERT_TRUE(txq && txq->start());
    for (size_t group = 0; group < 3; ++group) {
      if (group > 0) std::this_thread::sleep_for(std::chrono::milliseconds(150));
      std::vector<std::span<const uint8_t>> frames;
      for (size_t k = 5 * group; k < 5 * group + 5; ++k) frames.emplace_back(in.bytes[k]);
      auto n = txq->host_send(frames);
      ASSERT_TRUE(n) << n.status().to_string();
      ASSERT_EQ(*n, 5u);
    }
    ASSERT_TRUE(txq->stop());
    stats = txq->stats();
  }
  EXPECT_EQ(stats.packets, 15u);
  const std::vector<std::string> files = rotated_files(out);
  ASSERT_EQ(files.size(), 3u);
  const std::vector<std::vector<Frame>> each = read_each(files);
  for (size_t i = 0; i < each.size(); ++i) EXPECT_EQ(each[i].size(), 5u) << files[i];
  const std::vector<Frame> got = joined(each);
  Input first15 = in;
  first15.bytes.resize(15);
  first15.time_ns.resize(15);
  std::vector<Frame> want = expected(first15, 0, "txq0");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) want[i].time_ns = got[i].time_ns;
  expect_frames(got, want);
}

// files=3: FILE, FILE.1, FILE.2 in turn; what they hold at the end is the
// input's last frames, the newest file's statistics count them all.
TEST_F(PcapngDir, FilesReuseTheirNamesInTurn) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/sample.pcap");
  const std::string out = path("ring.pcapng");
  {
    auto b = open_backend("pcapng-out:" + out + ",rotate=8K,files=3");
    ASSERT_TRUE(b) << b.status().to_string();
    send_in_bursts(**b, 0, as_tx(in));
  }
  ASSERT_EQ(rotated_files(out).size(), 3u);
  EXPECT_FALSE(fs::exists(out + ".3"));
  // The files in the order they were written: by their first frame's time.
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const std::string& f : rotated_files(out)) order.emplace_back(tshark_frames(f).front().time_ns, f);
  std::sort(order.begin(), order.end());
  std::vector<Frame> got;
  for (const auto& [t, f] : order) {
    const std::vector<Frame> frames = tshark_frames(f);
    got.insert(got.end(), frames.begin(), frames.end());
  }
  ASSERT_LT(got.size(), in.bytes.size()) << "older files were overwritten";
  std::vector<Frame> want = expected(in, 0, "txq0");
  want.erase(want.begin(), want.end() - static_cast<std::ptrdiff_t>(got.size()));
  expect_frames(got, want);
  expect_statistics(pcapng_blocks(order.back().second), 0, {in.bytes.size(), 0, in.bytes.size()});
}

// The next file's folder is gone at the rotation: the frames that cannot go
// anywhere are errors and counted, and once the folder is back the next
// file opens and its first frame carries their count.
TEST_F(PcapngDir, ANextFileThatCannotBeOpenedCountsItsFramesAndGoesOnOnceItCan) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/sample.pcap");
  const std::vector<TxFrame> tx = as_tx(in);
  fs::create_directories(path("sub"));
  const std::string out = path("sub") + "/r.pcapng";
  auto b = open_backend("pcapng-out:" + out + ",rotate=16K");
  ASSERT_TRUE(b) << b.status().to_string();
  size_t i = 0;
  while (!fs::exists(out + ".1")) {
    ASSERT_LT(i, tx.size());
    ASSERT_TRUE((*b)->tx_burst(0, std::span(tx).subspan(i++, 1)));
  }
  fs::rename(path("sub"), path("away"));
  size_t refused = 0;
  for (; refused < 4 && i < tx.size(); ++i) {
    auto n = (*b)->tx_burst(0, std::span(tx).subspan(i, 1));
    if (n) continue;  // still room in the open file
    ++refused;
    EXPECT_EQ(n.status().code(), Errc::IoError);
    EXPECT_THAT(n.status().message(), HasSubstr("cannot open '" + out + ".2' for writing: " + std::strerror(ENOENT)));
  }
  ASSERT_EQ(refused, 4u);
  fs::rename(path("away"), path("sub"));
  for (; i < tx.size(); ++i) ASSERT_TRUE((*b)->tx_burst(0, std::span(tx).subspan(i, 1)));
  EXPECT_THAT((*b)->flush().message(), HasSubstr("(4 frame(s) dropped since the last flush"));
  b->reset();

  const std::vector<std::string> files = rotated_files(out);
  ASSERT_GE(files.size(), 3u);
  const std::vector<std::vector<Frame>> each = read_each(files, 2, 4);
  const size_t before = each[0].size() + each[1].size();
  Input kept = in;
  kept.bytes.erase(kept.bytes.begin() + before, kept.bytes.begin() + before + 4);
  kept.time_ns.erase(kept.time_ns.begin() + before, kept.time_ns.begin() + before + 4);
  std::vector<Frame> want = expected(kept, 0, "txq0");
  want[before].drop_count = 4;
  expect_frames(joined(each), want);
}

}  // namespace
}  // namespace gnio::backend::pcapng_test
