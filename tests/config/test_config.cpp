// SPDX-License-Identifier: Apache-2.0
// Bad configuration, table-driven: every setter and spec key out of range
// returns InvalidValue naming the value and the allowed range, and leaves
// the object as it was (nothing allocated, the queue still configurable).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "gnio/eth.hpp"
#include "gnio/gpu.hpp"
#include "gnio/log.hpp"
#include "gnio/metrics.hpp"
#include "gnio/persistent_kernel.hpp"

using namespace gnio;

namespace {

struct Row {
  const char* what;
  std::function<Status()> call;
  const char* value;  // the rejected value, as the message must show it
  const char* range;  // a piece of the allowed range the message must show
};

void expect_invalid(const Row& r) {
  Status s = r.call();
  ASSERT_FALSE(s) << r.what << " was accepted";
  EXPECT_EQ(s.code(), Errc::InvalidValue) << r.what << ": " << s.to_string();
  EXPECT_NE(s.message().find(r.value), std::string::npos) << r.what << ": value missing in: " << s.message();
  EXPECT_NE(s.message().find(r.range), std::string::npos) << r.what << ": range missing in: " << s.message();
}

template <typename T>
Status status_of(const Result<T>& r) {
  return r ? Status::ok() : r.status();
}

struct Noop {
  GNIO_HD void operator()(const dev::KernelCtx&) const {}
};

}  // namespace

TEST(BadConfig, RxQueueSettersRejectOutOfRangeValues) {
  auto dev = EthDevice::open("synthetic:count=1");
  ASSERT_TRUE(dev) << dev.status().to_string();
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q) << q.status().to_string();
  const uint32_t strides = q->num_strides(), stride = q->stride_size(), burst = q->burst_size();
  const Row rows[] = {
      {"num_strides 3", [&] { return q->set_num_strides(3); }, "3", "power of two"},
      {"num_strides 0", [&] { return q->set_num_strides(0); }, "0", "power of two"},
      {"stride 100", [&] { return q->set_stride_size(100); }, "100", "power of two"},
      {"stride 32", [&] { return q->set_stride_size(32); }, "32", "64"},
      {"stride 4096", [&] { return q->set_stride_size(4096); }, "4096", "2048"},
      {"burst 0", [&] { return q->set_burst_size(0); }, "0", "256"},
      {"burst 100000", [&] { return q->set_burst_size(100000); }, "100000", "256"},
      {"max packet 100000", [&] { return q->set_max_packet_size(100000); }, "100000", "9216"},
      {"max packet 0", [&] { return q->set_max_packet_size(0); }, "0", "9216"},
  };
  for (const Row& r : rows) expect_invalid(r);
  EXPECT_EQ(q->state(), QueueState::Created);
  EXPECT_EQ(q->num_strides(), strides);
  EXPECT_EQ(q->stride_size(), stride);
  EXPECT_EQ(q->burst_size(), burst);
  EXPECT_TRUE(q->set_num_strides(64));  // still configurable
}

TEST(BadConfig, TxQueueSettersRejectOutOfRangeValues) {
  auto dev = EthDevice::open("loop:");
  ASSERT_TRUE(dev) << dev.status().to_string();
  auto q = dev->create_txq(0);
  ASSERT_TRUE(q) << q.status().to_string();
  const Row rows[] = {
      {"depth 3", [&] { return q->set_depth(3); }, "3", "power of two"},
      {"depth 0", [&] { return q->set_depth(0); }, "0", "power of two"},
      {"max packet 100000", [&] { return q->set_max_packet_size(100000); }, "100000", "9216"},
      {"max packet 0", [&] { return q->set_max_packet_size(0); }, "0", "9216"},
  };
  for (const Row& r : rows) expect_invalid(r);
  EXPECT_EQ(q->state(), QueueState::Created);
}

TEST(BadConfig, SpecKeysOutOfRangeOrUnknown) {
  const Row rows[] = {
      {"unknown key", [] { return status_of(EthDevice::open("synthetic:count=1,bogus=2")); }, "bogus", "count"},
      {"queues 0", [] { return status_of(EthDevice::open("synthetic:queues=0")); }, "queues=0", "1"},
      {"proto", [] { return status_of(EthDevice::open("synthetic:proto=sctp")); }, "sctp", "udp"},
      {"pps", [] { return status_of(EthDevice::open("synthetic:pps=-3")); }, "-3", "pps"},
      {"pcap key", [] { return status_of(EthDevice::open("pcap:x.pcap,speed=2")); }, "speed", "loop"},
      {"fault key", [] { return status_of(EthDevice::open("fault:short=0,inner=loop:")); }, "short=0", "1"},
  };
  for (const Row& r : rows) expect_invalid(r);
}

TEST(BadConfig, ObservabilityOptions) {
  const Row rows[] = {
      {"log level", [] { return status_of(logging::parse_level("loud")); }, "loud", "trace"},
      {"metrics port", [] { return status_of(metrics::parse_endpoint("127.0.0.1:70000")); }, "70000", "0..65535"},
      {"metrics bind", [] { return status_of(metrics::Server::start("0.0.0.0:0", {})); }, "0.0.0.0", "127.0.0.1"},
  };
  for (const Row& r : rows) expect_invalid(r);
}

TEST(BadConfig, GpuAndKernelLaunch) {
  auto cpu = Gpu::open("cpu");
  ASSERT_TRUE(cpu) << cpu.status().to_string();
  auto launch = [&](uint32_t grid, uint32_t block) {
    LaunchConfig cfg;
    cfg.grid = grid;
    cfg.block = block;
    return status_of(PersistentKernel::launch(*cpu, cfg, Noop{}));
  };
  const Row rows[] = {
      {"bus id syntax", [] { return status_of(Gpu::open("not-a-bus-id")); }, "not-a-bus-id", "cpu"},
      {"block 2000", [&] { return launch(1, 2000); }, "2000 threads", "1..1024"},
      {"emulated grid 1000", [&] { return launch(1000, 1); }, "1000", "256"},
  };
  for (const Row& r : rows) expect_invalid(r);
}
