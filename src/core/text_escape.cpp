// SPDX-License-Identifier: Apache-2.0
#include "gnio/text_escape.hpp"

#include <cstdint>

namespace gnio {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Bytes of the UTF-8 sequence at the start of s that is kept as it is, or 0
// (not well-formed, or a C1 control).
size_t kept_sequence(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = b(0);
  // 0xC0, 0xC1 and 0xF5.. start only overlong or out-of-range sequences.
  const size_t n = lead >= 0xC2 && lead <= 0xDF   ? 2
                   : lead >= 0xE0 && lead <= 0xEF ? 3
                   : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                  : 0;
  if (n == 0 || s.size() < n) return 0;
  constexpr uint32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  uint32_t cp = lead & (0x7Fu >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i) & 0x3Fu);
  }
  if (cp < kShortest[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp <= 0x9F) return 0;
  return n;
}

}  // namespace

std::string escape_text(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<uint8_t>(bytes[i]);
    if (c >= 0x20 && c <= 0x7E) {
      if (c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t n = kept_sequence(bytes.substr(i)); n != 0) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
      ++i;
    }
  }
  return out;
}

std::string unescape_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\\') {
      out += '\\';
      i += 2;
    } else if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x' && hex_digit(text[i + 2]) >= 0 &&
               hex_digit(text[i + 3]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 2]) << 4 | hex_digit(text[i + 3]));
      i += 4;
    } else {
      out += text[i++];
    }
  }
  return out;
}

}  // namespace gnio
