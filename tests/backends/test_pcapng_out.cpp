// SPDX-License-Identifier: Apache-2.0
// pcapng-out: the bundled captures written through the backend, a host-path
// EthTxq and the TX engine on the emulated device, read back with tshark and
// capinfos packet for packet (bytes, lengths, timestamps to the ns,
// interfaces, epb_flags, epb_dropcount, each interface's statistics against
// the queue's), its spec errors, an unwritable path, a full disk and a
// write cut short. Rotation: test_pcapng_rotation.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include "gnio/dev/txq.hpp"
#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/gpu_queue.hpp"
#include "pcapng_checks.hpp"

namespace gnio::backend::pcapng_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

TEST_F(PcapngDir, SpecErrorsNameTheOptionTheValueAndTheFix) {
  const std::string f = "pcapng-out:" + path("x.pcapng");
  struct Case {
    std::string spec, expect;
  };
  const std::vector<Case> cases = {
      {f + ",rotate=5m", "rotate=5m is ambiguous; write rotate=5min for minutes or rotate=5M for MiB"},
      {f + ",rotate=10x", "rotate=10x has an unknown unit 'x'; use rotate=SIZE"},
      {f + ",rotate=1.5G", "rotate=1.5G is not a whole number"},
      {f + ",rotate=G", "rotate=G does not start with a whole number"},
      {f + ",rotate=100", "rotate=100 is under 1 KiB; a file holds its headers and at least one frame"},
      {f + ",rotate=0s", "rotate=0s is zero"},
      {f + ",rotate=99999999999999999999", "rotate=99999999999999999999 is out of range"},
      {f + ",rotate=99999999999G", "rotate=99999999999G is out of range"},
      {f + ",files=3", "files=3 needs rotate=; add rotate=SIZE or rotate=DURATION"},
      {f + ",rotate=1M,files=0", "files=0 is out of range; use files=N with 1 <= N <= 1000000"},
      {f + ",queues=0", "queues=0 is out of range; use queues=N with 1 <= N <= 64"},
      {f + ",queues=65", "queues=65 is out of range"},
      {f + ",rxqs=0", "rxqs=0 is out of range; use rxqs=N with 1 <= N <= 64"},
      {f + ",snaplen=10", "snaplen=10 is out of range; use snaplen=N with 64 <= N <= 262144"},
      {f + ",rotate=1M,rotate=2M", "option 'rotate' is given twice"},
      {f + ",compress=1", "unknown option 'compress' (value '1') for driver 'pcapng-out'; accepted keys: snaplen, "
                          "queues, rxqs, rotate, files"},
      {"pcapng-out:", "driver 'pcapng-out' needs an argument"},
  };
  for (const Case& c : cases) {
    auto b = open_backend(c.spec);
    ASSERT_FALSE(b) << c.spec;
    EXPECT_EQ(b.status().code(), Errc::InvalidValue) << c.spec;
    EXPECT_THAT(b.status().message(), HasSubstr(c.expect)) << c.spec;
    EXPECT_THAT(b.status().message(), HasSubstr(c.spec)) << "the message quotes the spec";
  }
  EXPECT_FALSE(fs::exists(path("x.pcapng"))) << "a refused spec opens no file";
}

TEST_F(PcapngDir, CapsQueuesAndDirection) {
  auto b = open_backend("pcapng-out:" + path("c.pcapng") + ",queues=4,rotate=1G,files=10,snaplen=128");
  ASSERT_TRUE(b) << b.status().to_string();
  const EthCaps& caps = (*b)->caps();
  EXPECT_EQ(caps.driver, "pcapng-out");
  EXPECT_EQ(caps.max_tx_queues, 4);
  EXPECT_EQ(caps.max_rx_queues, 0);
  EXPECT_FALSE(caps.rx_supported);
  EXPECT_TRUE(caps.tx_supported);
  EXPECT_EQ(caps.max_packet_size, 262144u);
  std::array<RxFrame, 1> rx{};
  auto r = (*b)->rx_burst(0, rx);
  EXPECT_EQ(r.status().code(), Errc::NotSupported);
  EXPECT_THAT(r.status().message(), HasSubstr("'pcap:FILE'"));
  std::vector<TxFrame> none;
  auto q = (*b)->tx_burst(4, none);
  EXPECT_EQ(q.status().code(), Errc::InvalidValue);
  EXPECT_THAT(q.status().message(), HasSubstr("has 4 TX queue(s) (0..3); queue 4 does not exist; add queues=N"));
  std::vector<uint8_t> jumbo(262145, 0);
  std::vector<TxFrame> big = {{jumbo.data(), 262145, 0}};
  auto e = (*b)->tx_burst(0, big);
  EXPECT_EQ(e.status().code(), Errc::InvalidValue);
  EXPECT_THAT(e.status().message(), HasSubstr("262145 bytes, more than max_packet_size 262144"));
}

