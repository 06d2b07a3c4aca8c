// SPDX-License-Identifier: Apache-2.0
// DNS (RFC 1035) for the packet-processing application, on the GPU: the
// names of a message and a walk over its sections that holds every length
// to its container: each label and compression pointer to the message, a
// name's wire form to 255 octets, the header's counts to the records the
// message holds, each RDATA to the message and each EDNS option to its
// RDATA. The RDATA of other types is not looked into. Where a message sits
// in a UDP datagram or a TCP segment (dns_in_payload) and the fields its
// record carries (dns_fields) are here too.
#pragma once

#include <cstdint>

#include "gnio/dev/config.hpp"
#include "gnio/dev/headers.hpp"
#include "packet_processing/reason.hpp"
#include "packet_processing/records.hpp"

namespace gnio::dev::app {

/// @brief Bytes of the DNS header, where the first question starts.
inline constexpr uint32_t kDnsHeaderBytes = 12;
/// @brief The longest name in wire form, length octets and the root's included (RFC 1035 §3.1).
inline constexpr uint32_t kDnsNameWireMax = 255;
/// @brief The OPT pseudo-record of EDNS (RFC 6891), whose RDATA is a list of options.
inline constexpr uint32_t kDnsTypeOpt = 41;

/// @brief Where a name read by dns_name() ends in its message, and whether it is valid.
struct DnsName {
  uint32_t next = 0;              ///< offset just past the name where it sits (past its first pointer)
  uint32_t reason = kReasonNone;  ///< kReasonNone, or why the name is refused
  uint32_t text_len = 0;          ///< bytes of text written, the terminating zero not counted
};

/// @brief Reads the name at msg[off] of the message msg[0..n): its labels' bytes as they are, joined by
/// '.' ("<Root>" for the root), into out as a zero-terminated string of at most cap bytes (cap 0: no
/// text, out unused); a name refused leaves out empty. A compression pointer must point past the header
/// and before the labels it ends (to a prior name): the walk ends because every hop lands lower than the
/// last, and a name holds at most 127 labels (kDnsNameWireMax).
GNIO_HD inline DnsName dns_name(const uint8_t* msg, uint32_t n, uint32_t off, char* out, uint32_t cap) {
  DnsName d;
  auto refuse = [&d, out, cap](uint32_t reason) {
    d.reason = reason;
    if (cap != 0) out[0] = 0;
    return d;
  };
  uint32_t text = 0, wire = 0;
  uint32_t run = off;  // where the labels being read begin: the next pointer must land before it
  for (uint32_t at = off;;) {
    if (at >= n) return refuse(kDnsNameOverflow);
    const uint32_t l = msg[at];
    if ((l & 0xC0) == 0xC0) {
      if (at + 2 > n) return refuse(kDnsNameOverflow);
      const uint32_t to = ((l & 0x3F) << 8) | msg[at + 1];
      if (to < kDnsHeaderBytes || to >= run) return refuse(kDnsBadPointer);
      if (d.next == 0) d.next = at + 2;
      at = run = to;
      continue;
    }
    if ((l & 0xC0) != 0) return refuse(kDnsLabelType);
    if (at + 1 + l > n) return refuse(kDnsNameOverflow);
    wire += 1 + l;
    // A label needs the root's octet after it.
    if (wire + (l != 0 ? 1 : 0) > kDnsNameWireMax) return refuse(kDnsNameTooLong);
    if (l == 0) {
      if (d.next == 0) d.next = at + 1;
      break;
    }
    if (text != 0 && text + 1 < cap) out[text++] = '.';
    for (uint32_t i = 0; i < l && text + 1 < cap; ++i) out[text++] = static_cast<char>(msg[at + 1 + i]);
    at += 1 + l;
  }
  if (text == 0) {
    const char* root = "<Root>";
    for (uint32_t i = 0; root[i] != 0 && text + 1 < cap; ++i) out[text++] = root[i];
  }
  if (cap != 0) out[text] = 0;
  d.text_len = text;
  return d;
}

/// @brief Whether the EDNS options in msg[begin..end) (an OPT record's RDATA) fill it exactly.
GNIO_HD inline bool dns_options_fit(const uint8_t* msg, uint32_t begin, uint32_t end) {
  for (uint32_t i = begin; i < end;) {
    if (end - i < 4) return false;
    const uint32_t len = load_be16(msg + i + 2);
    if (len > end - i - 4) return false;
    i += 4 + len;
  }
  return true;
}

/// @brief Checks the DNS message msg[0..n) of which the frame holds msg[0..held): kReasonNone, or the
/// first length that crosses its container. held < n is a message over TCP that goes on in later
/// segments: its header and first question must be held (the record needs them), what lies past the
/// frame is not checked. Bytes after the last record are not an error (RFC 1035 does not forbid them).
GNIO_HD inline uint32_t dns_message(const uint8_t* msg, uint32_t n, uint32_t held) {
  if (held < kDnsHeaderBytes) return kDnsHeaderCut;
  const bool goes_on = held < n;
  const uint32_t questions = load_be16(msg + 4);
  const uint32_t entries = questions + load_be16(msg + 6) + load_be16(msg + 8) + load_be16(msg + 10);
  uint32_t at = kDnsHeaderBytes;
  // Each entry takes at least 5 bytes (a question) or the walk stops: at most held / 5 turns.
  for (uint32_t k = 0; k < entries; ++k) {
    const bool question = k < questions;
    const bool unchecked = goes_on && k > 0;  // an entry that may go on past the frame
    if (at >= held) return unchecked ? kReasonNone : goes_on ? kDnsNameOverflow : kDnsCountOverflow;
    const DnsName name = dns_name(msg, held, at, nullptr, 0);
    if (name.reason != kReasonNone) return unchecked && name.reason == kDnsNameOverflow ? kReasonNone : name.reason;
    at = name.next;
    if (question) {
      if (at + 4 > held) return unchecked ? kReasonNone : kDnsNameOverflow;
      at += 4;
      continue;
    }
    if (at + 10 > held) return unchecked ? kReasonNone : kDnsRecordOverflow;
    const uint32_t type = load_be16(msg + at), rdata = at + 10, rdlength = load_be16(msg + at + 8);
    if (rdata + rdlength > held) return unchecked ? kReasonNone : kDnsRecordOverflow;
    if (type == kDnsTypeOpt && !dns_options_fit(msg, rdata, rdata + rdlength)) return kDnsOptionLength;
    at = rdata + rdlength;
  }
  return kReasonNone;
}

/// @brief Finds the DNS message in the payload p[payload..end) of a UDP datagram or a TCP segment (over
/// TCP a two-byte length prefix gives the message's size: it may end before the segment, another message
/// following, or go on in later segments) and checks it with dns_message().
/// @return kReasonNone with the message's bytes in the frame at [msg, msg + held), or why it is refused.
GNIO_HD inline uint32_t dns_in_payload(const uint8_t* p, uint32_t payload, uint32_t end, bool tcp, uint32_t& msg,
                                       uint32_t& held) {
  msg = payload;
  uint32_t n = end - payload;
  if (tcp) {
    if (payload + 2 > end) return kDnsHeaderCut;
    msg = payload + 2;
    n = load_be16(p + payload);
  }
  held = n < end - msg ? n : end - msg;
  return dns_message(p + msg, n, held);
}

/// @brief The DNS fields of the message m[0..held) that dns_message() accepted into r: id, response flag,
/// rcode, and the first question's name and type.
GNIO_HD inline void dns_fields(const uint8_t* m, uint32_t held, Record& r) {
  r.dns_id = load_be16(m);
  const uint16_t flags = load_be16(m + 2);
  r.response = static_cast<uint8_t>(flags >> 15);
  r.rcode = static_cast<uint8_t>(flags & 0x0F);
  r.qtype = 0;
  r.name[0] = 0;
  r.name_len = 0;
  if (load_be16(m + 4) == 0) return;  // no question
  const DnsName name = dns_name(m, held, kDnsHeaderBytes, r.name, kNameMax);
  r.name_len = static_cast<uint16_t>(name.text_len);
  if (name.reason == kReasonNone && name.next + 2 <= held) r.qtype = load_be16(m + name.next);
}

}  // namespace gnio::dev::app
