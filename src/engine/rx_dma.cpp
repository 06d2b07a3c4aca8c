// SPDX-License-Identifier: Apache-2.0
#include "engine/rx_dma.hpp"

namespace gnio::detail {

Result<size_t> RxDmaPath::pull(uint32_t room) {
  // Frames of a pull source that found no strides before go first.
  Result<size_t> waiting = place_lent();
  if (!waiting || !lent_.all_placed() || *waiting >= room) return waiting;
  Result<size_t> got = lent_.take(room - *waiting);
  if (!got) return got;
  Result<size_t> placed = place_lent();
  if (!placed) return placed;
  return *waiting + *placed;
}

Result<size_t> RxDmaPath::place_lent() {
  // The ring's state in locals: the descriptor stores below cannot alias them.
  const uint64_t dmask = w_.ndesc - 1, smask = w_.nstrides - 1, nstrides = w_.nstrides;
  const uint32_t shift = w_.stride_shift;
  const uint64_t desc_limit = w_.reclaimed + w_.ndesc, stride_limit = w_.stride_tail + w_.nstrides;
  dev::RxDesc* desc = w_.desc;
  uint64_t* span_end = w_.span_end.data();
  uint64_t pi = w_.pi, head = w_.stride_head, bytes = 0, truncated = 0;
  const uint8_t** src = w_.src;
  const uint8_t* const host_base = host_base_;
  const uint8_t* const device_base = device_base_;
  const uint64_t first = lent_.placed();
  const Status bad =
      lent_.place(w_, pi, [&](const backend::RxFrame& f, uint32_t len, uint32_t flags, uint64_t& release_after) {
        // Where the sink would put it: contiguous strides after the last frame.
        const uint32_t need = strides_for(len, shift);
        const uint64_t pos = stride_pos(head, need, nstrides);
        if (pi >= desc_limit || pos + need > stride_limit) {
          if (!drops_when_full_) return false;  // a pulled source waits, and what follows waits behind it
          release_after = pi;
          w_.drop(DropReason::RingFull);  // a wire does not wait for the ring
          return true;
        }
        const uint64_t offset = (pos & smask) << shift;
        uint32_t rss_hash = f.rss_hash;
        dev::RxDesc d;
        d.len = len;
        d.flags = w_.describe(f.data, len, flags, &rss_hash);
        d.rss_hash = rss_hash;
        d.nstrides = need;
        d.offset = offset;
        d.timestamp_ns = f.timestamp_ns;
        desc[pi & dmask] = d;
        src[pi & dmask] = device_base + (f.data - host_base);
        head = pos + need;
        span_end[pi & dmask] = head;
        release_after = ++pi;
        bytes += len;
        truncated += (flags & backend::RxFrameTruncated) != 0;
        return true;
      });
  w_.new_offered += pi - w_.pi;
  w_.new_bytes += bytes;
  w_.new_truncated += truncated;
  w_.stride_head = head;
  w_.pi = pi;
  if (!bad) return bad;
  return lent_.placed() - first;
}

}  // namespace gnio::detail
