// SPDX-License-Identifier: Apache-2.0
// app_bench's compute-heavy stage: a deliberately expensive per-packet step,
// the same code for the kernel and for the host's expected answer.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"

namespace app_bench {

/// FNV-1a over the packet's bytes, `rounds` passes chained: about 2 dependent
/// operations per byte and pass, so a row's rate is bound by the blocks'
/// arithmetic rather than by the datapath once rounds is large.
GNIO_HD inline uint32_t compute_stage(const uint8_t* bytes, uint32_t len, uint32_t rounds) {
  uint32_t h = 2166136261u;
  for (uint32_t r = 0; r < rounds; ++r)
    for (uint32_t i = 0; i < len; ++i) h = (h ^ bytes[i]) * 16777619u;
  return h;
}

}  // namespace app_bench
