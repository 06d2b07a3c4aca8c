// SPDX-License-Identifier: Apache-2.0
#include "engine/rx_lent.hpp"

#include <algorithm>
#include <span>
#include <string>

namespace gnio::detail {

void LentFrames::init(const backend::RxMemory& m, size_t frames) {
  base_ = m.base;
  bytes_ = m.bytes;
  frames_.resize(frames);
  release_after_.resize(frames);
}

Result<size_t> LentFrames::take(size_t n) {
  if (tail_ - head_ + n > frames_.size()) grow(tail_ - head_ + n);
  const uint64_t at = tail_ & (frames_.size() - 1);
  const size_t ask = std::min<uint64_t>(n, frames_.size() - at);
  Result<size_t> got = be_.rx_burst(queue_, std::span(frames_.data() + at, ask));
  if (got) tail_ += *got;
  return got;
}

void LentFrames::grow(size_t need) {
  size_t size = frames_.size();
  while (size < need) size *= 2;
  std::vector<backend::RxFrame> frames(size);
  std::vector<uint64_t> after(size);
  const uint64_t old_mask = frames_.size() - 1, mask = size - 1;
  for (uint64_t k = head_; k < tail_; ++k) {
    frames[k & mask] = frames_[k & old_mask];
    after[k & mask] = release_after_[k & old_mask];
  }
  frames_.swap(frames);
  release_after_.swap(after);
}

void LentFrames::release(uint64_t released) {
  const uint64_t mask = frames_.size() - 1;
  uint64_t end = head_;
  while (end < placed_ && release_after_[end & mask] <= released) ++end;
  if (end == head_) return;
  // The frames go back as they lie in frames_: one slice, two where it wraps.
  const uint64_t at = head_ & mask, n = end - head_;
  const uint64_t first = std::min<uint64_t>(n, frames_.size() - at);
  be_.rx_release(queue_, std::span<const backend::RxFrame>(frames_.data() + at, first));
  if (n > first) be_.rx_release(queue_, std::span<const backend::RxFrame>(frames_.data(), n - first));
  head_ = end;
}

void LentFrames::give_back_unplaced(uint64_t pi, uint64_t released) {
  const uint64_t mask = frames_.size() - 1;
  for (; placed_ < tail_; ++placed_) release_after_[placed_ & mask] = pi;
  release(released);
}

Status LentFrames::outside_region(const backend::RxFrame& f) const {
  return Status(Errc::BadState, Layer::Backend,
                be_.caps().driver + ": RX queue " + std::to_string(queue_) + " returned a frame of " +
                    std::to_string(f.len) + " bytes outside the frame memory it named (" +
                    std::to_string(bytes_) + " bytes); the backend must return frames from rx_memory()");
}

}  // namespace gnio::detail