// Every bundled capture, in uneven bursts with the capture's own
// timestamps: what tshark reads back is the input, to the byte and the ns.
TEST_F(PcapngDir, EveryBundledCaptureRoundTripsPacketForPacket) {
  GNIO_NEED_TOOLS();
  std::vector<std::string> captures = {std::string(GNIO_DATA_DIR) + "/sample.pcap"};
  for (const auto& e : fs::directory_iterator(std::string(GNIO_DATA_DIR) + "/captures"))
    if (e.path().extension() == ".pcap") captures.push_back(e.path().string());
  ASSERT_GE(captures.size(), 8u);
  for (const std::string& capture : captures) {
    SCOPED_TRACE(capture);
    const Input in = read_capture(capture);
    ASSERT_FALSE(in.bytes.empty());
    // libpcap and tshark agree on the input.
    std::vector<Frame> input = tshark_frames(capture);
    for (Frame& f : input) f.interface_name.clear();
    std::vector<Frame> want = expected(in, 0, "");
    for (size_t i = 0; i < want.size(); ++i) {
      want[i].direction.clear();
      want[i].len = in.wire_len[i];
    }
    expect_frames(input, want);

    const std::string out = path(fs::path(capture).stem().string() + ".pcapng");
    {
      auto b = open_backend("pcapng-out:" + out);
      ASSERT_TRUE(b) << b.status().to_string();
      send_in_bursts(**b, 0, as_tx(in));
      EXPECT_TRUE((*b)->flush());
    }
    expect_frames(tshark_frames(out), expected(in, 0, "txq0"));
    expect_capinfos(out, in.bytes.size(), {"txq0"});
    const std::vector<Block> blocks = pcapng_blocks(out);
    expect_layout(blocks, 1, in.bytes.size());
    expect_statistics(blocks, 0, {in.bytes.size(), 0, in.bytes.size()});
  }
}

TEST_F(PcapngDir, SnaplenCutsWhatIsKeptAndKeepsTheLength) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/captures/tls.pcap");
  const std::string out = path("cut.pcapng");
  {
    auto b = open_backend("pcapng-out:" + out + ",snaplen=100");
    ASSERT_TRUE(b) << b.status().to_string();
    send_in_bursts(**b, 0, as_tx(in));
  }
  std::vector<Frame> want = expected(in, 0, "txq0");
  for (Frame& f : want) {
    f.cap_len = std::min<uint32_t>(f.len, 100);
    f.hex.resize(2 * f.cap_len);
  }
  expect_frames(tshark_frames(out), want);
  const std::vector<Block> idb = of_type(pcapng_blocks(out), kIdb);
  ASSERT_EQ(idb.size(), 1u);
  EXPECT_EQ(field(idb[0], "pcapng.interface_description.snap_length"), "100");
}

