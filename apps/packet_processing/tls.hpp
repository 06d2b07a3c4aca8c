// SPDX-License-Identifier: Apache-2.0
// The TLS ClientHello (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2) and its
// server_name extension (RFC 6066 §3) for the packet-processing
// application, on the GPU. Every length is held to its container: the
// session id, cipher suites, compression methods and extensions block to
// the handshake message, each extension to the block, the server name list
// to its extension and each name to the list. The handshake message may go
// on past its record (RFC 8446 §5.1 lets it be fragmented) and the record
// past the TCP segment: what the frame does not hold is not checked.
// tls_fields() fills a ClientHello's record.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/reason.hpp"
#include "packet_processing/records.hpp"

namespace gnio::dev::app {

/// @brief The largest TLSPlaintext fragment (RFC 8446 §5.1, RFC 5246 §6.2.1).
inline constexpr uint32_t kTlsRecordMax = 1u << 14;
/// @brief The longest legacy_session_id (RFC 8446 §4.1.2).
inline constexpr uint32_t kTlsSessionIdMax = 32;

/// @brief What tls_client_hello() found at the start of a TCP payload.
struct TlsHello {
  bool hello = false;             ///< a handshake record whose message is a ClientHello
  bool named = false;             ///< its server_name extension has a host_name, at [sni_begin, sni_end)
  uint32_t reason = kReasonNone;  ///< kReasonNone, or the first length that crosses its container
  uint32_t sni_begin = 0, sni_end = 0;
};

namespace detail {

// Where a field of `size` bytes at `at` lies: in the bytes held, past them
// but inside its container (it goes on in a later record or segment), or
// across its container's end.
enum TlsFit : uint32_t { kTlsHeld, kTlsLater, kTlsCrosses };

GNIO_HD inline TlsFit tls_fit(uint32_t at, uint32_t size, uint32_t container_end, uint32_t held) {
  if (at > container_end || size > container_end - at) return kTlsCrosses;
  return at + size <= held ? kTlsHeld : kTlsLater;
}

// tls_fit() for a field of the ClientHello h: true when held; sets
// h.reason when the field crosses its container.
GNIO_HD inline bool tls_fits(uint32_t at, uint32_t size, uint32_t container_end, uint32_t held, uint32_t reason,
                             TlsHello& h) {
  const TlsFit f = tls_fit(at, size, container_end, held);
  if (f == kTlsCrosses) h.reason = reason;
  return f == kTlsHeld;
}

// The server_name extension's data p[begin..end) (held up to `held`):
// the first host_name into h. false with h.reason set when a length crosses
// its container; false without a reason when the frame ends first.
GNIO_HD inline bool tls_server_name(const uint8_t* p, uint32_t begin, uint32_t end, uint32_t held, TlsHello& h) {
  const TlsFit list = tls_fit(begin, 2, end, held);
  if (list != kTlsHeld) {
    if (list == kTlsCrosses) h.reason = kTlsServerNameLength;
    return false;
  }
  const uint32_t list_end = begin + 2 + load_be16(p + begin);
  if (list_end == begin + 2 || list_end != end) {  // server_name_list<1..2^16-1> is all the extension holds
    h.reason = kTlsServerNameLength;
    return false;
  }
  // Each entry takes at least 3 bytes: at most 2^16 / 3 turns.
  for (uint32_t i = begin + 2; i < list_end;) {
    const TlsFit head = tls_fit(i, 3, list_end, held);
    if (head != kTlsHeld) {
      if (head == kTlsCrosses) h.reason = kTlsServerNameLength;
      return false;
    }
    const uint32_t type = p[i], len = load_be16(p + i + 1);
    const TlsFit name = tls_fit(i + 3, len, list_end, held);
    if (name == kTlsCrosses || (type == 0 && len == 0)) {  // HostName<1..2^16-1>
      h.reason = kTlsServerNameLength;
      return false;
    }
    if (name == kTlsLater) return false;
    if (type == 0 && !h.named) {
      h.named = true;
      h.sni_begin = i + 3;
      h.sni_end = i + 3 + len;
    }
    i += 3 + len;
  }
  return true;
}

}  // namespace detail

/// @brief The ClientHello of the TLS record at p[off..end) (the start of a TCP payload): whether it is
/// one, why its lengths contradict themselves, and the bounds of its server name.
GNIO_HD inline TlsHello tls_client_hello(const uint8_t* p, uint32_t off, uint32_t end) {
  using detail::kTlsCrosses;
  using detail::tls_fit;
  using detail::tls_fits;
  TlsHello h;
  // Record header (type 22, version 3.x, length), handshake header (type 1, 24-bit length).
  if (off + 9 > end || p[off] != 22 || p[off + 1] != 3 || p[off + 5] != 1) return h;
  const uint32_t record = load_be16(p + off + 3);
  if (record < 4) return h;  // the handshake header is not all in this record
  h.hello = true;
  if (record > kTlsRecordMax) {
    h.reason = kTlsRecordLength;
    return h;
  }
  const uint32_t body = off + 9;
  const uint32_t body_end = body + ((static_cast<uint32_t>(p[off + 6]) << 16) | load_be16(p + off + 7));
  // The message's bytes here: up to the record's end, the message's or the segment's.
  uint32_t held = off + 5 + record;
  if (held > body_end) held = body_end;
  if (held > end) held = end;
  // A field that crosses its container sets the reason; one that the frame ends in stops the walk
  // quietly. First client_version, random and legacy_session_id's length.
  if (!tls_fits(body, 2 + 32 + 1, body_end, held, kTlsHandshakeLength, h)) return h;
  uint32_t i = body + 2 + 32;
  const uint32_t session_id = p[i];
  if (session_id > kTlsSessionIdMax) {
    h.reason = kTlsSessionIdLength;
    return h;
  }
  if (!tls_fits(i + 1, session_id, body_end, held, kTlsSessionIdLength, h)) return h;
  i += 1 + session_id;
  if (!tls_fits(i, 2, body_end, held, kTlsCipherSuitesLength, h)) return h;
  const uint32_t suites = load_be16(p + i);
  if (suites == 0 || suites % 2 != 0) {  // CipherSuite cipher_suites<2..2^16-2>, two bytes each
    h.reason = kTlsCipherSuitesLength;
    return h;
  }
  if (!tls_fits(i + 2, suites, body_end, held, kTlsCipherSuitesLength, h)) return h;
  i += 2 + suites;
  if (!tls_fits(i, 1, body_end, held, kTlsCompressionLength, h)) return h;
  const uint32_t methods = p[i];
  if (methods == 0) {  // compression_methods<1..2^8-1>
    h.reason = kTlsCompressionLength;
    return h;
  }
  if (!tls_fits(i + 1, methods, body_end, held, kTlsCompressionLength, h)) return h;
  i += 1 + methods;
  if (i == body_end) return h;  // no extensions (TLS 1.2 allows it)
  if (!tls_fits(i, 2, body_end, held, kTlsExtensionsLength, h)) return h;
  const uint32_t ext_end = i + 2 + load_be16(p + i);
  if (ext_end > body_end) {
    h.reason = kTlsExtensionsLength;
    return h;
  }
  // Each extension takes at least 4 bytes: at most 2^14 turns.
  for (i += 2; i < ext_end;) {
    if (!tls_fits(i, 4, ext_end, held, kTlsExtensionLength, h)) return h;
    const uint32_t type = load_be16(p + i), len = load_be16(p + i + 2);
    const uint32_t data = i + 4;
    if (tls_fit(data, len, ext_end, held) == kTlsCrosses) {
      h.reason = kTlsExtensionLength;
      return h;
    }
    if (type == 0 && !h.named && !detail::tls_server_name(p, data, data + len, held, h)) return h;
    i = data + len;
  }
  if (ext_end < body_end) h.reason = kTlsHandshakeLength;  // the extensions are the ClientHello's last field
  return h;
}

/// @brief The record field of the ClientHello at p[off..end) that tls_client_hello() found named: its
/// server name (SNI).
GNIO_HD inline void tls_fields(const uint8_t* p, uint32_t off, uint32_t end, Record& r) {
  const TlsHello hello = tls_client_hello(p, off, end);
  r.name_len = static_cast<uint16_t>(detail::copy_text(r.name, kNameMax, p, hello.sni_begin, hello.sni_end));
}

}  // namespace gnio::dev::app
