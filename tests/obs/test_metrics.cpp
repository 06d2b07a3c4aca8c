// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "gnio/metrics.hpp"

using namespace gnio;

namespace {

// stdout of a shell command (curl is the independent HTTP client here).
std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

}  // namespace

TEST(Metrics, WriterGroupsFamiliesAndEscapesLabels) {
  metrics::Writer w;
  w.counter("gnio_rx_packets_total", "Frames delivered", {{"queue", "0"}}, 10);
  w.gauge("gnio_kernel_hung", "Hung", {{"block", "0"}}, 1);
  w.counter("gnio_rx_packets_total", "Frames delivered", {{"queue", "1"}}, 18446744073709551615ull);
  w.gauge("gnio_weird", "Help with \\ and\nnewline", {{"path", "a\"b\\c\nd"}}, 0.5);
  EXPECT_EQ(w.text(),
            "# HELP gnio_rx_packets_total Frames delivered\n"
            "# TYPE gnio_rx_packets_total counter\n"
            "gnio_rx_packets_total{queue=\"0\"} 10\n"
            "gnio_rx_packets_total{queue=\"1\"} 18446744073709551615\n"
            "# HELP gnio_kernel_hung Hung\n"
            "# TYPE gnio_kernel_hung gauge\n"
            "gnio_kernel_hung{block=\"0\"} 1\n"
            "# HELP gnio_weird Help with \\\\ and\\nnewline\n"
            "# TYPE gnio_weird gauge\n"
            "gnio_weird{path=\"a\\\"b\\\\\\\\c\\\\x0ad\"} 0.5\n");
}

// A label value holds any bytes (a name from the wire): it is written by
// escape_text()'s rule, then the format's escapes, and reads back as that.
TEST(Metrics, LabelValuesOfAnyBytesAreValidUtf8AndReadBack) {
  metrics::Writer w;
  w.counter("x_total", "h", {{"name", std::string("a\xff\x00\"\\\xc3\xa9\n", 8)}}, 1);
  EXPECT_EQ(w.text(),
            "# HELP x_total h\n# TYPE x_total counter\n"
            "x_total{name=\"a\\\\xff\\\\x00\\\"\\\\\\\\\xc3\xa9\\\\x0a\"} 1\n");
  auto samples = metrics::parse(w.text());
  ASSERT_TRUE(samples) << samples.status().to_string();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].label("name"), "a\\xff\\x00\"\\\\\xc3\xa9\\x0a");
}

TEST(Metrics, ParseReadsBackWhatTheWriterWrote) {
  metrics::Writer w;
  w.counter("a_total", "h", {{"queue", "3"}, {"backend", "x,\"y\"}"}}, 42);
  w.gauge("b", "h", {}, -2.25);
  auto samples = metrics::parse(w.text() + "c 7 1700000000000\n");
  ASSERT_TRUE(samples) << samples.status().to_string();
  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ((*samples)[0].name, "a_total");
  EXPECT_EQ((*samples)[0].label("queue"), "3");
  EXPECT_EQ((*samples)[0].label("backend"), "x,\"y\"}");
  EXPECT_EQ((*samples)[0].value, 42);
  EXPECT_EQ((*samples)[1].value, -2.25);
  EXPECT_EQ((*samples)[2].value, 7);
  for (const char* bad : {"x{a=\"1\" 2\n", "1x 2\n", "x{a=1} 2\n", "x abc\n", "x{=\"1\"} 2\n", "x\n"}) {
    auto r = metrics::parse(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.status().message().find("line 1"), std::string::npos);
    }
  }
}

TEST(Metrics, RequestHandlingAnswersPathsAndMethods) {
  metrics::Collector c = [](metrics::Writer& w) { w.counter("x_total", "x", {}, 1); };
  auto r = metrics::handle_request("GET", "/metrics?format=text", c);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.body, "# HELP x_total x\n# TYPE x_total counter\nx_total 1\n");
  EXPECT_EQ(metrics::handle_request("HEAD", "/metrics", c).body, "");
  EXPECT_EQ(metrics::handle_request("GET", "/", c).status, 200);
  EXPECT_EQ(metrics::handle_request("GET", "/metricsx", c).status, 404);
  EXPECT_EQ(metrics::handle_request("POST", "/metrics", c).status, 405);
}

