// SPDX-License-Identifier: Apache-2.0
// How a queue's source ends: stop_source() drains exactly on the device
// path and ends the host path; a source error is the caller's to report,
// the engine logs it at debug only.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "engine_fixtures.hpp"
#include "gnio/log.hpp"

using namespace gnio;
using namespace gnio::test;

namespace {

// stop_source() on an endless source: stats are final when it returns, the
// kernel then consumes everything published, and what it counted is what
// the queue delivered; offered == delivered + dropped exactly.
TEST(Engine, StopSourceDrainsExactly) {
  GNIO_OPEN_TEST_GPU(gpu);
  struct Case {
    std::string spec;
    RingMem mem;
  };
  for (const Case& c : {Case{"synthetic:count=0,size=64-1500,proto=mix,seed=9", RingMem::Gpu},
                        Case{"synthetic:count=0,size=64-1500,proto=mix,seed=9", RingMem::Host},
                        Case{"mem:frames=64,ring=128,pps=3000000,count=0", RingMem::Host},
                        Case{"mem:frames=64,ring=128,pps=3000000,count=0", RingMem::Gpu}}) {
    SCOPED_TRACE(c.spec + (c.mem == RingMem::Gpu ? " mem=gpu" : " mem=host"));
    auto dev = EthDevice::open(c.spec);
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    auto q = dev->create_rxq(0);
    ASSERT_TRUE(q.has_value());
    start_queue(gpu, *q, c.mem, 256);
    Receiver rx(gpu, *q);
    ASSERT_TRUE(rx.ok());
    const bool flowing = eventually([&] { return q->stats().packets > 20000; }, std::chrono::seconds(60));
    {
      const RxqStats s = q->stats();
      ASSERT_TRUE(flowing) << "after 60 s: offered " << s.offered << ", delivered " << s.packets << ", dropped "
                           << dropped_total(s) << " (ring full " << s.rx_missed << "), released " << s.released
                           << ", publications " << s.bursts << ", errors " << s.errors
                           << ", engine turns " << s.work_polls << " with work / " << s.idle_polls << " idle";
    }
    ASSERT_TRUE(q->stop_source());
    const RxqStats at_stop = q->stats();
    EXPECT_EQ(at_stop.packets + dropped_total(at_stop), at_stop.offered);
    ASSERT_TRUE(eventually([&] { return q->at_end(); }, std::chrono::seconds(60)));
    const dev::ReceiveTotals got = rx.stop();
    const RxqStats end = q->stats();
    EXPECT_EQ(end.offered, at_stop.offered) << "the source offered frames after stop_source()";
    EXPECT_EQ(end.packets, at_stop.packets);
    EXPECT_EQ(got.packets, end.packets);
    EXPECT_EQ(got.bytes, end.bytes);
    EXPECT_EQ(end.released, end.packets);
    EXPECT_EQ(end.packets + dropped_total(end), end.offered);
    EXPECT_TRUE(q->stop_source()) << "a second call returns at once";
  }
}

// The host path: no frame after stop_source(), and the queue is at its end.
TEST(Engine, StopSourceEndsTheHostPath) {
  auto dev = EthDevice::open("synthetic:count=0,size=128");
  ASSERT_TRUE(dev.has_value());
  auto q = dev->create_rxq(0);
  ASSERT_TRUE(q.has_value());
  EXPECT_FALSE(q->stop_source()) << "a queue that has not started has no source to stop";
  ASSERT_TRUE(q->start());
  auto first = q->host_receive(16);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->size(), 16u);
  EXPECT_FALSE(q->at_end());
  ASSERT_TRUE(q->stop_source());
  EXPECT_TRUE(q->at_end());
  auto after = q->host_receive(16);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->size(), 0u);
  EXPECT_EQ(q->stats().offered, 16u);
  EXPECT_EQ(q->stats().packets, 16u);
}

// A source error is the caller's to report (source_status()): the engine
// logs it at debug only, naming the queue.
TEST(Engine, SourceErrorIsLoggedAtDebugWithItsQueue) {
  GNIO_OPEN_TEST_GPU(gpu);
  struct Line {
    logging::Level level;
    std::string component;
    int queue;
    std::string message;
  };
  std::mutex mu;
  std::vector<Line> lines;
  const logging::Level was = logging::level();
  logging::set_level(logging::Level::Debug);
  logging::set_sink([&](const logging::Event& e) {
    std::lock_guard lock(mu);
    lines.push_back({e.level, std::string(e.component), e.queue, std::string(e.message)});
  });
  {
    auto dev = EthDevice::open("fault:error_at=300,inner=synthetic:count=0,size=128,queues=2");
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    auto q = dev->create_rxq(1);
    ASSERT_TRUE(q.has_value());
    start_queue(gpu, *q, RingMem::Gpu, 256);
    Receiver rx(gpu, *q);
    ASSERT_TRUE(rx.ok());
    ASSERT_TRUE(eventually([&] { return q->at_end(); }, std::chrono::seconds(60)));
    EXPECT_EQ(rx.stop().packets, 300u);
    const Status why = q->source_status();
    EXPECT_FALSE(why.is_ok());
    EXPECT_EQ(q->stats().errors, 1u);
    logging::set_sink({});
    logging::set_level(was);
    std::lock_guard lock(mu);
    size_t debug_lines = 0;
    for (const Line& l : lines) {
      if (l.component != "rx-engine") continue;
      EXPECT_NE(l.level, logging::Level::Error) << l.message;
      if (l.level == logging::Level::Debug && l.message.find(why.message()) != std::string::npos) {
        ++debug_lines;
        EXPECT_EQ(l.queue, 1);
      }
    }
    EXPECT_EQ(debug_lines, 1u);
  }
  logging::set_sink({});
  logging::set_level(was);
}

}  // namespace
