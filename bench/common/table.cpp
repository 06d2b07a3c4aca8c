// SPDX-License-Identifier: Apache-2.0
#include "table.hpp"

#include <cstdio>

namespace gnio::bench {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

void print_header(const std::vector<std::string>& names, std::string_view align) {
  print_row(names);
  std::string rule = "|";
  for (char a : align) rule += a == 'r' ? "---:|" : "---|";
  std::printf("%s\n", rule.c_str());
}

void print_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const std::string& c : cells) line += " " + c + " |";
  std::printf("%s\n", line.c_str());
}

}  // namespace gnio::bench
