// Helpers shared by the backend tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace gnio::backend::testing {

inline std::string data_path(const std::string& name) { return std::string(GNIO_DATA_DIR) + "/" + name; }

struct Frame {
  std::vector<uint8_t> bytes;
  uint64_t timestamp_ns = 0;
};

// Pulls every frame of `queue` until the backend says it is at its end (or
// `limit` frames came); fails the test on an error.
inline std::vector<Frame> drain(Backend& b, uint16_t queue, size_t limit = SIZE_MAX) {
  std::vector<Frame> frames;
  std::array<RxFrame, 32> burst{};
  while (!b.at_end(queue) && frames.size() < limit) {
    auto n = b.rx_burst(queue, std::span(burst).first(std::min(burst.size(), limit - frames.size())));
    if (!n) {
      ADD_FAILURE() << n.status().to_string();
      break;
    }
    for (size_t i = 0; i < *n; ++i) {
      frames.push_back({std::vector<uint8_t>(burst[i].data, burst[i].data + burst[i].len), burst[i].timestamp_ns});
    }
  }
  return frames;
}

inline std::unique_ptr<Backend> open_ok(std::string_view spec) {
  auto b = open_backend(spec);
  EXPECT_TRUE(b.has_value()) << spec << ": " << b.status().to_string();
  return b ? std::move(*b) : nullptr;
}

}  // namespace gnio::backend::testing
