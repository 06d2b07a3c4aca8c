// SPDX-License-Identifier: Apache-2.0
// The metrics endpoint's request handling, the exposition parser gnio top
// uses, and the address parser, on arbitrary input.
#include <cstdint>
#include <string>
#include <string_view>

#include "gnio/metrics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gnio::metrics;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t space = in.find(' ');
  const std::string_view method = in.substr(0, space);
  const std::string_view target = space == std::string_view::npos ? std::string_view() : in.substr(space + 1);
  const Collector collect = [&](Writer& w) { w.counter("fuzz_total", target, {{"path", std::string(target)}}, size); };
  Reply r = handle_request(method, target, collect);
  if (r.status == 200 && method == "GET" && target.substr(0, 8) == "/metrics" &&
      (target.size() == 8 || target[8] == '?')) {
    // What the server writes must parse back to the value it wrote.
    auto back = parse(r.body);
    if (!back || back->size() != 1 || (*back)[0].value != static_cast<double>(size) ||
        (*back)[0].label("path") != target)
      __builtin_trap();
  }
  (void)parse(in);
  (void)parse_endpoint(in);
  return 0;
}
