// SPDX-License-Identifier: Apache-2.0
// pcapng-out:FILE,rxqs=R, the file of `gnio run --capture`: an interface per
// RX queue (rxq0...), and each frame written with what the kernel recorded
// with it (TxFrame::captured: its RX queue, RX time, epb_flags, whole
// length), read back by tshark; the interfaces' statistics count per RX queue.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/drivers.hpp"
#include "pcapng_checks.hpp"

namespace gnio::backend::pcapng_test {
namespace {

TEST_F(PcapngDir, ACaptureWritesEachFrameOnItsRxQueueWithItsFlagsAndLength) {
  GNIO_NEED_TOOLS();
  const std::string file = path("cap.pcapng");
  auto b = open_backend("pcapng-out:" + file + ",rxqs=3");
  ASSERT_TRUE(b) << b.status().to_string();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/captures/ping.pcap");
  ASSERT_GE(in.bytes.size(), 6u);
  // Frames of three RX queues, some "cut to the slot" (original longer
  // than the bytes kept), flags as the kernel sets them.
  const uint32_t flags[] = {1u, 1u | (1u << 10), 1u | (1u << 9), 1u | (1u << 25)};
  std::vector<TxFrame> tx;
  std::vector<Frame> want;
  for (size_t i = 0; i < in.bytes.size(); ++i) {
    const auto len = static_cast<uint32_t>(in.bytes[i].size());
    const uint32_t kept = i % 5 == 4 ? len / 2 : len;
    TxFrame f{in.bytes[i].data(), kept, in.time_ns[i]};
    f.captured = true;
    f.rx_queue = static_cast<uint16_t>(i % 3);
    f.epb_flags = flags[i % 4];
    f.original_len = len;
    tx.push_back(f);
    want.push_back({to_hex(in.bytes[i].data(), kept), in.time_ns[i], len, kept, static_cast<uint32_t>(i % 3),
                    "rxq" + std::to_string(i % 3), "0x00000001", 0});
  }
  send_in_bursts(**b, 0, tx);
  b->reset();  // closes the file: the statistics are written
  expect_frames(tshark_frames(file), want);
  // The whole epb_flags word, as tshark decodes it.
  const Output o = run("tshark -r " + quoted(file) + " -T fields -e frame.packet_flags");
  ASSERT_EQ(o.status, 0);
  std::vector<std::string> words;
  for (size_t at = 0, nl; (nl = o.text.find('\n', at)) != std::string::npos; at = nl + 1)
    words.push_back(o.text.substr(at, nl - at));
  ASSERT_EQ(words.size(), in.bytes.size());
  for (size_t i = 0; i < words.size(); ++i) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", flags[i % 4]);
    EXPECT_EQ(words[i], hex) << "frame " << i;
  }
  const std::vector<Block> blocks = pcapng_blocks(file);
  const std::vector<Block> idbs = of_type(blocks, kIdb), isbs = of_type(blocks, kIsb);
  ASSERT_EQ(idbs.size(), 3u);
  ASSERT_EQ(isbs.size(), 3u);
  const std::string info = capinfos(file);
  EXPECT_EQ(capinfos_line(info, "Number of interfaces in file:"), "3") << info;
  EXPECT_EQ(capinfos_line(info, "Number of packets:"), std::to_string(in.bytes.size())) << info;
}

TEST_F(PcapngDir, ACaptureFrameOfAnRxQueueBeyondRxqsIsRefused) {
  auto b = open_backend("pcapng-out:" + path("c.pcapng") + ",rxqs=2");
  ASSERT_TRUE(b) << b.status().to_string();
  const uint8_t frame[60] = {};
  TxFrame f{frame, sizeof frame, 1};
  f.captured = true;
  f.rx_queue = 2;
  auto n = (*b)->tx_burst(0, std::span<const TxFrame>(&f, 1));
  ASSERT_FALSE(n);
  EXPECT_EQ(n.status().code(), Errc::InvalidValue);
  EXPECT_NE(n.status().message().find("RX queue 2"), std::string::npos) << n.status().message();
  EXPECT_NE(n.status().message().find("rxqs=2"), std::string::npos) << n.status().message();
}

}  // namespace
}  // namespace gnio::backend::pcapng_test
