// SPDX-License-Identifier: Apache-2.0
// The data/compat tables, compiled into gnio at configure time so that an
// installed gnio needs no data files.
#pragma once

namespace gnio::doctor::detail {
extern const char* const kCudaDriverJson;
extern const char* const kDocaCudaJson;
}  // namespace gnio::doctor::detail
