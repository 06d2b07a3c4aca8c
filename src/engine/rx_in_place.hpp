// SPDX-License-Identifier: Apache-2.0
// RxDelivery::InPlace: the backend's frame memory, mapped into the GPU, is
// the data area of a ring in host memory; the engine writes descriptors
// that point at the frames where the backend put them, and copies nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/rx_lent.hpp"
#include "engine/rx_ring_writer.hpp"
#include "gnio/status.hpp"

namespace gnio::detail {

// Lends up to `room` frames from the backend and writes their descriptors;
// how many the backend lent.
Result<size_t> pull_in_place(RxRingWriter& w, LentFrames& lent, uint32_t room);

}  // namespace gnio::detail
