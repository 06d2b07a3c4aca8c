// SPDX-License-Identifier: Apache-2.0
// store_record(): a record written into a ring item that holds an older,
// longer record (or garbage) reads back field for field and string for
// string as the record built, and the words past each string's end are
// not written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "packet_processing/records.hpp"

namespace {

using namespace gnio::dev::app;

constexpr uint8_t kGarbage = 0xAB;

Record record(uint32_t kind, const std::string& name, const std::string& method, const std::string& path,
              const std::string& version) {
  Record r{};
  r.kind = kind;
  r.queue = 3;
  r.version = 4;
  r.proto = kind == kRecordDns ? 17 : 6;
  r.packet = 0x0102030405060708ull;
  r.timestamp_ns = 0x1122334455667788ull;
  for (uint8_t i = 0; i < 16; ++i) {
    r.src[i] = static_cast<uint8_t>(i + 1);
    r.dst[i] = static_cast<uint8_t>(0xF0 | i);
  }
  r.sport = 40000;
  r.dport = kind == kRecordDns ? 53 : 80;
  r.dns_id = 0xBEEF;
  r.qtype = 28;
  r.response = 1;
  r.rcode = 3;
  r.path_cut = 1;
  r.name_len = static_cast<uint16_t>(std::min<size_t>(name.size(), kNameMax - 1));
  r.path_len = static_cast<uint16_t>(std::min<size_t>(path.size(), kPathMax - 1));
  std::memcpy(r.name, name.data(), r.name_len);
  std::strncpy(r.method, method.c_str(), kMethodMax - 1);
  std::memcpy(r.path, path.data(), r.path_len);
  std::strncpy(r.http_version, version.c_str(), sizeof(r.http_version) - 1);
  return r;
}

void expect_same(const Record& got, const Record& want) {
  EXPECT_EQ(0, std::memcmp(&got, &want, offsetof(Record, name))) << "fixed fields differ";
  EXPECT_EQ(std::string(got.name, got.name_len + 1), std::string(want.name, want.name_len + 1));
  EXPECT_STREQ(got.method, want.method);
  EXPECT_EQ(std::string(got.path, got.path_len + 1), std::string(want.path, want.path_len + 1));
  EXPECT_STREQ(got.http_version, want.http_version);
}

// Bytes of `item` still holding kGarbage from `from` to `to`.
size_t untouched(const Record& item, size_t from, size_t to) {
  const auto* b = reinterpret_cast<const uint8_t*>(&item);
  size_t n = 0;
  for (size_t i = from; i < to; ++i) n += b[i] == kGarbage;
  return n;
}

TEST(RecordOut, DnsRecordOverGarbageReadsBackAndLeavesTheRestUnwritten) {
  Record item;
  std::memset(&item, kGarbage, sizeof item);
  const Record r = record(kRecordDns, "a.example.org", "", "", "");
  store_record(r, &item);
  expect_same(item, r);
  // name at 88, 13 characters and the zero end at 101: words up to 104 written.
  const size_t name_end = (offsetof(Record, name) + 14 + 7) / 8 * 8;
  EXPECT_EQ(name_end, 104u);
  // up to the word that holds method[0] (at 344, a word of its own)
  const size_t method_word = offsetof(Record, method) / 8 * 8;
  EXPECT_EQ(untouched(item, name_end, method_word), method_word - name_end);
  // Empty strings: one word each.
  const size_t path_word_end = (offsetof(Record, path) / 8 + 1) * 8;
  EXPECT_EQ(untouched(item, path_word_end, offsetof(Record, http_version) / 8 * 8),
            offsetof(Record, http_version) / 8 * 8 - path_word_end);
  size_t written = 0;
  for (size_t i = 0; i < sizeof item; ++i) written += reinterpret_cast<const uint8_t*>(&item)[i] != kGarbage;
  EXPECT_LE(written, 104u + 3 * 16) << "of " << sizeof item << " bytes";
}

TEST(RecordOut, ShortHttpRecordOverALongerOneReadsBackAsTheShortOne) {
  Record item;
  std::memset(&item, kGarbage, sizeof item);
  store_record(record(kRecordHttp, std::string(kNameMax - 1, 'h'), "OPTIONS", std::string(kPathMax - 1, 'p'),
                      "HTTP/1.1"),
               &item);
  const Record shorter = record(kRecordHttp, "h.example", "GET", "/i", "HTTP/1.0");
  store_record(shorter, &item);
  expect_same(item, shorter);
  // The longer record's text is still there past the shorter one's ends.
  EXPECT_EQ(item.name[kNameMax / 2], 'h');
  EXPECT_EQ(item.path[kPathMax / 2], 'p');
}

TEST(RecordOut, FullLengthStringsAreWrittenWhole) {
  Record item;
  std::memset(&item, kGarbage, sizeof item);
  const Record r = record(kRecordTls, std::string(kNameMax - 1, 'n'), std::string(kMethodMax - 1, 'M'),
                          std::string(kPathMax - 1, '/'), "HTTP/1.1xyz");
  store_record(r, &item);
  expect_same(item, r);
  EXPECT_EQ(std::strlen(item.name), kNameMax - 1);
  EXPECT_EQ(std::strlen(item.path), kPathMax - 1);
}

// A name from the wire may hold 0x00 bytes: name and path are written to
// their lengths, not to their first zero.
TEST(RecordOut, NamesWithZeroBytesAreWrittenToTheirLength) {
  Record item;
  std::memset(&item, kGarbage, sizeof item);
  const std::string name("a\0b.example", 11), path("/x\0\0y", 5);
  const Record r = record(kRecordHttp, name, "GET", path, "HTTP/1.1");
  store_record(r, &item);
  expect_same(item, r);
  EXPECT_EQ(std::string(item.name, item.name_len), name);
  EXPECT_EQ(std::string(item.path, item.path_len), path);
}

TEST(RecordOut, TextBytesCountsTheZeroEndAndStopsAtTheBuffer) {
  const char unterminated[4] = {'a', 'b', 'c', 'd'};
  EXPECT_EQ(text_bytes("", 8), 1u);
  EXPECT_EQ(text_bytes("abc", 8), 4u);
  EXPECT_EQ(text_bytes(unterminated, 4), 4u);
}

}  // namespace
