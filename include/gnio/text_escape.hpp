// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Bytes from the wire (a DNS name, an HTTP Host or path, a TLS SNI)
/// as text, by the one rule of every output gnio writes: the JSON report,
/// --print, the flow export, /metrics label values, and the user's own text
/// (a spec's file name) in the JSON of caps, doctor and diagnose. Public so
/// that applications and exporters built on gnio write names the same way.
///
/// The rule, in the manner of tshark and Suricata:
/// - printable ASCII (0x20..0x7e) is kept, except `\`, written `\\`;
/// - a well-formed UTF-8 sequence of 2 to 4 bytes (shortest form, no
///   surrogate, at most U+10FFFF) is kept, unless it encodes a C1 control
///   (U+0080..U+009F);
/// - every other byte (0x00..0x1f, 0x7f, a byte of an invalid, overlong or
///   cut sequence, a C1 control's bytes) is written `\xNN`, two lowercase
///   hex digits.
///
/// The result is valid UTF-8 without control characters, and the bytes can
/// be read back from it (`\\` and `\xNN` are the only escapes).
#pragma once

#include <string>
#include <string_view>

namespace gnio {

/// @brief Wire bytes as printable UTF-8 text by the rule above; never throws
/// except std::bad_alloc.
/// @param bytes Any bytes.
/// @return The escaped text.
std::string escape_text(std::string_view bytes);

/// @brief The bytes escape_text() wrote `text` from: `\\` is a backslash,
/// `\xNN` (two hex digits, either case) the byte NN, everything else itself
/// (also a backslash that starts neither). unescape_text(escape_text(b)) == b
/// for any bytes b.
/// @param text Text written by escape_text(), or any text.
/// @return The bytes.
std::string unescape_text(std::string_view text);

}  // namespace gnio
