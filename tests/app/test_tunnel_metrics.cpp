// SPDX-License-Identifier: Apache-2.0
// /metrics of `gnio run packet-processing` for tunnels: each tunnel type's
// counter (counter::kTunnel + TunnelType) and each tunnel reason's
// (counter::kReason + Reason) become a sample of its own family and label,
// with the value the kernel's counter array holds; so does each --capture
// outcome (counter::kCapture + CaptureOutcome - 1).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "gnio/metrics.hpp"
#include "packet_processing/metrics.hpp"
#include "packet_processing/pp_kernel.hpp"

namespace {

using namespace gnio;
using namespace gnio::dev::app;

TEST(TunnelMetrics, EveryTunnelTypeAndReasonHasItsSample) {
  std::vector<uint64_t> c(app::counter::kCount, 0);
  for (uint32_t t = 0; t < kTunnelCount; ++t) c[app::counter::kTunnel + t] = 1000 + t;
  for (uint32_t r = 0; r < kReasonCount; ++r) c[app::counter::kReason + r] = 2000 + r;
  metrics::Writer w;
  app::add_app_counters(w, c.data(), {{"gpu", "cpu"}});
  const std::string text = w.text();
  EXPECT_NE(text.find("# TYPE gnio_pp_tunnel_packets_total counter"), std::string::npos) << text;
  for (uint32_t t = 1; t < kTunnelCount; ++t) {
    const std::string sample = std::string("gnio_pp_tunnel_packets_total{gpu=\"cpu\",tunnel=\"") + kTunnelNames[t] +
                               "\"} " + std::to_string(1000 + t) + "\n";
    EXPECT_NE(text.find(sample), std::string::npos) << sample;
  }
  EXPECT_EQ(text.find("tunnel=\"none\""), std::string::npos) << "packets out of no tunnel are no tunnel type";
  for (uint32_t r = kMplsStackCut; r <= kGtpuExtLength; ++r) {
    const std::string sample = std::string("gnio_pp_malformed_total{gpu=\"cpu\",reason=\"") + kReasonNames[r] + "\"} " +
                               std::to_string(2000 + r) + "\n";
    EXPECT_NE(text.find(sample), std::string::npos) << sample;
  }
}

TEST(CaptureMetrics, EveryCaptureOutcomeHasItsSample) {
  std::vector<uint64_t> c(app::counter::kCount, 0);
  for (uint32_t k = 0; k < app::kCaptureOutcomes; ++k) c[app::counter::kCapture + k] = 3000 + k;
  metrics::Writer w;
  app::add_app_counters(w, c.data(), {{"gpu", "cpu"}});
  const std::string text = w.text();
  for (const auto& [outcome, value] : {std::pair{"recorded", 3000}, std::pair{"cut", 3001}, std::pair{"ring_full", 3002}}) {
    const std::string sample = std::string("gnio_pp_capture_packets_total{gpu=\"cpu\",outcome=\"") + outcome + "\"} " +
                               std::to_string(value) + "\n";
    EXPECT_NE(text.find(sample), std::string::npos) << sample << text;
  }
}

}  // namespace
