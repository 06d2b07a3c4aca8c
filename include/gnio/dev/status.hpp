// Device-side status codes are gnio::Errc itself: one taxonomy, the same
// values on both sides, in a header free of host-only code.
#pragma once

#include <cstdint>

namespace gnio {

// Stable numeric values: they appear in logs, JSON and device status codes.
enum class Errc : int32_t {
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

namespace dev {
using Status = Errc;
}  // namespace dev

}  // namespace gnio
