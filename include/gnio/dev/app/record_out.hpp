// Writing a record into the host's ring: only the 8-byte words that carry
// something. A record is 608 bytes, mostly text buffers that hold a short
// name and empty strings; in pinned host memory every word stored is a bus
// write, so the words past each string's terminating zero are left as they
// were (the host reads the strings up to that zero).
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

// Writes the fixed fields of r and each string up to its terminating zero
// into `to` (a ring item); the rest of `to` keeps what it held.
GNIO_HD inline void store_record(const Record& r, Record* to) {
  detail::store_words(r, to, 0, static_cast<uint32_t>(offsetof(Record, name)) + text_bytes(r.name, kNameMax));
  detail::store_words(r, to, offsetof(Record, method), text_bytes(r.method, kMethodMax));
  detail::store_words(r, to, offsetof(Record, path), text_bytes(r.path, kPathMax));
  detail::store_words(r, to, offsetof(Record, http_version), text_bytes(r.http_version, sizeof(r.http_version)));
}

}  // namespace gnio::dev::app
