// SPDX-License-Identifier: Apache-2.0
// The library's logger (public API in gnio/log.hpp), as log:: inside the
// library's own (host-compiled) sources.
#pragma once

#include "gnio/log.hpp"

namespace gnio {
namespace log = logging;
}  // namespace gnio
