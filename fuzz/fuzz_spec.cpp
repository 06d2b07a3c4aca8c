// SPDX-License-Identifier: Apache-2.0
// The queue-spec parser, its typed getters, and the drivers that take no
// file or device (synthetic, fault over synthetic) on arbitrary text.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "backends/backend.hpp"
#include "backends/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gnio::backend;
  if (size < 1 || size > 4096) return 0;
  const ArgMode mode = static_cast<ArgMode>(data[0] % 3);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto spec = Spec::parse(text, mode, {"count", "size", "pps", "proto", "loop"});
  if (spec) {
    (void)spec->u64("count", 1, 0, 1000);
    (void)spec->rate("pps", 1e6);
    (void)spec->choice("proto", "udp", {"udp", "tcp"});
    (void)spec->invalid("size", "fuzz", "none");
  }
  // Whole specs through the drivers that open nothing outside the process.
  for (std::string_view prefix : {"synthetic:", "fault:inner=synthetic:count=3,", "null:"}) {
    auto be = open_backend(std::string(prefix) + std::string(text));
    if (!be) continue;
    std::array<RxFrame, 8> frames;
    for (int i = 0; i < 4; ++i) (void)(*be)->rx_burst(0, frames);
  }
  return 0;
}
