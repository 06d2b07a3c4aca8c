// SPDX-License-Identifier: Apache-2.0
// CUDA runtime error mapping into gnio's taxonomy (host code only).
#pragma once

#include <string>

#include "gnio/status.hpp"

#if GNIO_HAVE_CUDA
#include <cuda_runtime_api.h>

namespace gnio::detail {

// Maps a CUDA error to a Status naming the call that failed and what to do.
Status cuda_status(cudaError_t err, const std::string& what);

}  // namespace gnio::detail

#define GNIO_CUDA_TRY(call, what)                                           \
  do {                                                                      \
    cudaError_t gnio_cuda_err_ = (call);                                    \
    if (gnio_cuda_err_ != cudaSuccess) return ::gnio::detail::cuda_status(gnio_cuda_err_, what); \
  } while (0)
#endif
