// SPDX-License-Identifier: Apache-2.0
// An exposition whose label values hold any bytes, for label_bytes_check.py
// to read with prometheus_client's parser: each sample's `bytes_hex` label
// gives, in hex, the bytes its `value` label was written from (every byte
// value alone between letters, all 256 in order, UTF-8 well- and ill-formed,
// and random strings).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gnio/metrics.hpp"

namespace {

std::string hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 0x0F];
  }
  return out;
}

}  // namespace

int main() {
  std::vector<std::string> values;
  std::string all;
  for (int v = 0; v < 256; ++v) {
    values.push_back(std::string("a") + static_cast<char>(v) + "z");
    all += static_cast<char>(v);
  }
  values.push_back(all);
  for (const char* s : {"caf\xc3\xa9", "\xc2\x85", "\xe4\xbe\x8b\xe5\xad\x90", "\xf0\x9f\x98\x80", "\xed\xa0\x80",
                        "\xc0\xaf", "\xf4\x90\x80\x80", "\xe2\x82", "a\\xff", "quote\" and \\n"})
    values.push_back(s);
  std::mt19937 gen(21);
  std::uniform_int_distribution<int> byte(0, 255), length(0, 48);
  for (int i = 0; i < 500; ++i) {
    std::string s(static_cast<size_t>(length(gen)), '\0');
    for (char& c : s) c = static_cast<char>(i % 2 ? 0x80 | byte(gen) : byte(gen));
    values.push_back(s);
  }
  gnio::metrics::Writer w;
  for (const std::string& v : values)
    w.counter("gnio_test_label_bytes_total", "Samples whose value label holds any bytes",
              {{"bytes_hex", hex(v)}, {"value", v}}, 1);
  const std::string text = w.text();
  return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0 ? 0 : 1;
}
