// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "gnio/log.hpp"

using namespace gnio;

namespace {

struct Captured {
  std::mutex mu;
  std::vector<std::string> lines;
};

// Installs a sink that keeps formatted lines; restores stderr and the level after.
class LogCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = logging::level();
    logging::set_sink([this](const logging::Event& e) {
      std::lock_guard lock(c_.mu);
      c_.lines.push_back(logging::format(e));
    });
  }
  void TearDown() override {
    logging::set_sink({});
    logging::set_level(saved_);
  }
  std::vector<std::string> lines() {
    std::lock_guard lock(c_.mu);
    return c_.lines;
  }
  Captured c_;
  logging::Level saved_{};
};

}  // namespace

TEST(Log, ParsesEveryLevelNameAndRejectsOthers) {
  const char* names[] = {"error", "warn", "info", "debug", "trace"};
  for (int i = 0; i < 5; ++i) {
    auto l = logging::parse_level(names[i]);
    ASSERT_TRUE(l) << names[i];
    EXPECT_EQ(static_cast<int>(*l), i);
    EXPECT_EQ(logging::level_name(*l), names[i]);
  }
  auto bad = logging::parse_level("verbose");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), Errc::InvalidValue);
  EXPECT_NE(bad.status().message().find("'verbose'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("trace"), std::string::npos);
}

TEST_F(LogCapture, SinkGetsComponentQueueAndOnlyEnabledLevels) {
  logging::set_level(logging::Level::Info);
  logging::write(logging::Level::Warn, "rx-engine", 3, "ring full");
  logging::write(logging::Level::Debug, "rx-engine", 3, "not shown at info");
  logging::info("kernel", "launched");
  auto got = lines();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "gnio warn [rx-engine q=3] ring full");
  EXPECT_EQ(got[1], "gnio info [kernel] launched");
  logging::set_level(logging::Level::Trace);
  logging::trace("tx-engine", "per packet");
  ASSERT_EQ(lines().size(), 3u);
  EXPECT_EQ(lines()[2], "gnio trace [tx-engine] per packet");
}

TEST_F(LogCapture, RateLimitPassesAFewLinesPerSecondAndCountsTheRest) {
  logging::set_level(logging::Level::Warn);
  logging::RateLimit limit(5);
  for (int i = 0; i < 100; ++i) limit.write(logging::Level::Warn, "rx-engine", 0, "malformed frame");
  EXPECT_EQ(lines().size(), 5u);
  EXPECT_EQ(limit.suppressed(), 95u);
  // A disabled level neither logs nor counts.
  limit.write(logging::Level::Debug, "rx-engine", 0, "hidden");
  EXPECT_EQ(limit.suppressed(), 95u);
}

TEST_F(LogCapture, RateLimitReportsSuppressedLinesInTheNextWindow) {
  logging::set_level(logging::Level::Warn);
  logging::RateLimit limit(1);
  limit.write(logging::Level::Warn, "x", 1, "a");
  limit.write(logging::Level::Warn, "x", 1, "b");
  limit.write(logging::Level::Warn, "x", 1, "c");
  std::this_thread::sleep_for(std::chrono::milliseconds(1050));
  limit.write(logging::Level::Warn, "x", 1, "d");
  auto got = lines();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "gnio warn [x q=1] a");
  EXPECT_EQ(got[1], "gnio warn [x q=1] d (2 similar lines suppressed)");
}
