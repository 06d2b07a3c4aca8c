// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Device-side status codes: gnio::Errc itself, in a header free of
/// host-only code, so that host and device speak one taxonomy with the same
/// values.
#pragma once

#include <cstdint>

namespace gnio {

/// @brief The error codes of every gnio call, host and device.
///
/// The numeric values are stable: they appear in logs, in JSON reports and
/// as device status codes. errc_name() gives the upper-case names that
/// `gnio diagnose NAME` accepts; the taxonomy() row of each code says where
/// it shows up, its likely causes and whether a retry helps (only Again
/// asks for one, see is_retryable()).
enum class Errc : int32_t {
  Success = 0,       ///< The call did what it was asked to.
  NotSupported = 1,  ///< A capability is missing on the NIC or the CUDA axis (Status::axis() says which).
  InvalidValue = 2,  ///< An argument is out of range or malformed (a size, a bus id, a queue spec, a JSON field).
  BadState = 3,      ///< The call came at the wrong point of an object's lifecycle (a program bug).
  Again = 4,         ///< A ring is full or empty for now: drain completions or release bursts, then retry.
  Driver = 5,        ///< The CUDA driver or runtime (or a backend's driver layer) failed.
  NoMemory = 6,      ///< Device, pinned host or locked memory could not be allocated.
  IoError = 7,       ///< Reading or writing a file, socket or port failed.
  NotFound = 8,      ///< A named thing does not exist (a device, file, interface, check id).
  Timeout = 9,       ///< A wait ended before the other side made progress.
};

/// @brief The device API (`__host__ __device__` code that persistent kernels call).
namespace dev {
/// @brief The status a device-API call returns: the same codes as the host's gnio::Errc.
using Status = Errc;
}  // namespace dev

}  // namespace gnio
