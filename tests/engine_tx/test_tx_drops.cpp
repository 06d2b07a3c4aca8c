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

#include "gnio/dev/txq.hpp"
#include "gnio/gpu_queue.hpp"
#include "gnio/persistent_kernel.hpp"
#include "../core/test_support.hpp"
#include "device_send_kernel.hpp"

using namespace gnio;

namespace {

using Bytes = std::vector<uint8_t>;

uint64_t dropped(const TxqStats& s, TxDropReason r) { return s.dropped[static_cast<size_t>(r)]; }

TEST(TxQueueSizes, DefaultMaxIsWhatTheBackendSendsAndStagingSlotsStaySmall) {
  const std::string out = (std::filesystem::temp_directory_path() / ("gnio-sizes-" + std::to_string(getpid()))).string();
  const std::string wire = "loop:tx-sizes-" + std::to_string(getpid());
  struct Row {
    std::string spec;
    uint32_t max;
  };
  for (const Row& row : {Row{"pcap-out:" + out, 262144u}, Row{wire, 9216u}, Row{"fault:slow_us=1,inner=" + wire, 9216u}}) {
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
  auto h = GpuTxq::create(gpu, *txq);
  auto buffer = gpu.alloc(tx_test::kRefusalBufferBytes, MemKind::Gpu);
  auto statuses = gpu.alloc(tx_test::kRefusalCases * sizeof(int32_t), MemKind::CpuGpu);
  ASSERT_TRUE(h.has_value() && buffer.has_value() && statuses.has_value());
  auto* st = static_cast<int32_t*>(statuses->host_ptr());
  for (uint32_t c = 0; c < tx_test::kRefusalCases; ++c) st[c] = -1;
  LaunchConfig one;
  one.grid = 1;
  one.block = 1;
  one.name = "tx-refusals";
  auto k = tx_test::launch_refusals(gpu, one, h->handle(), static_cast<uint8_t*>(buffer->device_ptr()),
                                    static_cast<int32_t*>(statuses->device_ptr()));
  ASSERT_TRUE(k.has_value()) << k.status().to_string();
  gnio::test::eventually([&] { return txq->stats().completions >= tx_test::kRefusalCases; });
  ASSERT_TRUE(k->stop());
  ASSERT_TRUE(h->destroy());
  ASSERT_TRUE(txq->stop());

  // What the device accepts: any length up to the max with set(), up to the
  // slot with stage(); the engine alone finds the unregistered address.
  using namespace tx_test;
  const uint32_t lens[kRefusalCases] = {60, 9000, 65536, max + 1, 200, slot + 1, 0, 64};
  std::vector<Bytes> want;
  uint64_t too_long = 0;
  for (uint32_t c = 0; c < kRefusalCases; ++c) {
    const bool staged = c == kStaged || c == kStagedOverSlot;
    const bool accepted = lens[c] != 0 && lens[c] <= max && (!staged || lens[c] <= slot);
    EXPECT_EQ(st[c], static_cast<int32_t>(accepted ? dev::Status::Success : dev::Status::InvalidValue))
        << "case " << c << ": " << lens[c] << " bytes, max " << max << ", slot " << slot;
    if (lens[c] != 0 && !accepted) ++too_long;
    if (accepted && c != kUnregistered) {
      Bytes b(lens[c]);
      for (uint32_t j = 0; j < lens[c]; ++j) b[j] = refusal_byte(j);
      want.push_back(std::move(b));
    }
  }
  const TxqStats s = txq->stats();
  EXPECT_EQ(s.submitted, kRefusalCases);
  EXPECT_EQ(s.completions, kRefusalCases);
  EXPECT_EQ(s.packets, want.size());
  EXPECT_EQ(dropped(s, TxDropReason::TooLong), too_long);
  EXPECT_EQ(dropped(s, TxDropReason::Empty), 1u);
  EXPECT_EQ(dropped(s, TxDropReason::NotRegistered), 1u);
  EXPECT_EQ(dropped(s, TxDropReason::CopyFailed), 0u);
  EXPECT_EQ(dropped(s, TxDropReason::BackendError), 0u);
  EXPECT_EQ(dropped(s, TxDropReason::Stopped), 0u);
  uint64_t all = 0;
  for (uint64_t n : s.dropped) all += n;
  EXPECT_EQ(s.errors, all);
  EXPECT_EQ(s.packets + all, s.submitted) << "a descriptor neither sent nor dropped for a reason";

  // What the backend got: the accepted frames, whole, in ring order.
  std::vector<Bytes> got;
  if (host_rx) {
    gnio::test::eventually([&] {
      auto f = host_rx->host_receive(64);
      if (f)
        for (auto& x : *f) got.push_back(std::move(x.data));
      return got.size() >= want.size();
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
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == want[i]) << "frame " << i << " of " << want[i].size();
  ASSERT_TRUE(txq->destroy());
  std::filesystem::remove(file);
}

// pcap-out sends 64 KiB (its max is 256 KiB); loop, and fault over loop
// (partial sends), refuse it (9216); a lower max refuses the jumbo frame too.
INSTANTIATE_TEST_SUITE_P(Backends, TxDrops,
                         ::testing::Values(TxBackend{"pcap-out", std::nullopt}, TxBackend{"pcap-out-1500", 1500u},
                                           TxBackend{"loop", std::nullopt}, TxBackend{"fault", std::nullopt}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
