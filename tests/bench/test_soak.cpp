// SPDX-License-Identifier: Apache-2.0
// soak --gpu cpu for 10 s, offered faster than the emulated device takes
// frames: every check passes, the end balance holds exactly with frames
// lost as ring_full, and the TX queues sent every packet the kernel echoed.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <sstream>
#include <string>

namespace {

TEST(Soak, TenSecondsOnTheEmulatedDevice) {
  std::string text;
  FILE* p = popen(GNIO_SOAK_PATH " --gpu cpu --duration 10 --queues 2 --report 5 --pps 5000000 2>&1", "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) text += buf;
  const int status = pclose(p);
  ASSERT_EQ(status, 0) << text;
  EXPECT_NE(text.find("verdict: PASS (0 violation(s))"), std::string::npos) << text;
  for (const char* check : {"counters", "heartbeat", "progress", "rss", "fds", "echo"})
    EXPECT_NE(text.find(std::string("check ") + check + ": ok"), std::string::npos) << check << "\n" << text;
  EXPECT_EQ(text.find("violation ("), std::string::npos) << text;

  std::smatch m;
  const std::regex end("end after [0-9.]+ s: offered=([0-9]+) delivered=([0-9]+) dropped=([0-9]+) kernel=([0-9]+) "
                       "echoed=([0-9]+)");
  ASSERT_TRUE(std::regex_search(text, m, end)) << text;
  const unsigned long long offered = std::stoull(m[1]), delivered = std::stoull(m[2]), dropped = std::stoull(m[3]),
                           kernel = std::stoull(m[4]), echoed = std::stoull(m[5]);
  EXPECT_EQ(offered, delivered + dropped);
  EXPECT_GT(dropped, 0u) << "5 Mpps should overrun the emulated device";
  EXPECT_GT(kernel, 0u);
  EXPECT_LE(kernel, delivered);
  EXPECT_EQ(echoed, kernel);

  const std::regex samples("check counters: ok \\(([0-9]+) samples");
  ASSERT_TRUE(std::regex_search(text, m, samples)) << text;
  EXPECT_EQ(std::stoull(m[1]), 10u);
  const std::regex rss("growth after the warm-up at most ([-+0-9.]+) MiB");
  ASSERT_TRUE(std::regex_search(text, m, rss)) << text;
  EXPECT_LT(std::stod(m[1]), 4.0);
  // A progress line every 5 s, each with a positive rate.
  size_t lines = 0;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, std::regex("^t=[0-9]+s ([0-9.]+) Mpps"))) {
      ++lines;
      EXPECT_GT(std::stod(m[1]), 0) << line;
    }
  EXPECT_EQ(lines, 2u) << text;
}

}  // namespace
