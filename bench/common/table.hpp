// SPDX-License-Identifier: Apache-2.0
// The benchmarks' tables: markdown, each number printed by a printf format.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gnio::bench {

// `v` printed with the printf format `f`, which converts one double
// (e.g. "%.2f Mpps").
std::string fmt(const char* f, double v);

// part / whole, or 0 where the whole was not measured (is not positive).
inline double ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

// A table's header line and its rule; `align` has one letter per column:
// 'l' (text) or 'r' (numbers).
void print_header(const std::vector<std::string>& names, std::string_view align);

// One row: "| a | b |".
void print_row(const std::vector<std::string>& cells);

}  // namespace gnio::bench
