// SPDX-License-Identifier: Apache-2.0
// TX frame sizes and drops: the default max packet size is what the backend
// sends and staging slots stay small; a kernel's fill the queue cannot send
// is refused with a status the kernel sees, and every descriptor pushed is
// sent or dropped for a reason (submitted == sent + sum(dropped)), per TX
// backend, on the device under test (GNIO_TEST_GPU).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "../core/test_support.hpp"
#include "tx_refusals.hpp"

using namespace gnio;

namespace {

using tx_test::Bytes;

TEST(TxQueueSizes, DefaultMaxIsWhatTheBackendSendsAndStagingSlotsStaySmall) {
  const std::string out = (std::filesystem::temp_directory_path() / ("gnio-sizes-" + std::to_string(getpid()))).string();
  const std::string wire = "loop:tx-sizes-" + std::to_string(getpid());
  struct Row {
    std::string spec;
    uint32_t max;
  };
  for (const Row& row : {Row{"pcap-out:" + out, 262144u}, Row{"pcapng-out:" + out + ".pcapng", 262144u},
                         Row{wire, 9216u}, Row{"fault:slow_us=1,inner=" + wire, 9216u}}) {
    auto dev = EthDevice::open(row.spec);
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    EXPECT_EQ(dev->caps().max_packet_size, row.max) << row.spec;
    auto q = dev->create_txq(0);
    ASSERT_TRUE(q.has_value()) << q.status().to_string();
    EXPECT_EQ(q->max_packet_size(), row.max) << row.spec;
    EXPECT_EQ(q->staging_slot_size(), kDefaultTxStagingSlot) << row.spec << ": depth x max would be pinned";
    ASSERT_TRUE(q->set_max_packet_size(1500));
    EXPECT_EQ(q->staging_slot_size(), 1536u) << "a slot holds the max packet size, in 64-byte units";
    ASSERT_TRUE(q->set_max_packet_size(9000));
    ASSERT_TRUE(q->set_staging_slot_size(9000));
    EXPECT_EQ(q->staging_slot_size(), 9024u);
    const Status low = q->set_staging_slot_size(63);
    EXPECT_EQ(low.code(), Errc::InvalidValue);
    EXPECT_NE(low.message().find("63"), std::string::npos) << low.message();
    const Status high = q->set_staging_slot_size(row.max + 1);
    EXPECT_EQ(high.code(), Errc::InvalidValue);
    EXPECT_NE(high.message().find(std::to_string(row.max)), std::string::npos) << high.message();
  }
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".pcapng");
}

// One TX backend under test: the spec the kernel's queue opens, the spec
// whose host path reads what it sent, and an optional lower max packet size.
struct TxBackend {
  const char* name;
  std::optional<uint32_t> max;
};
void PrintTo(const TxBackend& b, std::ostream* os) { *os << b.name; }

class TxDrops : public ::testing::TestWithParam<TxBackend> {};

TEST_P(TxDrops, RefusedFillsAreStatusesAndEveryDescriptorIsSentOrDroppedForAReason) {
  GNIO_OPEN_TEST_GPU(gpu);
  const std::string tag = std::string(GetParam().name) + "-" + std::to_string(getpid()) + "-" + gpu.bus_id();
  const std::string file = (std::filesystem::temp_directory_path() / ("gnio-drops-" + tag + ".pcap")).string();
  const std::string wire = "loop:tx-drops-" + tag;
  const std::string name = GetParam().name;
  const std::string spec = name.rfind("pcap-out", 0) == 0 ? "pcap-out:" + file
                           : name == "pcapng-out"          ? "pcapng-out:" + file
                           : name == "fault"               ? "fault:slow_us=1,inner=" + wire
                                                           : wire;
  auto dev = EthDevice::open(spec);
  ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
  std::optional<EthDevice> far;
  std::optional<EthRxq> host_rx;
  if (spec.find("loop:") != std::string::npos) {  // the wire's other end receives on the host path
    auto d = EthDevice::open(wire);
    ASSERT_TRUE(d.has_value()) << d.status().to_string();
    far = std::move(*d);
    auto r = far->create_rxq(0);
    ASSERT_TRUE(r.has_value());
    host_rx = std::move(*r);
    ASSERT_TRUE(host_rx->start());
  }
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(txq.has_value()) << txq.status().to_string();
  if (GetParam().max) {
    ASSERT_TRUE(txq->set_max_packet_size(*GetParam().max));
  }
  ASSERT_TRUE(txq->set_depth(64));
  ASSERT_TRUE(txq->set_gpu(gpu));
  ASSERT_TRUE(txq->start());
  const uint32_t max = txq->max_packet_size(), slot = txq->staging_slot_size();
  auto statuses = tx_test::run_refusals(gpu, *txq);
  ASSERT_TRUE(statuses.has_value()) << statuses.status().to_string();
  const tx_test::RefusalExpectation want = tx_test::expect_refusals(max, slot);
  tx_test::expect_accounted(*statuses, txq->stats(), want, max, slot);

  // What the backend got: the accepted frames, whole, in ring order.
  std::vector<Bytes> got;
  if (host_rx) {
    gnio::test::eventually([&] {
      auto f = host_rx->host_receive(64);
      if (f)
        for (auto& x : *f) got.push_back(std::move(x.data));
      return got.size() >= want.sent.size();
    });
  } else {
    auto in = EthDevice::open("pcap:" + file);
    ASSERT_TRUE(in.has_value()) << in.status().to_string();
    auto r = in->create_rxq(0);
    ASSERT_TRUE(r.has_value() && r->start());
    while (!r->at_end()) {
      auto f = r->host_receive(64);
      ASSERT_TRUE(f.has_value());
      for (auto& x : *f) got.push_back(std::move(x.data));
    }
  }
  tx_test::expect_frames(got, want);
  ASSERT_TRUE(txq->destroy());
  std::filesystem::remove(file);
}

// pcap-out and pcapng-out send 64 KiB (their max is 256 KiB); loop, and
// fault over loop (partial sends), refuse it (9216); a lower max refuses the
// jumbo frame too. pcap: reads pcapng-out's file back (libpcap reads pcapng).
INSTANTIATE_TEST_SUITE_P(Backends, TxDrops,
                         ::testing::Values(TxBackend{"pcap-out", std::nullopt}, TxBackend{"pcap-out-1500", 1500u},
                                           TxBackend{"pcapng-out", std::nullopt},
                                           TxBackend{"loop", std::nullopt}, TxBackend{"fault", std::nullopt}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
