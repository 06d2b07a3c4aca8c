// SPDX-License-Identifier: Apache-2.0
// escape_text(): the one rule every output of gnio writes wire bytes by.
// Each byte value alone, well-formed UTF-8 kept, every kind of ill-formed
// sequence escaped byte by byte; the text is valid UTF-8 (nlohmann's strict
// dump is the independent check) and the bytes read back from it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <random>
#include <string>

#include "gnio/text_escape.hpp"

namespace {

using gnio::escape_text;

std::string hex(int v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", v);
  return buf;
}

// The reverse of the rule, to show that nothing is lost: `\\` and `\xNN`
// are the only escapes.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
    } else if (s[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else {
      out += static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 3;
    }
  }
  return out;
}

bool strict_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();  // error_handler_t::strict: throws on anything but UTF-8
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

TEST(TextEscape, EveryByteValueAlone) {
  for (int v = 0; v < 256; ++v) {
    const std::string in(1, static_cast<char>(v));
    std::string want;
    if (v == '\\') want = "\\\\";
    else if (v >= 0x20 && v <= 0x7E) want = in;
    else want = hex(v);  // controls, DEL, and no byte of 0x80.. is a whole sequence
    EXPECT_EQ(escape_text(in), want) << "byte " << v;
  }
  EXPECT_EQ(escape_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escape_text("tab\there\r\n"), "tab\\x09here\\x0d\\x0a");
  EXPECT_EQ(escape_text(""), "");
}

TEST(TextEscape, WellFormedUtf8IsKept) {
  for (const char* s : {"\xc2\xa0",           // U+00A0, the first kept 2-byte sequence
                        "caf\xc3\xa9",        // U+00E9
                        "\xdf\xbf",           // U+07FF
                        "\xe0\xa0\x80",       // U+0800
                        "\xe2\x82\xac",       // U+20AC
                        "\xed\x9f\xbf",       // U+D7FF, below the surrogates
                        "\xee\x80\x80",       // U+E000, above them
                        "\xef\xbf\xbf",       // U+FFFF
                        "\xf0\x90\x80\x80",   // U+10000
                        "\xf0\x9f\x98\x80",   // U+1F600
                        "\xf4\x8f\xbf\xbf"})  // U+10FFFF
    EXPECT_EQ(escape_text(s), s);
  const std::string idn = "\xe4\xbe\x8b\xe5\xad\x90.\xe6\xb5\x8b\xe8\xaf\x95";  // an internationalised name
  EXPECT_EQ(escape_text(idn), idn);
}

TEST(TextEscape, IllFormedSequencesAreEscapedByteByByte) {
  struct Case {
    const char* in;
    const char* want;
  } cases[] = {
      {"\xc2\x85", "\\xc2\\x85"},                      // U+0085, a C1 control
      {"\xc2\x9f", "\\xc2\\x9f"},                      // U+009F, the last C1 control
      {"\xc0\xaf", "\\xc0\\xaf"},                      // overlong '/'
      {"\xc1\xbf", "\\xc1\\xbf"},                      // overlong U+007F
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},             // overlong '/' in 3 bytes
      {"\xe0\x9f\xbf", "\\xe0\\x9f\\xbf"},             // overlong U+07FF
      {"\xf0\x80\x80\xaf", "\\xf0\\x80\\x80\\xaf"},    // overlong '/' in 4 bytes
      {"\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf"},    // overlong U+FFFF
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},             // U+D800, a surrogate
      {"\xed\xbf\xbf", "\\xed\\xbf\\xbf"},             // U+DFFF
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},    // U+110000, past the last code point
      {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80"},    // a lead byte that never starts one
      {"\xe2\x82", "\\xe2\\x82"},                      // cut at the end
      {"\xe2\x82x", "\\xe2\\x82x"},                    // cut by an ASCII byte
      {"\xc3\xc3\xa9", "\\xc3\xc3\xa9"},               // a lead byte, then a whole sequence
      {"\x80\xbf", "\\x80\\xbf"},                      // continuation bytes alone
      {"\xff\xfe", "\\xff\\xfe"},
      {"a\\xff", "a\\\\xff"},                          // the text `\xff` is not the byte
  };
  for (const Case& c : cases) EXPECT_EQ(escape_text(c.in), c.want) << c.want;
}

TEST(TextEscape, AnyBytesGiveValidUtf8ThatReadsBack) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> byte(0, 255), length(0, 64);
  int multibyte_kept = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string in(static_cast<size_t>(length(gen)), '\0');
    // Every fourth input is mostly high bytes, so that whole sequences occur.
    for (char& c : in) c = static_cast<char>(i % 4 == 0 ? 0x80 | byte(gen) : byte(gen));
    const std::string out = escape_text(in);
    ASSERT_TRUE(strict_utf8(out)) << out;
    for (char c : out) ASSERT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F) << out;
    ASSERT_EQ(unescape(out), in);
    ASSERT_EQ(gnio::unescape_text(out), in);
    for (char c : out) multibyte_kept += static_cast<unsigned char>(c) >= 0x80;
  }
  EXPECT_GT(multibyte_kept, 0);
}

// unescape_text() reads the two escapes back and leaves any other backslash
// as it is (text written before the rule, or by hand).
TEST(TextEscape, UnescapeReadsTheTwoEscapesAndLeavesOtherText) {
  EXPECT_EQ(gnio::unescape_text("a\\\\b"), "a\\b");
  EXPECT_EQ(gnio::unescape_text("\\x00\\xff\\xFe"), std::string("\x00\xff\xfe", 3));
  EXPECT_EQ(gnio::unescape_text("caf\xc3\xa9"), "caf\xc3\xa9");
  for (const char* kept : {"\\", "\\x", "\\x4", "\\xg0", "\\n", "C:\\dir", "end\\"})
    EXPECT_EQ(gnio::unescape_text(kept), kept) << kept;
  EXPECT_EQ(gnio::unescape_text("\\\\x41"), "\\x41");  // an escaped backslash, then the text x41
  EXPECT_EQ(gnio::unescape_text(""), "");
}

}  // namespace
