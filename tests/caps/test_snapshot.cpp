// SPDX-License-Identifier: Apache-2.0
// Snapshot JSON: schema, round trip, and the diff that explains a change.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gnio/capabilities.hpp"

namespace {

using namespace gnio;

CapabilityReport sample() {
  CudaDeviceInfo d;
  d.ordinal = 0;
  d.bus_id = "0000:06:00.0";
  d.name = "Test GPU";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.total_mem_bytes = 80ull << 30;
  d.can_map_host_memory = true;
  d.unified_addressing = true;
  d.stream_mem_ops_64 = true;
  d.async_engines = 3;
  d.pcie_link_gen = 5;
  d.pcie_link_width = 16;
  EthCaps c;
  c.driver = "loop";
  c.max_rx_queues = 2;
  return evaluate_all(NicAxis::queried("loop:", c), CudaAxis::from_device("auto", d, 13000, 13000));
}

TEST(Snapshot, JsonHasSchemaVersionAndBothAxes) {
  auto j = nlohmann::json::parse(to_json(sample()));
  EXPECT_EQ(j["schema_version"], CapabilityReport::kSchemaVersion);
  EXPECT_EQ(j["nic"]["caps"]["driver"], "loop");
  EXPECT_EQ(j["cuda"]["device"]["cc_major"], 9);
  EXPECT_EQ(j["cuda"]["device"]["pcie_link_gen"], 5);
  EXPECT_EQ(j["features"]["gpu_rx"]["supported"], "yes");
  EXPECT_EQ(j["features"]["gpudirect_rdma"]["cuda"]["verdict"], "no");
  EXPECT_EQ(j["features"]["persistent_kernel"]["nic"]["verdict"], "n/a");
}

TEST(Snapshot, RoundTripHasNoDiff) {
  CapabilityReport a = sample();
  auto b = capability_report_from_json(to_json(a));
  ASSERT_TRUE(b.has_value()) << b.status().to_string();
  EXPECT_EQ(b->nic.caps.max_rx_queues, 2);
  EXPECT_EQ(b->cuda.device.bus_id, "0000:06:00.0");
  EXPECT_EQ(b->cuda.device.total_mem_bytes, 80ull << 30);
  EXPECT_TRUE(diff(a, *b).empty());
}

TEST(Snapshot, DiffDetectsAChangedField) {
  CapabilityReport before = sample();
  CudaDeviceInfo d = before.cuda.device;
  d.cc_major = 7;
  d.cc_minor = 5;
  CapabilityReport after = evaluate_all(before.nic, CudaAxis::from_device("auto", d, 13000, 13000));
  std::vector<CapsChange> changes = diff(before, after);
  auto find = [&](const std::string& path) -> const CapsChange* {
    for (const auto& c : changes)
      if (c.path == path) return &c;
    return nullptr;
  };
  const CapsChange* cc = find("cuda.device.cc_major");
  ASSERT_NE(cc, nullptr);
  EXPECT_EQ(cc->before, "9");
  EXPECT_EQ(cc->after, "7");
  const CapsChange* pk = find("features.persistent_kernel.supported");
  ASSERT_NE(pk, nullptr);
  EXPECT_EQ(pk->before, "\"yes\"");
  EXPECT_EQ(pk->after, "\"no\"");
  EXPECT_EQ(find("nic.caps.driver"), nullptr);
}

TEST(Snapshot, DiffShowsALostDevice) {
  CapabilityReport before = sample();
  CapabilityReport after = evaluate_all(before.nic, CudaAxis::unavailable("auto", "no driver"));
  bool state = false, gone = false;
  for (const auto& c : diff(before, after)) {
    if (c.path == "cuda.state") state = c.before == "\"device\"" && c.after == "\"unavailable\"";
    if (c.path == "cuda.device.bus_id") gone = c.after == "(absent)";
  }
  EXPECT_TRUE(state);
  EXPECT_TRUE(gone);
}

TEST(Snapshot, RejectsBadInput) {
  auto r = capability_report_from_json("not json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), Errc::InvalidValue);
  EXPECT_NE(r.status().message().find("not a JSON object"), std::string::npos);

  auto j = nlohmann::json::parse(to_json(sample()));
  j["schema_version"] = 2;
  r = capability_report_from_json(j.dump());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("schema_version 2"), std::string::npos) << r.status().message();

  j = nlohmann::json::parse(to_json(sample()));
  j["cuda"]["device"]["cc_major"] = "nine";
  r = capability_report_from_json(j.dump());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("cuda.device.cc_major has the wrong type"), std::string::npos)
      << r.status().message();
}

}  // namespace
