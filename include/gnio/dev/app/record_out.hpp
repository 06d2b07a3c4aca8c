// Writing a record into the host's ring: only the 8-byte words that carry
// something. A record is 616 bytes, mostly text buffers that hold a short
// name and empty strings; in pinned host memory every word stored is a bus
// write, so the words past each string's end are left as they were (the host
// reads name and path by their lengths, the others up to their zero).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gnio/dev/app/analyze.hpp"
#include "gnio/dev/config.hpp"

namespace gnio::dev::app {

// Bytes of the string at s (at most cap), its terminating zero included.
GNIO_HD inline uint32_t text_bytes(const char* s, uint32_t cap) {
  uint32_t n = 0;
  while (n < cap && s[n] != 0) ++n;
  return n < cap ? n + 1 : cap;
}

namespace detail {
// Stores the words of r that overlap bytes [from, from + n) into `to`.
GNIO_HD inline void store_words(const Record& r, Record* to, uint32_t from, uint32_t n) {
  const auto* src = reinterpret_cast<const uint64_t*>(&r);
  auto* dst = reinterpret_cast<uint64_t*>(to);
  for (uint32_t w = from / 8; w * 8 < from + n; ++w) dst[w] = src[w];
}
}  // namespace detail

static_assert(alignof(Record) == 8 && sizeof(Record) % 8 == 0, "records are written as 8-byte words");

// Bytes of name or path (len bytes and the terminating zero, at most cap):
// either may hold a 0x00 byte before its end.
GNIO_HD inline uint32_t counted_bytes(uint32_t len, uint32_t cap) { return len < cap ? len + 1 : cap; }

// Writes the fixed fields of r and each string up to its terminating zero
// into `to` (a ring item); the rest of `to` keeps what it held.
GNIO_HD inline void store_record(const Record& r, Record* to) {
  detail::store_words(r, to, 0, static_cast<uint32_t>(offsetof(Record, name)) + counted_bytes(r.name_len, kNameMax));
  detail::store_words(r, to, offsetof(Record, method), text_bytes(r.method, kMethodMax));
  detail::store_words(r, to, offsetof(Record, path), counted_bytes(r.path_len, kPathMax));
  detail::store_words(r, to, offsetof(Record, http_version), text_bytes(r.http_version, sizeof(r.http_version)));
}

}  // namespace gnio::dev::app
