// SPDX-License-Identifier: Apache-2.0
// The independent reading the batch tests compare against: every frame of a
// spec per queue, as the host path (EthRxq::host_receive) reads it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gnio/host_reference.hpp"

namespace gnio::test {

struct Frame {
  std::vector<uint8_t> bytes;  // cut to snap
  uint32_t len;
};

// Every frame of `spec`, per queue, cut to `snap` bytes (UINT32_MAX: whole).
inline std::map<uint16_t, std::vector<Frame>> host_frames(const std::string& spec, uint16_t queues, uint32_t snap) {
  std::map<uint16_t, std::vector<Frame>> out;
  for (uint16_t q = 0; q < queues; ++q) {
    auto d = EthDevice::open(spec);
    EXPECT_TRUE(d) << d.status().to_string();
    if (!d) return out;
    auto rxq = d->create_rxq(q);
    EXPECT_TRUE(rxq) << rxq.status().to_string();
    if (!rxq) return out;
    EXPECT_TRUE(rxq->start());
    while (!rxq->at_end()) {
      auto frames = rxq->host_receive(256);
      EXPECT_TRUE(frames);
      if (!frames) break;
      for (auto& f : *frames) {
        const size_t keep = std::min<size_t>(f.data.size(), snap);
        out[q].push_back({std::vector<uint8_t>(f.data.begin(), f.data.begin() + static_cast<std::ptrdiff_t>(keep)),
                          static_cast<uint32_t>(f.data.size())});
      }
    }
  }
  return out;
}

}  // namespace gnio::test
