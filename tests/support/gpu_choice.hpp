// SPDX-License-Identifier: Apache-2.0
// Choosing where a benchmark runs: the GPU asked for, or the emulated
// device where "auto" finds none.
#pragma once

#include <cstdio>
#include <string>

#include "gnio/gpu.hpp"
#include "gnio/status.hpp"

namespace gnio::examples {

// Prints the error; 2 is the exit status of a run that failed.
inline int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
  return 2;
}

// "auto" falls back to the emulated device (Gpu::open_or_emulated) unless
// require_gpu is set: then the error comes back and the caller skips.
inline Result<Gpu> open_gpu(const std::string& id, bool require_gpu) {
  return require_gpu ? Gpu::open(id) : Gpu::open_or_emulated(id);
}

}  // namespace gnio::examples