// The host path: timestamps are the send time (now), counts are the queue's.
TEST_F(PcapngDir, HostSendThroughAnEthTxqIsRecordedWithItsSendTimes) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/captures/dns.pcap");
  const std::string out = path("host.pcapng");
  TxqStats stats;
  const uint64_t before = now_ns();
  {
    auto dev = EthDevice::open("pcapng-out:" + out);
    ASSERT_TRUE(dev) << dev.status().to_string();
    EXPECT_EQ(dev->caps().driver, "pcapng-out");
    auto txq = dev->create_txq(0);
    ASSERT_TRUE(txq) << txq.status().to_string();
    ASSERT_TRUE(txq->start());
    for (size_t i = 0; i < in.bytes.size(); i += 5) {
      std::vector<std::span<const uint8_t>> burst;
      for (size_t k = i; k < std::min(in.bytes.size(), i + 5); ++k) burst.emplace_back(in.bytes[k]);
      auto n = txq->host_send(burst);
      ASSERT_TRUE(n) << n.status().to_string();
      ASSERT_EQ(*n, burst.size());
    }
    ASSERT_TRUE(txq->stop());
    stats = txq->stats();
    ASSERT_TRUE(txq->destroy());
  }
  const uint64_t after = now_ns();
  EXPECT_EQ(stats.packets, in.bytes.size());
  std::vector<Frame> got = tshark_frames(out);
  ASSERT_EQ(got.size(), in.bytes.size());
  uint64_t previous = before;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_GE(got[i].time_ns, previous) << "frame " << i << ": sent in order, after the test began";
    EXPECT_LE(got[i].time_ns, after) << "frame " << i;
    previous = got[i].time_ns;
  }
  std::vector<Frame> want = expected(in, 0, "txq0");
  for (size_t i = 0; i < want.size(); ++i) want[i].time_ns = got[i].time_ns;
  expect_frames(got, want);
  expect_statistics(pcapng_blocks(out), 0, {stats.packets + stats.dropped[size_t(TxDropReason::BackendError)],
                                            stats.dropped[size_t(TxDropReason::BackendError)], stats.packets});
}

