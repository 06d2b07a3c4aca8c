// SPDX-License-Identifier: Apache-2.0
// gnio diagnose: every code has a row, AGAIN alone asks for a retry, and each
// row runs the checks that tell its causes apart.
#include "fake_host.hpp"
#include "gnio/diagnose.hpp"

namespace {

using namespace gnio;
using gnio::testing::contains;
using gnio::testing::FakeHost;

TEST(Taxonomy, EveryCodeHasARow) {
  for (int i = 0; i <= static_cast<int>(Errc::Timeout); ++i) {
    auto code = static_cast<Errc>(i);
    const TaxonomyRow& row = taxonomy_row(code);
    EXPECT_EQ(row.code, code) << errc_name(code);
    EXPECT_FALSE(row.where.empty());
    EXPECT_FALSE(row.causes.empty());
    EXPECT_FALSE(row.retry.empty());
    for (std::string_view id : row.checks) {
      bool known = false;
      for (const auto& c : doctor::checks()) known = known || c.id == id;
      EXPECT_TRUE(known) << errc_name(code) << " names an unknown check " << id;
    }
  }
  EXPECT_EQ(taxonomy().size(), 10u);
  EXPECT_TRUE(contains(valid_error_names(), "NOT_SUPPORTED, INVALID_VALUE, BAD_STATE, AGAIN, DRIVER"));
}

TEST(Taxonomy, OnlyAgainWantsARetry) {
  EXPECT_TRUE(contains(std::string(taxonomy_row(Errc::Again).retry), "drain"));
  for (const auto& row : taxonomy()) {
    if (row.code == Errc::Again || row.code == Errc::Success) continue;
    EXPECT_TRUE(contains(std::string(row.retry), "a retry loop")) << errc_name(row.code) << ": " << row.retry;
  }
}

TEST(Diagnose, DriverRunsTheVersionChecks) {
  FakeHost h;
  h.cuda_h(13000);
  h.nvidia_driver("570.124.06");
  h.env.cuda.runtime.driver_version = 12080;
  Diagnosis d = diagnose(Errc::Driver, h.env, doctor::Request{});
  std::vector<std::string> ids;
  for (const auto& c : d.checks) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"cuda.toolkit", "cuda.driver", "cuda.runtime", "cuda.driver_compat",
                                           "doca.versions", "doca.cuda", "cuda.devices", "cuda.set_device"}));
  EXPECT_FALSE(d.caps.has_value());
  EXPECT_EQ(exit_code(d), 1);
  std::string text = format_diagnosis(d);
  EXPECT_TRUE(contains(text, "DRIVER (code 5)")) << text;
  EXPECT_TRUE(contains(text, "[FAIL] cuda.driver_compat")) << text;
  EXPECT_TRUE(contains(text, "needs driver >= 580")) << text;
}

TEST(Diagnose, NotSupportedEvaluatesBothAxes) {
  FakeHost h;
  h.env.cuda.devices[0].cc_major = 7;
  h.env.cuda.devices[0].cc_minor = 5;
  h.env.cuda.devices[0].can_map_host_memory = true;
  h.env.open_nic = [](std::string_view) -> Result<EthCaps> {
    EthCaps c;
    c.driver = "pcap";
    c.tx_wait_on_time = false;
    return c;
  };
  doctor::Request req;
  req.nic_spec = "pcap:x.pcap";
  Diagnosis d = diagnose(Errc::NotSupported, h.env, req);
  ASSERT_TRUE(d.caps.has_value());
  EXPECT_EQ(d.caps->verdict(Feature::PersistentKernel).refused_by(), Axis::Cuda);
  EXPECT_EQ(d.caps->verdict(Feature::TxWaitOnTime).refused_by(), Axis::Nic);
  std::string text = format_diagnosis(d);
  EXPECT_TRUE(contains(text, "Both capability axes")) << text;
  EXPECT_TRUE(contains(text, "[cuda axis, no]")) << text;
  EXPECT_TRUE(contains(text, "tx_wait_on_time=false")) << text;
  std::string json = to_json(d);
  EXPECT_TRUE(contains(json, "\"capabilities\"")) << json;
  EXPECT_TRUE(contains(json, "\"retryable\": false")) << json;
}

TEST(Diagnose, AgainAndBadStateRunNoHostChecks) {
  FakeHost h;
  Diagnosis again = diagnose(Errc::Again, h.env, doctor::Request{});
  EXPECT_TRUE(again.checks.empty());
  EXPECT_EQ(exit_code(again), 0);
  EXPECT_TRUE(contains(format_diagnosis(again), "drain")) << format_diagnosis(again);
  EXPECT_TRUE(contains(to_json(again), "\"retryable\": true"));
  Diagnosis bad = diagnose(Errc::BadState, h.env, doctor::Request{});
  EXPECT_TRUE(bad.checks.empty());
  EXPECT_TRUE(contains(format_diagnosis(bad), "teardown in reverse"));
}

}  // namespace
