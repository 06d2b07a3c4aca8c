// SPDX-License-Identifier: Apache-2.0
#include "packet_processing/decap_option.hpp"

#include "packet_processing/tunnel.hpp"

namespace gnio::app {

using namespace gnio::dev::app;

std::optional<std::string> parse_decap(const std::string& text, uint32_t& decap) {
  if (text == "none") {
    decap = kDecapNone;
    return std::nullopt;
  }
  if (text == "all") {
    decap = kDecapAll;
    return std::nullopt;
  }
  std::string known;
  for (uint32_t t = 1; t < kTunnelCount; ++t) known += std::string(t > 1 ? ", " : "") + kTunnelNames[t];
  uint32_t set = 0;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = text.find(',', from);
    const std::string name = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    uint32_t type = 0;
    for (uint32_t t = 1; t < kTunnelCount; ++t)
      if (name == kTunnelNames[t]) type = t;
    if (type == 0)
      return "--decap '" + text + "': \"" + name + "\" is not a tunnel type; give none, all or a comma-separated " +
             "list of " + known + " (e.g. --decap vxlan,gtpu)";
    set |= 1u << type;
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  decap = set;
  return std::nullopt;
}

std::string decap_text(uint32_t decap) {
  if (decap == kDecapNone) return "none";
  if ((decap & kDecapAll) == kDecapAll) return "all";
  std::string out;
  for (uint32_t t = 1; t < kTunnelCount; ++t)
    if ((decap >> t) & 1u) out += (out.empty() ? "" : ",") + std::string(kTunnelNames[t]);
  return out;
}

}  // namespace gnio::app
