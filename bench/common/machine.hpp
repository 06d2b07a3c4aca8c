// SPDX-License-Identifier: Apache-2.0
// The machine line every benchmark prints before its tables, so that a
// result is read against the hardware that produced it.
#pragma once

#include <string>

#include "gnio/gpu.hpp"

namespace gnio::bench {

// "GPU <name> (<bus id>), driver: <NVIDIA kernel module>; CPU <model> x
// <cores online>; kernel <system> <release> <architecture>".
std::string machine(const Gpu& gpu);

}  // namespace gnio::bench
