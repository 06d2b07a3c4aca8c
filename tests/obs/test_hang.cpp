// SPDX-License-Identifier: Apache-2.0
// Hang detection: a block that stops beating while its queue has packets
// waiting is reported hung (health(), the log, the metric) with its last
// stage; the same silence with no work waiting is not a hang.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "../core/test_support.hpp"
#include "gnio/log.hpp"
#include "gnio/metrics.hpp"
#include "gnio/persistent_kernel.hpp"
#include "rig.hpp"

using namespace gnio;
using namespace std::chrono_literals;

using obs_test::Rig;
using obs_test::open_rig;

namespace {

LaunchConfig stage_config(Rig& rig, std::chrono::milliseconds hang_timeout) {
  LaunchConfig cfg;
  cfg.grid = rig.kernel.nq;
  cfg.block = 1;
  cfg.name = "stall";
  cfg.stage_names = {"start", "receive", "process", "release"};
  cfg.hang_timeout = hang_timeout;
  cfg.has_work = [&rig](uint32_t b) {
    const RxqStats s = rig.rxqs[b % rig.kernel.nq].stats();
    return s.packets > s.released;
  };
  return cfg;
}

}  // namespace

TEST(Hang, StalledBlockWithPacketsWaitingIsReportedWithItsStage) {
  GNIO_OPEN_TEST_GPU(gpu);
  std::mutex mu;
  std::vector<std::string> lines;
  logging::set_sink([&](const logging::Event& e) {
    std::lock_guard lock(mu);
    lines.push_back(logging::format(e));
  });
  Rig rig;
  open_rig(rig, gpu, "synthetic:count=20000,size=64-256,queues=2,seed=4", 64);
  LaunchConfig cfg = stage_config(rig, 200ms);
  auto k = obs_test::launch_stage_kernel(gpu, cfg, rig.kernel);
  ASSERT_TRUE(k) << k.status().to_string();

  ASSERT_TRUE(test::eventually([&] { return k->health()[0].hung; }, 10s));
  // Block 1 drains its queue and, with nothing waiting, is never hung.
  ASSERT_TRUE(test::eventually([&] { return rig.rxqs[1].at_end(); }, 20s));
  auto h = k->health();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_TRUE(h[0].hung);
  EXPECT_FALSE(h[0].exited);
  EXPECT_TRUE(h[0].work_waiting);
  EXPECT_EQ(h[0].stage, obs_test::kProcess);
  EXPECT_EQ(h[0].stage_name, "process");
  EXPECT_GE(h[0].heartbeat_age, 200ms);
  EXPECT_FALSE(h[1].hung);
  const RxqStats q0 = rig.rxqs[0].stats();
  EXPECT_GE(q0.packets - q0.released, 64u - 15u);  // the held burst (and more behind it) waits

  // The watcher logged the verdict once, with the stage.
  ASSERT_TRUE(test::eventually([&] {
    std::lock_guard lock(mu);
    for (const auto& l : lines)
      if (l.find("block 0 is hung") != std::string::npos) return true;
    return false;
  }, 5s));
  {
    std::lock_guard lock(mu);
    size_t hung_lines = 0;
    for (const auto& l : lines) {
      if (l.find("block 0 is hung") == std::string::npos) continue;
      ++hung_lines;
      EXPECT_NE(l.find("gnio warn [kernel]"), std::string::npos) << l;
      EXPECT_NE(l.find("last stage process"), std::string::npos) << l;
    }
    EXPECT_EQ(hung_lines, 1u);
  }
  logging::set_sink({});

  // The metric says the same.
  metrics::Writer w;
  metrics::add_kernel(w, k->counters(), k->health(), {{"gpu", gpu.bus_id()}});
  auto samples = metrics::parse(w.text());
  ASSERT_TRUE(samples);
  int seen = 0;
  for (const auto& s : *samples) {
    if (s.name == "gnio_kernel_hung") {
      EXPECT_EQ(s.value, s.label("block") == "0" ? 1 : 0) << s.label("block");
      ++seen;
    }
    if (s.name == "gnio_kernel_stage" && s.label("block") == "0") {
      EXPECT_EQ(s.label("stage"), "process");
      EXPECT_EQ(s.value, obs_test::kProcess);
      ++seen;
    }
    if (s.name == "gnio_kernel_heartbeat_age_seconds" && s.label("block") == "0") {
      EXPECT_GE(s.value, 0.2);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 4);

  // The stalled block still polls its exit flag: stop is clean.
  Status st = k->stop(5s);
  EXPECT_TRUE(st) << st.to_string();
  EXPECT_FALSE(k->health()[0].hung);  // exited blocks are never hung
  rig.teardown();
}

TEST(Hang, SilenceWithoutWorkWaitingIsNotAHang) {
  GNIO_OPEN_TEST_GPU(gpu);
  Rig rig;
  open_rig(rig, gpu, "synthetic:count=1000,size=64,seed=2", 32);
  LaunchConfig cfg = stage_config(rig, 100ms);
  cfg.has_work = [](uint32_t) { return false; };  // as if its queue were empty
  auto k = obs_test::launch_stage_kernel(gpu, cfg, rig.kernel);
  ASSERT_TRUE(k) << k.status().to_string();
  ASSERT_TRUE(test::eventually([&] { return k->health()[0].heartbeat_age >= 300ms; }, 10s));
  auto h = k->health();
  EXPECT_FALSE(h[0].hung);
  EXPECT_FALSE(h[0].work_waiting);
  EXPECT_EQ(h[0].stage_name, "process");
  ASSERT_TRUE(k->stop());
  rig.teardown();
}
