// SPDX-License-Identifier: Apache-2.0
#include "engine/rx_sink.hpp"

namespace gnio::detail {

Result<size_t> RxSinkPath::pull(backend::Backend& be, uint16_t queue, uint32_t room) {
  room_ = room;
  Result<size_t> got = be.rx_into(queue, *this);
  room_ = 0;
  return got;
}

std::optional<uint64_t> RxSinkPath::find_strides(uint32_t len, uint32_t& need) const {
  if (w_.pi - w_.reclaimed >= w_.ndesc) return std::nullopt;
  need = strides_for(len, w_.stride_shift);
  const uint64_t pos = stride_pos(w_.stride_head, need, w_.nstrides);
  if (pos + need - w_.stride_tail > w_.nstrides) return std::nullopt;
  return pos;
}

void RxSinkPath::append(const dev::RxDesc& d, uint64_t pos, uint32_t flags) {
  w_.desc[w_.pi & (w_.ndesc - 1)] = d;
  w_.span_end[w_.pi & (w_.ndesc - 1)] = pos + d.nstrides;
  w_.stride_head = pos + d.nstrides;
  ++w_.pi;
  ++w_.new_offered;
  w_.new_bytes += d.len;
  w_.new_truncated += (flags & backend::RxFrameTruncated) != 0;
}

uint8_t* RxSinkPath::claim(uint32_t len) {
  if (room_ == 0) return nullptr;
  const std::optional<uint64_t> pos = find_strides(len, claim_need_);
  if (!pos) return nullptr;
  claim_pos_ = *pos;
  return w_.data + ((*pos & (w_.nstrides - 1)) << w_.stride_shift);
}

void RxSinkPath::commit(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t wire_len) {
  commit_hashed(len, timestamp_ns, flags & ~backend::RxFrameRssHash, wire_len, 0);
}

void RxSinkPath::commit_hashed(uint32_t len, uint64_t timestamp_ns, uint32_t flags, uint32_t /*wire_len*/,
                               uint32_t rss_hash) {
  const uint64_t offset = (claim_pos_ & (w_.nstrides - 1)) << w_.stride_shift;
  dev::RxDesc d;
  d.len = len;
  d.flags = w_.describe(w_.data + offset, len, flags, &rss_hash);
  d.rss_hash = rss_hash;
  d.nstrides = claim_need_;
  d.offset = offset;
  d.timestamp_ns = timestamp_ns;
  append(d, claim_pos_, flags);
  --room_;
}

void RxSinkPath::drop(DropReason why) {
  w_.drop(why);
  if (room_ > 0) --room_;
}

}  // namespace gnio::detail
