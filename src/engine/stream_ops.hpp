// SPDX-License-Identifier: Apache-2.0
// Stream memory operations (cuStreamWriteValue64) reached through the CUDA
// runtime's driver entry-point lookup, so that binaries do not link the
// driver library and still start on machines without a GPU driver.
#pragma once

#include <cstdint>

#include "gnio/status.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>

namespace gnio::detail {

// Writes `value` to device address `dst` in stream order, after every copy
// queued before it on `stream`.
Status stream_write_value64(cudaStream_t stream, void* dst, uint64_t value);

}  // namespace gnio::detail
#endif