TEST(Metrics, EndpointParsingAndLoopbackRule) {
  struct Row {
    const char* text;
    bool ok;
    const char* host;
    int port;
    bool loopback;
  } rows[] = {{"127.0.0.1:9400", true, "127.0.0.1", 9400, true},
              {"localhost:0", true, "localhost", 0, true},
              {"[::1]:9400", true, "::1", 9400, true},
              {"0.0.0.0:9400", true, "0.0.0.0", 9400, false},
              {"10.1.2.3:80", true, "10.1.2.3", 80, false},
              {"127.0.0.1", false, "", 0, false},
              {"127.0.0.1:65536", false, "", 0, false},
              {"127.0.0.1:-1", false, "", 0, false},
              {":9400", false, "", 0, false},
              {"[::1:9400", false, "", 0, false},
              {"127.0.0.1:94x", false, "", 0, false}};
  for (const Row& row : rows) {
    auto e = metrics::parse_endpoint(row.text);
    ASSERT_EQ(static_cast<bool>(e), row.ok) << row.text;
    if (!e) {
      EXPECT_EQ(e.status().code(), Errc::InvalidValue);
      EXPECT_NE(e.status().message().find(row.text), std::string::npos) << e.status().message();
      continue;
    }
    EXPECT_EQ(e->host, row.host);
    EXPECT_EQ(e->port, row.port);
    EXPECT_EQ(e->loopback, row.loopback) << row.text;
  }
}

TEST(Metrics, ServerRefusesNonLoopbackWithoutConsent) {
  auto s = metrics::Server::start("0.0.0.0:0", {});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), Errc::InvalidValue);
  EXPECT_NE(s.status().message().find("--metrics-allow-remote"), std::string::npos);
  auto allowed = metrics::Server::start("0.0.0.0:0", {}, {true});
  ASSERT_TRUE(allowed) << allowed.status().to_string();
  EXPECT_EQ(allowed->address().rfind("0.0.0.0:", 0), 0u);
}

TEST(Metrics, ServerAnswersCurlWithTheCollectorsValues) {
  uint64_t value = 7;
  auto s = metrics::Server::start("127.0.0.1:0", [&](metrics::Writer& w) {
    w.counter("gnio_test_total", "A test counter", {{"queue", "0"}}, value++);
  });
  ASSERT_TRUE(s) << s.status().to_string();
  const std::string url = "http://" + s->address();
  EXPECT_EQ(shell("curl -s " + url + "/metrics"),
            "# HELP gnio_test_total A test counter\n# TYPE gnio_test_total counter\ngnio_test_total{queue=\"0\"} 7\n");
  EXPECT_NE(shell("curl -s " + url + "/metrics").find("} 8\n"), std::string::npos);
  EXPECT_EQ(shell("curl -s -o /dev/null -w '%{http_code}' " + url + "/nothing"), "404");
  EXPECT_EQ(shell("curl -s -o /dev/null -w '%{http_code}' -X POST -d '' " + url + "/metrics"), "405");
  EXPECT_EQ(shell("curl -s -o /dev/null -w '%{content_type}' " + url + "/metrics"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(s->scrapes(), 3u);
  s->stop();
  EXPECT_FALSE(s->running());
  EXPECT_EQ(shell("curl -s -o /dev/null -w '%{http_code}' " + url + "/metrics"), "000");
}

TEST(Metrics, BusyPortIsAnIoErrorNamingTheAddress) {
  auto first = metrics::Server::start("127.0.0.1:0", {});
  ASSERT_TRUE(first);
  auto second = metrics::Server::start(first->address(), {});
  ASSERT_FALSE(second);
  EXPECT_EQ(second.status().code(), Errc::IoError);
  EXPECT_NE(second.status().message().find(first->address()), std::string::npos);
}
