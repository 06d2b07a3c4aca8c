// SPDX-License-Identifier: Apache-2.0
// RxDelivery::Sink: the backend writes each frame into the ring's free
// strides (or those of their pinned staging mirror), lent to one
// Backend::rx_into() call at a time through the RxSink interface.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/backend.hpp"
#include "engine/rx_ring_writer.hpp"
#include "gnio/status.hpp"

namespace gnio::detail {

class RxSinkPath final : public backend::RxSink {
 public:
  explicit RxSinkPath(RxRingWriter& w) : w_(w) {}

  // One rx_into() call on `queue` that may take up to `room` frames; how
  // many the backend offered (delivered or dropped).
  Result<size_t> pull(backend::Backend& be, uint16_t queue, uint32_t room);

  uint8_t* claim(uint32_t len) override;
  void commit(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len) override;
  void commit_hashed(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len,
                     uint32_t rss_hash) override;
  void drop(DropReason why) override;
  uint32_t room() const override { return room_; }
  uint32_t max_frame() const override { return w_.max_frame; }

 private:
  // Where a frame of `len` bytes goes: the first of `need` contiguous free
  // strides after the last frame, or nullopt when descriptors or strides
  // are short.
  std::optional<uint64_t> find_strides(uint32_t len, uint32_t& need) const;
  // Writes the next descriptor (its frame at strides from `pos`) and counts it.
  void append(const dev::RxDesc& d, uint64_t pos, uint32_t flags);

  RxRingWriter& w_;
  uint32_t room_ = 0;  // frames the call in progress may still take
  // The frame being written: where claim() put it.
  uint64_t claim_pos_ = 0;
  uint32_t claim_need_ = 0;
};

}  // namespace gnio::detail
