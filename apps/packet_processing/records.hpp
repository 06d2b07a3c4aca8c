// SPDX-License-Identifier: Apache-2.0
// The records the packet-processing application hands to the host: the
// application-layer fields of one DNS message, HTTP request or TLS
// ClientHello (the parsers in dns.hpp, http.hpp and tls.hpp fill them), and
// writing one into the host's ring. A record is 632 bytes, mostly text
// buffers that hold a short name and empty strings; in pinned host memory
// every word stored is a bus write, so store_record() writes only the 8-byte
// words that carry something and leaves the words past each string's end as
// they were (the host reads name and path by their lengths, the others up
// to their zero).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gnio/dev/config.hpp"

namespace gnio::dev::app {

// Application-layer fields of one DNS message, HTTP request or ClientHello.
enum RecordKind : uint32_t { kRecordNone, kRecordDns, kRecordHttp, kRecordTls };

inline constexpr uint32_t kNameMax = 256;   // a DNS name as text is at most 253 characters
inline constexpr uint32_t kPathMax = 256;   // longer request targets are cut (Record::path_cut)
inline constexpr uint32_t kMethodMax = 16;

struct Record {
  uint32_t kind;         // RecordKind
  uint16_t queue;
  uint8_t version;       // IP version
  uint8_t proto;         // 6 or 17
  uint64_t packet;       // index of the packet in its queue (0 = first)
  uint64_t timestamp_ns;
  uint8_t src[16], dst[16];
  uint16_t sport, dport;
  // DNS
  uint16_t dns_id, qtype;
  uint8_t response, rcode, path_cut, pad;
  // The bytes of name and path: a name from the wire may hold any byte, 0x00
  // included (both are also zero-terminated).
  uint16_t name_len, path_len;
  // The tunnel the packet came out of (FlowKey's tunnel, labels, tunnel_id); 0: none.
  uint8_t tunnel, labels, pad2[6];
  uint64_t tunnel_id;
  char name[kNameMax];    // DNS qname, HTTP Host, TLS SNI
  char method[kMethodMax];
  char path[kPathMax];
  char http_version[12];
};

namespace detail {

// Copies at most cap-1 bytes of [p+from, p+to) into out as a C string.
GNIO_HD inline uint32_t copy_text(char* out, uint32_t cap, const uint8_t* p, uint32_t from, uint32_t to) {
  uint32_t n = 0;
  for (uint32_t i = from; i < to && n + 1 < cap; ++i) out[n++] = static_cast<char>(p[i]);
  out[n] = 0;
  return n;
}

}  // namespace detail

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
