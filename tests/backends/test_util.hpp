// SPDX-License-Identifier: Apache-2.0
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

// An RxSink over plain memory: records committed frames and drops, and
// refuses room after `capacity` frames, as a full ring does.
class VectorSink final : public RxSink {
 public:
  struct Committed {
    std::vector<uint8_t> bytes;
    uint32_t flags = 0, wire_len = 0, rss_hash = 0;
  };
  VectorSink(uint32_t capacity, uint32_t max_frame) : capacity_(capacity), max_frame_(max_frame) {}

  uint8_t* claim(uint32_t len) override {
    if (frames.size() >= capacity_) return nullptr;
    scratch_.assign(len, 0);
    return scratch_.data();
  }
  void commit(uint32_t len, uint64_t, uint32_t flags, uint32_t wire_len) override {
    commit_hashed(len, 0, flags, wire_len, 0);
  }
  void commit_hashed(uint32_t len, uint64_t, uint32_t flags, uint32_t wire_len, uint32_t rss_hash) override {
    scratch_.resize(len);
    frames.push_back({scratch_, flags, wire_len, rss_hash});
  }
  void drop(DropReason why) override { drops.push_back(why); }
  uint32_t room() const override { return static_cast<uint32_t>(room_); }
  uint32_t max_frame() const override { return max_frame_; }
  void set_room(size_t frames_per_call) { room_ = frames_per_call; }
  void set_capacity(uint32_t capacity) { capacity_ = capacity; }

  std::vector<Committed> frames;
  std::vector<DropReason> drops;

 private:
  uint32_t capacity_, max_frame_;
  size_t room_ = 32;
  std::vector<uint8_t> scratch_;
};

inline std::unique_ptr<Backend> open_ok(std::string_view spec) {
  auto b = open_backend(spec);
  EXPECT_TRUE(b.has_value()) << spec << ": " << b.status().to_string();
  return b ? std::move(*b) : nullptr;
}

}  // namespace gnio::backend::testing
