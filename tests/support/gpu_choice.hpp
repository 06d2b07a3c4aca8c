// SPDX-License-Identifier: Apache-2.0
// Choosing where a test or benchmark runs: the GPU asked for, or the
// emulated device where "auto" finds none, and the cooperation scope given
// at run time as a template argument.
#pragma once

#include <cstdio>
#include <string>

#include "gnio/dev/config.hpp"
#include "gnio/gpu.hpp"
#include "gnio/status.hpp"

namespace gnio::examples {

// Prints the error; 2 is the exit status of a run that failed.
inline int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
  return 2;
}

// "auto" falls back to the emulated device when no CUDA device is present,
// unless require_gpu is set: then the error comes back and the caller skips.
inline Result<Gpu> open_gpu(const std::string& id, bool require_gpu) {
  auto g = Gpu::open(id);
  if (g || id != "auto") return g;
  if (require_gpu) return g.status();
  std::fprintf(stderr, "note: no CUDA device (%s); running on the emulated device\n", g.status().message().c_str());
  return Gpu::open("cpu");
}

// Calls f.template operator()<S>() for the runtime scope.
template <typename F>
auto with_scope(Scope s, F&& f) {
  switch (s) {
    case Scope::Warp: return f.template operator()<Scope::Warp>();
    case Scope::Block: return f.template operator()<Scope::Block>();
    case Scope::Thread: break;
  }
  return f.template operator()<Scope::Thread>();
}

}  // namespace gnio::examples
