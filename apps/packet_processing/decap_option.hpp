// SPDX-License-Identifier: Apache-2.0
// The --decap option of `gnio run packet-processing`: which tunnels the
// kernel opens (tunnel.hpp), as a set of TunnelType bits, and its text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gnio::app {

// Parses "none", "all" or a comma-separated list of tunnel names
// ("vxlan,gtpu") into `decap`; the error message when the text is none of these.
std::optional<std::string> parse_decap(const std::string& text, uint32_t& decap);

// "none", "all", or the names of the set in TunnelType order, comma-separated.
std::string decap_text(uint32_t decap);

}  // namespace gnio::app
