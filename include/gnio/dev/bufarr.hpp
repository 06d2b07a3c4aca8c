// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief The device view of a packet-buffer pool (gnio::BufArr::handle()).
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

/// @brief A packet-buffer pool as kernels see it: `count` elements of
/// `elem_size` bytes from `base`. Trivially copyable; valid while the host
/// gnio::BufArr it came from is alive. Host and device.
struct BufArr {
  uint8_t* base = nullptr;  ///< Device address of element 0; nullptr for an empty pool.
  uint32_t elem_size = 0;   ///< Bytes per element, a power of two in 64..65536.
  uint32_t count = 0;       ///< Elements in the pool.

  /// @brief The address of one element.
  /// @param i The element, 0..count-1 (not checked).
  /// @return base + i * elem_size.
  GNIO_HD uint8_t* elem(uint32_t i) const { return base + static_cast<uint64_t>(i) * elem_size; }
};

}  // namespace gnio::dev
