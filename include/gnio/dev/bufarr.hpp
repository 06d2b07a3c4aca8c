// Device view of a registered packet-buffer pool.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"

namespace gnio::dev {

struct BufArr {
  uint8_t* base = nullptr;
  uint32_t elem_size = 0;
  uint32_t count = 0;

  GNIO_HD uint8_t* elem(uint32_t i) const { return base + static_cast<uint64_t>(i) * elem_size; }
};

}  // namespace gnio::dev
