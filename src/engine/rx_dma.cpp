// SPDX-License-Identifier: Apache-2.0
#include "engine/rx_dma.hpp"

#include <cstring>

namespace gnio::detail {

namespace {

// A run of frames cut short by the next frame (the backend's buffers and the
// ring's strides differ in size, so runs do not grow) is copied by the CPU
// into the staging mirror when it is shorter than this, where consecutive
// ones form one range: a cudaMemcpyAsync call costs the host microseconds,
// a CPU copy of a few KiB less (a choice, not measured).
constexpr uint64_t kMinDmaRunBytes = 16 * 1024;

}  // namespace

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
  uint64_t pi = w_.pi, head = w_.stride_head, bytes = 0, strides = 0, truncated = 0;
  Run run = open_run_;
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
        // One transfer covers both frames when they lie at the same distance
        // on both sides; the bytes between them (the rest of the run's last
        // stride, under one stride) are copied along: they lie inside the
        // backend's region because both frames do, and inside strides of
        // this run in the ring. A wrap of either side makes the distances
        // differ and ends the run.
        if (run.bytes && f.data >= run.src && offset >= run.dst + run.bytes &&
            static_cast<uint64_t>(f.data - run.src) == offset - run.dst) {
          run.bytes = offset + len - run.dst;
        } else {
          open_run_ = run;
          end_run(/*copy_if_short=*/true);
          run = {f.data, offset, len};
        }
        uint32_t rss_hash = f.rss_hash;
        dev::RxDesc d;
        d.len = len;
        d.flags = w_.describe(f.data, len, flags, &rss_hash);
        d.rss_hash = rss_hash;
        d.nstrides = need;
        d.offset = offset;
        d.timestamp_ns = f.timestamp_ns;
        desc[pi & dmask] = d;
        head = pos + need;
        span_end[pi & dmask] = head;
        release_after = ++pi;
        strides += need;
        bytes += len;
        truncated += (flags & backend::RxFrameTruncated) != 0;
        return true;
      });
  open_run_ = run;
  w_.new_offered += pi - w_.pi;
  w_.new_bytes += bytes;
  w_.new_truncated += truncated;
  w_.staged_bytes += strides << shift;
  w_.stride_head = head;
  w_.pi = pi;
  if (!bad) return bad;
  return lent_.placed() - first;
}

void RxDmaPath::end_run(bool copy_if_short) {
  Run& r = open_run_;
  if (!r.bytes) return;
  if (copy_if_short && r.bytes < kMinDmaRunBytes) {
    // Whole strides, so that consecutive short runs form one range.
    std::memcpy(w_.data + r.dst, r.src, r.bytes);
    const uint64_t stride = uint64_t{1} << w_.stride_shift;
    add_range(w_.data_ranges, r.dst, (r.bytes + stride - 1) & ~(stride - 1));
  } else {
    runs_.push_back(r);
  }
  r.bytes = 0;
}

const std::vector<RxDmaPath::Run>& RxDmaPath::close_runs() {
  end_run(/*copy_if_short=*/false);
  return runs_;
}

}  // namespace gnio::detail
