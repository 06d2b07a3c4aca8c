// SPDX-License-Identifier: Apache-2.0
#include "engine/rx_in_place.hpp"

namespace gnio::detail {

Result<size_t> pull_in_place(RxRingWriter& w, LentFrames& lent, uint32_t room) {
  Result<size_t> got = lent.take(room);
  if (!got) return got;
  // The ring's state in locals: the descriptor stores below cannot alias them.
  const uint64_t dmask = w.ndesc - 1, desc_limit = w.reclaimed + w.ndesc;
  const uint8_t* base = lent.base();
  dev::RxDesc* desc = w.desc;
  uint64_t pi = w.pi, bytes = 0, truncated = 0;
  const Status bad =
      lent.place(w, pi, [&](const backend::RxFrame& f, uint32_t len, uint32_t flags, uint64_t& release_after) {
        if (pi >= desc_limit) {
          release_after = pi;
          w.drop(DropReason::RingFull);  // a wire does not wait for the ring
          return true;
        }
        uint32_t rss_hash = f.rss_hash;
        dev::RxDesc d;
        d.len = len;
        d.flags = w.describe(f.data, len, flags, &rss_hash);
        d.rss_hash = rss_hash;
        d.nstrides = 1;
        d.offset = static_cast<uint64_t>(f.data - base);
        d.timestamp_ns = f.timestamp_ns;
        desc[pi & dmask] = d;
        release_after = ++pi;
        bytes += len;
        truncated += (flags & backend::RxFrameTruncated) != 0;
        return true;
      });
  w.new_offered += pi - w.pi;
  w.new_bytes += bytes;
  w.new_truncated += truncated;
  w.pi = pi;
  if (!bad) return bad;
  return got;
}

}  // namespace gnio::detail
