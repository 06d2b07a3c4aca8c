// SPDX-License-Identifier: Apache-2.0
// pcapng-out:FILE,rxqs=R, the file of `gnio run --capture`: an interface per
// RX queue (rxq0...), and each frame written with what the kernel recorded
// with it (TxFrame::captured: its RX queue, RX time, epb_flags, whole
// length), read back by tshark; the interfaces' statistics count per RX queue.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/drivers.hpp"
#include "gnio/dev/capture.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
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

// Through the device API and the TX engine on the emulated device, as the
// kernel of `gnio run --capture` records: dev::Capture::offer() stages
// each frame with its RX queue, RX time and flags; frames longer than the
// 2048-byte slot are kept cut (Cut) with their whole length in the record.
TEST_F(PcapngDir, DeviceCapturesReachTheFileWithWhatTheKernelKnew) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/captures/tls.pcap");
  const std::string out = path("dev.pcapng");
  auto gpu = Gpu::open("cpu");
  ASSERT_TRUE(gpu) << gpu.status().to_string();
  // The capture's frames, every third padded to 3000 bytes: longer than a slot.
  std::vector<std::vector<uint8_t>> frames;
  for (size_t i = 0; i < in.bytes.size(); ++i) {
    frames.push_back(in.bytes[i]);
    if (i % 3 == 2) frames.back().resize(3000, static_cast<uint8_t>(i));
  }
  std::vector<Frame> want;
  uint64_t cut = 0;
  TxqStats stats;
  {
    auto dev = EthDevice::open("pcapng-out:" + out + ",rxqs=2");
    ASSERT_TRUE(dev) << dev.status().to_string();
    auto t = dev->create_txq(0);
    ASSERT_TRUE(t) << t.status().to_string();
    ASSERT_TRUE(t->set_depth(64));
    ASSERT_TRUE(t->set_staging_slot_size(kDefaultTxStagingSlot));
    ASSERT_TRUE(t->set_gpu(*gpu));
    ASSERT_TRUE(t->start());
    auto h = GpuTxq::create(*gpu, *t);
    ASSERT_TRUE(h) << h.status().to_string();
    const dev::Capture capture(h->handle());
    ASSERT_TRUE(capture.enabled());
    for (size_t i = 0; i < frames.size(); ++i) {
      const auto len = static_cast<uint32_t>(frames[i].size());
      const auto queue = static_cast<uint16_t>(i % 2);
      const uint32_t flags = dev::epb::kInbound | (i % 2 ? dev::epb::kChecksumValid : 0u);
      dev::CaptureOutcome o;
      while ((o = capture.offer<Scope::Thread>(true, frames[i].data(), len, queue, in.time_ns[i], flags)) ==
             dev::CaptureOutcome::RingFull)
        capture.txq().wait_completions(capture.txq().completed() + 1, 1'000'000'000ull);
      const uint32_t kept = std::min(len, kDefaultTxStagingSlot);
      EXPECT_EQ(o, kept < len ? dev::CaptureOutcome::Cut : dev::CaptureOutcome::Recorded) << "frame " << i;
      cut += kept < len ? 1 : 0;
      want.push_back({to_hex(frames[i].data(), kept), in.time_ns[i], len, kept, queue, "rxq" + std::to_string(queue),
                      "0x00000001", 0});
    }
    EXPECT_EQ(capture.offer<Scope::Thread>(false, nullptr, 0, 0, 0, 0), dev::CaptureOutcome::None);
    ASSERT_TRUE(h->destroy());
    ASSERT_TRUE(t->stop());
    stats = t->stats();
    ASSERT_TRUE(t->destroy());
  }
  EXPECT_EQ(cut, frames.size() / 3);
  EXPECT_EQ(stats.packets, frames.size());
  EXPECT_EQ(stats.errors, 0u);
  expect_frames(tshark_frames(out), want);
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
