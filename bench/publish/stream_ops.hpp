// SPDX-License-Identifier: Apache-2.0
// cuStreamWriteValue64, the stream memory operation publish_bench compares,
// reached through the CUDA runtime's driver entry-point lookup so that the
// program does not link the driver library.
#pragma once

#include <cstdint>

#include "gnio/status.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>

namespace publish_bench {

// Writes `value` to device address `dst` in stream order, after every copy
// queued before it on `stream`.
gnio::Status stream_write_value64(cudaStream_t stream, void* dst, uint64_t value);

}  // namespace publish_bench
#endif