// The device path, played by the test's thread with the device API as a
// kernel would (the emulated device's rings are host memory): two queues,
// two interfaces, each queue's statistics block equal to its stats; a
// WaitOnTime send is recorded at or after its send time.
TEST_F(PcapngDir, TheTxEngineOnTheEmulatedDeviceRecordsAnInterfacePerQueue) {
  GNIO_NEED_TOOLS();
  const Input http = read_capture(std::string(GNIO_DATA_DIR) + "/captures/http.pcap");
  const Input tls = read_capture(std::string(GNIO_DATA_DIR) + "/captures/tls.pcap");
  const std::string out = path("engine.pcapng");
  auto gpu = Gpu::open("cpu");
  ASSERT_TRUE(gpu) << gpu.status().to_string();
  TxqStats stats[2];
  uint64_t send_time = 0;
  {
    auto dev = EthDevice::open("pcapng-out:" + out + ",queues=2");
    ASSERT_TRUE(dev) << dev.status().to_string();
    std::vector<EthTxq> txqs;
    std::vector<GpuTxq> handles;
    for (uint16_t q = 0; q < 2; ++q) {
      auto t = dev->create_txq(q);
      ASSERT_TRUE(t) << t.status().to_string();
      ASSERT_TRUE(t->set_gpu(*gpu));
      ASSERT_TRUE(t->set_type(TxqType::WaitOnTime));
      ASSERT_TRUE(t->start());
      txqs.push_back(std::move(*t));
      auto h = GpuTxq::create(*gpu, txqs.back());
      ASSERT_TRUE(h) << h.status().to_string();
      handles.push_back(std::move(*h));
    }
    const Input* inputs[2] = {&http, &tls};
    for (uint16_t q = 0; q < 2; ++q) {
      const dev::Txq txq = handles[q].handle();
      const Input& in = *inputs[q];
      for (size_t i = 0; i < in.bytes.size(); i += 16) {
        const auto n = static_cast<uint32_t>(std::min<size_t>(16, in.bytes.size() - i));
        dev::TxBatch b = txq.reserve<Scope::Thread>(n);
        ASSERT_EQ(b.status(), dev::Status::Success);
        // The last burst of queue 1 waits 20 ms.
        const bool last = q == 1 && i + n == in.bytes.size();
        if (last) send_time = now_ns() + 20'000'000;
        for (uint32_t k = 0; k < n; ++k)
          ASSERT_EQ(b.stage(k, in.bytes[i + k].data(), static_cast<uint32_t>(in.bytes[i + k].size()),
                            last ? send_time : 0),
                    dev::Status::Success);
        txq.commit<Scope::Thread>(b);
        txq.push();
        ASSERT_EQ(txq.wait_completions(b.first() + n, 5'000'000'000ull), dev::Status::Success);
      }
      EXPECT_EQ(txq.completion_errors(), 0u);
    }
    for (uint16_t q = 0; q < 2; ++q) {
      ASSERT_TRUE(handles[q].destroy());
      ASSERT_TRUE(txqs[q].stop());
      stats[q] = txqs[q].stats();
      ASSERT_TRUE(txqs[q].destroy());
    }
  }
  EXPECT_EQ(stats[0].packets, http.bytes.size());
  EXPECT_EQ(stats[1].packets, tls.bytes.size());
  EXPECT_GE(stats[1].waited_on_time, 1u);

  const std::vector<Frame> got = tshark_frames(out);
  std::vector<Frame> per[2];
  for (const Frame& f : got) {
    ASSERT_LT(f.interface_id, 2u);
    per[f.interface_id].push_back(f);
  }
  for (uint16_t q = 0; q < 2; ++q) {
    SCOPED_TRACE("queue " + std::to_string(q));
    std::vector<Frame> want = expected(q == 0 ? http : tls, q, "txq" + std::to_string(q));
    ASSERT_EQ(per[q].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) want[i].time_ns = per[q][i].time_ns;
    expect_frames(per[q], want);
  }
  EXPECT_GE(per[1].back().time_ns, send_time) << "a WaitOnTime frame is sent, and stamped, at its time or later";
  expect_capinfos(out, got.size(), {"txq0", "txq1"});
  const std::vector<Block> blocks = pcapng_blocks(out);
  expect_layout(blocks, 2, got.size());
  for (uint16_t q = 0; q < 2; ++q) {
    const uint64_t failed = stats[q].dropped[size_t(TxDropReason::BackendError)];
    EXPECT_EQ(stats[q].submitted, stats[q].packets + stats[q].errors);
    expect_statistics(blocks, q, {stats[q].packets + failed, failed, stats[q].packets});
  }
}

TEST_F(PcapngDir, AnUnwritablePathIsAnErrorWithThePathTheCauseAndTheFix) {
  const std::string missing = path("no-such-dir") + "/x.pcapng";
  auto b = open_backend("pcapng-out:" + missing);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.status().code(), Errc::IoError);
  EXPECT_THAT(b.status().message(), HasSubstr("cannot open '" + missing + "' for writing: " + std::strerror(ENOENT)));
  EXPECT_THAT(b.status().message(), HasSubstr("directory '" + path("no-such-dir") + "' does not exist: create it"));
  auto d = open_backend("pcapng-out:" + dir());
  ASSERT_FALSE(d);
  EXPECT_EQ(d.status().code(), Errc::IoError);
  EXPECT_THAT(d.status().message(), HasSubstr(std::string(std::strerror(EISDIR)) + "; it is a directory: name a file"));
}

// /dev/full takes no byte: every frame the engine hands over is counted as
// dropped(backend_error), and stop() (its flush) reports the error.
TEST_F(PcapngDir, AFullDiskIsCountedAsBackendErrorsAndReportedByStop) {
  auto gpu = Gpu::open("cpu");
  ASSERT_TRUE(gpu) << gpu.status().to_string();
  auto dev = EthDevice::open("pcapng-out:/dev/full");
  ASSERT_TRUE(dev) << dev.status().to_string();
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(txq && txq->set_gpu(*gpu) && txq->start());
  auto handle = GpuTxq::create(*gpu, *txq);
  ASSERT_TRUE(handle) << handle.status().to_string();
  const dev::Txq t = handle->handle();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/captures/ping.pcap");
  const auto n = static_cast<uint32_t>(std::min<size_t>(in.bytes.size(), 24));
  dev::TxBatch b = t.reserve<Scope::Thread>(n);
  ASSERT_EQ(b.status(), dev::Status::Success);
  for (uint32_t k = 0; k < n; ++k)
    ASSERT_EQ(b.stage(k, in.bytes[k].data(), static_cast<uint32_t>(in.bytes[k].size())), dev::Status::Success);
  t.commit<Scope::Thread>(b);
  t.push();
  ASSERT_EQ(t.wait_completions(n, 5'000'000'000ull), dev::Status::Success);
  EXPECT_EQ(t.completion_errors(), n);
  ASSERT_TRUE(handle->destroy());
  const Status stopped = txq->stop();
  const TxqStats s = txq->stats();
  EXPECT_EQ(s.submitted, n);
  EXPECT_EQ(s.packets, 0u);
  EXPECT_EQ(s.dropped[size_t(TxDropReason::BackendError)], n);
  EXPECT_EQ(s.errors, n);
  EXPECT_EQ(stopped.code(), Errc::IoError);
  EXPECT_THAT(stopped.message(), HasSubstr("to '/dev/full' failed: " + std::string(std::strerror(ENOSPC))));
  EXPECT_THAT(stopped.message(), HasSubstr("free space"));
  EXPECT_THAT(stopped.message(), HasSubstr(std::to_string(n) + " frame(s) dropped since the last flush, counted as "
                                                               "dropped(backend_error)"));

  // On the host path the caller gets the error at once.
  auto host = EthDevice::open("pcapng-out:/dev/full");
  ASSERT_TRUE(host);
  auto hq = host->create_txq(0);
  ASSERT_TRUE(hq && hq->start());
  std::vector<std::span<const uint8_t>> one = {in.bytes[0]};
  auto sent = hq->host_send(one);
  EXPECT_EQ(sent.status().code(), Errc::IoError);
  EXPECT_THAT(sent.status().message(), HasSubstr(std::strerror(ENOSPC)));
  EXPECT_THAT(hq->stop().message(), HasSubstr("(1 frame(s) dropped since the last flush"));
}

// A write cut short (the file-size limit, as a full quota would) is taken
// back so the file stays whole; the frames are counted, and the next frame
// written carries them in its epb_dropcount.
TEST_F(PcapngDir, AWriteCutShortIsTakenBackAndTheNextFrameCarriesTheDropCount) {
  GNIO_NEED_TOOLS();
  const Input in = read_capture(std::string(GNIO_DATA_DIR) + "/sample.pcap");
  const std::vector<TxFrame> tx = as_tx(in);
  ASSERT_GE(tx.size(), 40u);
  const std::string out = path("limited.pcapng");
  auto b = open_backend("pcapng-out:" + out);
  ASSERT_TRUE(b) << b.status().to_string();
  send_in_bursts(**b, 0, std::vector<TxFrame>(tx.begin(), tx.begin() + 20));
  const uintmax_t size = fs::file_size(out);

  // SIGXFSZ would end the process; the write then fails with EFBIG.
  struct sigaction ignore {}, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old), 0);
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = size + 10;  // less than any block: the first write is cut after 10 bytes
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  auto cut = (*b)->tx_burst(0, std::span(tx).subspan(20, 5));
  auto single = (*b)->tx_burst(0, std::span(tx).subspan(25, 1));
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &old, nullptr), 0);

  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.status().code(), Errc::IoError);
  EXPECT_THAT(cut.status().message(), HasSubstr("writing 5 frame(s) of TX queue 0 to '" + out +
                                                "' failed: " + std::strerror(EFBIG) + " (the file holds 20 frames)"));
  EXPECT_THAT(cut.status().message(), HasSubstr("rotate with rotate=SIZE"));
  EXPECT_FALSE(single);
  EXPECT_EQ(fs::file_size(out), size) << "the cut block was taken back";

  send_in_bursts(**b, 0, std::vector<TxFrame>(tx.begin() + 26, tx.end()));
  const Status flushed = (*b)->flush();
  EXPECT_EQ(flushed.code(), Errc::IoError);
  EXPECT_THAT(flushed.message(), HasSubstr("(6 frame(s) dropped since the last flush"));
  EXPECT_TRUE((*b)->flush()) << "each error is reported once";
  b->reset();

  Input kept = in;
  kept.bytes.erase(kept.bytes.begin() + 20, kept.bytes.begin() + 26);
  kept.time_ns.erase(kept.time_ns.begin() + 20, kept.time_ns.begin() + 26);
  kept.wire_len.erase(kept.wire_len.begin() + 20, kept.wire_len.begin() + 26);
  std::vector<Frame> want = expected(kept, 0, "txq0");
  want[20].drop_count = 6;
  expect_frames(tshark_frames(out), want);
  expect_capinfos(out, kept.bytes.size(), {"txq0"});
  const std::vector<Block> blocks = pcapng_blocks(out);
  expect_layout(blocks, 1, kept.bytes.size());
  expect_statistics(blocks, 0, {in.bytes.size(), 6, kept.bytes.size()});
}

}  // namespace
}  // namespace gnio::backend::pcapng_test
