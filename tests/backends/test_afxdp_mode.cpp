// SPDX-License-Identifier: Apache-2.0
// The XDP mode an afxdp device runs in, on a veth pair in namespaces of
// its own (label net, needs root): EthCaps::xdp_mode says what was asked
// for, mode=auto settles on drv (veth has native XDP, no zero copy), and
// the caps report prints the mode in use and leaves no program behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "backends/afxdp/caps.hpp"
#include "backends/afxdp/iface.hpp"
#include "gnio/eth.hpp"
#include "net_fixture.hpp"

namespace gnio::nettest {
namespace {

class AfxdpMode : public VethFixture<::testing::Test> {
 protected:
  void SetUp() override { make_veth(1); }
  static uint32_t attached_prog() {
    auto f = backend::afxdp::query_iface(kDutIf);
    return f ? f->xdp_prog_id : ~0u;
  }
};

TEST_F(AfxdpMode, CapsSayTheModeInUse) {
  const std::string base = std::string("afxdp:") + kDutIf;
  for (const std::string mode : {"skb", "drv"}) {
    auto dev = EthDevice::open(base + ",mode=" + mode);
    if (!dev && dev.status().code() == Errc::NotSupported) GTEST_SKIP() << dev.status().to_string();
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    EXPECT_EQ(dev->caps().xdp_mode, mode);
    EXPECT_EQ(dev->caps().driver, "afxdp");
  }
  {
    auto dev = EthDevice::open(base);
    ASSERT_TRUE(dev.has_value()) << dev.status().to_string();
    EXPECT_EQ(dev->caps().xdp_mode, "drv") << "veth: native XDP without zero copy";
  }
  EXPECT_EQ(attached_prog(), 0u);

  auto other = EthDevice::open("loop:");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->caps().xdp_mode, "");

  auto report = caps::afxdp_interface_report(base + ",mode=skb");
  ASSERT_TRUE(report.has_value());
  auto j = nlohmann::json::parse(report->json);
  EXPECT_EQ(j["xdp_mode"], "skb") << report->json;
  EXPECT_NE(report->text.find("XDP mode in use     skb (asked: mode=skb)"), std::string::npos) << report->text;
  report = caps::afxdp_interface_report(base);
  j = nlohmann::json::parse(report->json);
  EXPECT_EQ(j["xdp_mode"], "drv") << report->json;
  EXPECT_EQ(attached_prog(), 0u) << "the report's open left a program attached";
}

}  // namespace
}  // namespace gnio::nettest
