// SPDX-License-Identifier: Apache-2.0
// An RxSink for backend tests: it records what a backend's rx_into()
// offered (frames with their flags, and drops with their reasons) and can
// refuse room on request, as a full ring does.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/backend.hpp"

namespace gnio::backend::testing {

class RecordingSink final : public RxSink {
 public:
  struct Event {
    std::vector<uint8_t> bytes;          // a delivered frame (empty for a drop)
    uint32_t flags = 0, wire_len = 0;
    uint64_t timestamp_ns = 0;
    std::optional<DropReason> dropped;   // set for a drop
  };

  explicit RecordingSink(uint32_t max_frame) : max_frame_(max_frame) {}

  uint8_t* claim(uint32_t len) override {
    if (refuse_claims_ > 0) {
      --refuse_claims_;
      return nullptr;
    }
    claimed_.assign(len, 0);
    return claimed_.data();
  }
  void commit(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len) override {
    claimed_.resize(len);
    events.push_back({claimed_, flags, wire_len, timestamp_ns, std::nullopt});
    --room_;
  }
  void drop(DropReason why) override { events.push_back({{}, 0, 0, 0, why}); }
  uint32_t room() const override { return room_; }
  uint32_t max_frame() const override { return max_frame_; }

  // The next `n` claims find no room.
  void refuse_claims(uint32_t n) { refuse_claims_ = n; }
  // Frames the next burst may take.
  void set_room(uint32_t frames) { room_ = frames; }

  std::vector<Event> events;

 private:
  uint32_t max_frame_;
  uint32_t room_ = 32;
  uint32_t refuse_claims_ = 0;
  std::vector<uint8_t> claimed_;
};

// Calls rx_into() until the backend is at its end; fails the test on an
// error or when a call offers nothing while room is left.
inline void drain_into(Backend& b, RecordingSink& sink, uint32_t room_per_burst = 32) {
  while (!b.at_end(0)) {
    sink.set_room(room_per_burst);
    auto n = b.rx_into(0, sink);
    if (!n) {
      ADD_FAILURE() << n.status().to_string();
      return;
    }
    if (*n == 0 && !b.at_end(0)) {
      ADD_FAILURE() << "rx_into() offered nothing with room for " << room_per_burst << " frames";
      return;
    }
  }
}

}  // namespace gnio::backend::testing
