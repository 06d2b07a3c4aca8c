// SPDX-License-Identifier: Apache-2.0
// HTTP/1.x requests (RFC 9112) for the packet-processing application, on
// the GPU: the request line at the start of a TCP payload and the Host
// header of the header block after it. HTTP carries no length field before
// its body: the bounds are the lines, each read up to its line feed or the
// payload's end, and the header block, which ends at its empty line (what
// follows is a body or the next request, never a header). http_fields()
// fills a request's record.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "packet_processing/records.hpp"

namespace gnio::dev::app {

namespace detail {

GNIO_HD inline bool is_upper(uint8_t c) { return c >= 'A' && c <= 'Z'; }
GNIO_HD inline uint8_t lower(uint8_t c) { return is_upper(c) ? static_cast<uint8_t>(c + 32) : c; }

// The first byte of the line after the one that p[i] is in, or n.
GNIO_HD inline uint32_t next_line(const uint8_t* p, uint32_t i, uint32_t n) {
  while (i < n && p[i] != '\n') ++i;
  return i < n ? i + 1 : n;
}

}  // namespace detail

/// @brief The length of the HTTP/1.x request method that p[0..n) starts with (followed by a space), or 0.
GNIO_HD inline uint32_t http_method_length(const uint8_t* p, uint32_t n) {
  const char* methods[] = {"GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE"};
  for (const char* m : methods) {
    uint32_t k = 0;
    while (m[k] != 0 && k < n && p[k] == static_cast<uint8_t>(m[k])) ++k;
    if (m[k] == 0 && k < n && p[k] == ' ') return k;
  }
  return 0;
}

/// @brief The bounds of a request line's parts, as offsets into the payload.
struct RequestLine {
  uint32_t method_end = 0, target_begin = 0, target_end = 0, version_begin = 0, version_end = 0, line_end = 0;
};

/// @brief The request line "METHOD SP target SP HTTP/1.x" at p[0..n): the target's bounds and the
/// version's into r, or false. line_end is at the line's CR or LF, or n when the payload ends first.
GNIO_HD inline bool http_request_line(const uint8_t* p, uint32_t n, RequestLine& r) {
  r.method_end = http_method_length(p, n);
  if (r.method_end == 0) return false;
  r.target_begin = r.method_end + 1;
  uint32_t i = r.target_begin;
  while (i < n && p[i] != ' ' && p[i] != '\r' && p[i] != '\n') ++i;
  if (i == r.target_begin || i >= n || p[i] != ' ') return false;
  r.target_end = i;
  r.version_begin = i + 1;
  const char* v = "HTTP/1.";
  for (uint32_t k = 0; k < 7; ++k)
    if (r.version_begin + k >= n || p[r.version_begin + k] != static_cast<uint8_t>(v[k])) return false;
  i = r.version_begin + 7;
  while (i < n && p[i] != '\r' && p[i] != '\n') ++i;
  r.version_end = i;
  r.line_end = i;
  return true;
}

/// @brief The value of the first Host header in the header block that starts on the line after p[from]
/// (the request line's end) in p[0..n): its bounds, optional whitespace trimmed, or value_begin ==
/// value_end when the block has none. A value whose line the payload cuts ends with the payload.
GNIO_HD inline void http_host(const uint8_t* p, uint32_t from, uint32_t n, uint32_t& value_begin,
                              uint32_t& value_end) {
  value_begin = value_end = 0;
  for (uint32_t i = detail::next_line(p, from, n); i < n; i = detail::next_line(p, i, n)) {
    if (p[i] == '\n' || (p[i] == '\r' && (i + 1 == n || p[i + 1] == '\n'))) return;  // the empty line
    if (i + 5 <= n && detail::lower(p[i]) == 'h' && detail::lower(p[i + 1]) == 'o' &&
        detail::lower(p[i + 2]) == 's' && detail::lower(p[i + 3]) == 't' && p[i + 4] == ':') {
      uint32_t b = i + 5;
      while (b < n && (p[b] == ' ' || p[b] == '\t')) ++b;
      uint32_t e = b;
      while (e < n && p[e] != '\r' && p[e] != '\n') ++e;
      while (e > b && (p[e - 1] == ' ' || p[e - 1] == '\t')) --e;
      value_begin = b;
      value_end = e;
      return;
    }
  }
}

/// @brief The record fields of the request p[0..n) that http_request_line() accepted: method, target (cut
/// to kPathMax, path_cut set), version and Host.
GNIO_HD inline void http_fields(const uint8_t* p, uint32_t n, Record& r) {
  RequestLine rl;
  http_request_line(p, n, rl);
  detail::copy_text(r.method, kMethodMax, p, 0, rl.method_end);
  const uint32_t got = detail::copy_text(r.path, kPathMax, p, rl.target_begin, rl.target_end);
  r.path_len = static_cast<uint16_t>(got);
  r.path_cut = got < rl.target_end - rl.target_begin;
  detail::copy_text(r.http_version, sizeof(r.http_version), p, rl.version_begin, rl.version_end);
  uint32_t hb, he;
  http_host(p, rl.line_end, n, hb, he);
  r.name_len = static_cast<uint16_t>(detail::copy_text(r.name, kNameMax, p, hb, he));
}

}  // namespace gnio::dev::app
