// Device-side status codes: the same values as gnio::Errc, as a plain enum
// that device code can return without any host library.
#pragma once

#include <cstdint>

namespace gnio::dev {

enum class Status : int32_t {
  Success = 0,
  NotSupported = 1,
  InvalidValue = 2,
  BadState = 3,
  Again = 4,
  Driver = 5,
  NoMemory = 6,
  IoError = 7,
  NotFound = 8,
  Timeout = 9,
};

}  // namespace gnio::dev
