// SPDX-License-Identifier: Apache-2.0
// The engine's threads: queues sharing them and pinned where asked, and
// each queue's turns and busy and idle time, in its stats and in the
// metrics exposition.
#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "backends/synthetic.hpp"
#include "engine_fixtures.hpp"
#include "gnio/metrics.hpp"

using namespace gnio;
using namespace gnio::test;

namespace {

// The engine threads of this process (named gnio-rx-engine; a sanitizer's
// own threads are not counted) and the cores each may run on.
std::map<std::string, std::string> threads_and_cores() {
  std::map<std::string, std::string> out;
  DIR* d = opendir("/proc/self/task");
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] == '.') continue;
    std::string name;
    std::getline(std::ifstream(std::string("/proc/self/task/") + e->d_name + "/comm"), name);
    if (name != "gnio-rx-engine") continue;
    std::ifstream status(std::string("/proc/self/task/") + e->d_name + "/status");
    std::string line;
    while (std::getline(status, line))
      if (line.starts_with("Cpus_allowed_list:")) out[e->d_name] = line.substr(line.find_first_not_of(" \t", 18));
  }
  if (d) closedir(d);
  return out;
}

// N queues need not cost N threads: threads=T runs them on T engine
// threads, cores= pins those, and each queue still receives.
TEST(Engine, QueuesShareEngineThreadsPinnedWhereAsked) {
  GNIO_OPEN_TEST_GPU(gpu);
  struct Case {
    std::string placement;
    size_t threads;
    std::string cores;  // what the new threads may run on ("" = not checked)
  };
  for (const Case& c : {Case{"", 4, ""}, Case{",threads=1", 1, ""}, Case{",threads=2", 2, ""},
                        Case{",cores=0", 1, "0"}}) {
    SCOPED_TRACE("placement '" + c.placement + "'");
    auto dev = EthDevice::open("synthetic:count=4000,size=64-512,flows=64,queues=4" + c.placement);
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    const auto before = threads_and_cores();
    std::vector<EthRxq> qs;
    for (uint16_t i = 0; i < 4; ++i) {
      auto q = dev->create_rxq(i);
      ASSERT_TRUE(q.has_value());
      start_queue(gpu, *q, RingMem::Host, 64);
      qs.push_back(std::move(*q));
    }
    const auto after = threads_and_cores();
    std::vector<std::string> added;
    for (const auto& [tid, cores] : after)
      if (!before.count(tid)) added.push_back(cores);
    EXPECT_EQ(added.size(), c.threads);
    for (const auto& cores : added) {
      if (!c.cores.empty()) {
        EXPECT_EQ(cores, c.cores);
      }
    }
    // Every queue fills its ring: each is served.
    for (auto& q : qs) EXPECT_TRUE(eventually([&] { return q.stats().packets == 64; })) << q.stats().packets;
  }
}

// The engine's turns on a queue: an idle source is idle time only; frames
// wake it; busy + idle time stays within the time the queue ran, and the
// counters only grow. The exposition carries the same values.
TEST(Engine, TurnsAndBusyIdleTimeAreCountedPerQueue) {
  GNIO_OPEN_TEST_GPU(gpu);
  using Clock = std::chrono::steady_clock;
  auto dev = EthDevice::open("loop:");
  ASSERT_TRUE(dev.has_value());
  auto rxq = dev->create_rxq(0);
  auto txq = dev->create_txq(0);
  ASSERT_TRUE(rxq.has_value() && txq.has_value());
  const auto t_before = Clock::now();
  start_queue(gpu, *rxq, RingMem::Host, 256);
  const auto t_started = Clock::now();
  ASSERT_TRUE(txq->start());
  Receiver rx(gpu, *rxq);
  ASSERT_TRUE(rx.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const RxqStats idle = rxq->stats();
  const auto t_idle = Clock::now();
  EXPECT_EQ(idle.work_polls, 0u);
  EXPECT_EQ(idle.busy_ns, 0u);
  EXPECT_GT(idle.idle_polls, 0u);
  const auto ns = [](auto d) { return static_cast<uint64_t>(std::chrono::nanoseconds(d).count()); };
  EXPECT_LE(idle.idle_ns, ns(t_idle - t_before));
  EXPECT_GE(idle.idle_ns, ns(t_idle - t_started) / 2) << "the engine thread's time is not accounted";

  backend::SyntheticOptions so = *backend::parse_synthetic_spec("synthetic:size=60-1500,seed=5");
  for (uint64_t i = 0; i < 100; ++i) {
    const std::vector<uint8_t> f = backend::make_synthetic_frame(so, i);
    std::span<const uint8_t> one[1] = {f};
    ASSERT_TRUE(eventually([&] {
      auto n = txq->host_send(one);
      return n && *n == 1;
    }));
  }
  ASSERT_TRUE(eventually([&] { return rxq->stats().released == 100; }));
  const RxqStats woke = rxq->stats();
  const auto t_woke = Clock::now();
  EXPECT_GE(woke.work_polls, 1u);
  EXPECT_LE(woke.work_polls, 200u) << "100 frames and their release at most";
  EXPECT_GT(woke.busy_ns, 0u);
  EXPECT_GE(woke.idle_polls, idle.idle_polls);
  EXPECT_GE(woke.idle_ns, idle.idle_ns);
  EXPECT_LE(woke.busy_ns + woke.idle_ns, ns(t_woke - t_before));
  EXPECT_EQ(rx.stop().packets, 100u);

  metrics::Writer w;
  metrics::add_rxq(w, woke, {{"queue", "0"}});
  auto samples = metrics::parse(w.text());
  ASSERT_TRUE(samples.has_value()) << samples.status().to_string();
  std::map<std::string, double> by_name;
  for (const metrics::Sample& m : *samples)
    if (m.label("queue") == "0") by_name[m.name] = m.value;
  EXPECT_EQ(by_name["gnio_rx_engine_work_polls_total"], static_cast<double>(woke.work_polls));
  EXPECT_EQ(by_name["gnio_rx_engine_idle_polls_total"], static_cast<double>(woke.idle_polls));
  EXPECT_DOUBLE_EQ(by_name["gnio_rx_engine_busy_seconds_total"], static_cast<double>(woke.busy_ns) / 1e9);
  EXPECT_DOUBLE_EQ(by_name["gnio_rx_engine_idle_seconds_total"], static_cast<double>(woke.idle_ns) / 1e9);
}

}  // namespace
