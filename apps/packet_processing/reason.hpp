// SPDX-License-Identifier: Apache-2.0
// Why the packet-processing application counts a frame as malformed or cut:
// shared by the L2-L4 checks of analyze.hpp, the tunnel parsers and the DNS
// and TLS parsers.
#pragma once

#include <cstdint>

namespace gnio::dev::app {

/// @brief Why a frame is malformed (its bytes contradict themselves) or cut
/// (the capture kept fewer bytes than its headers claim). The first problem
/// found, from L2 up, is the one counted.
enum Reason : uint32_t {
  kReasonNone,
  kFrameShort,
  kVlanCut,
  kArpCut,
  kIpv4HeaderCut,
  kIpv4BadVersion,
  kIpv4BadIhl,
  kIpv4BadTotalLength,
  kIpv6HeaderCut,
  kIpv6BadVersion,
  kIpv6ExtCut,
  kIpv6ExtOverflow,
  kTcpHeaderCut,
  kTcpBadOffset,
  kTcpHeaderOverflow,
  kTcpOptionLength,
  kUdpHeaderCut,
  kUdpLengthOverPayload,
  kUdpLengthUnderHeader,
  kIcmpHeaderCut,
  kIcmpShort,
  kDatagramCut,
  kDnsHeaderCut,        // the message is shorter than its 12-byte header
  kDnsNameOverflow,     // a label of a name, or a question's type and class, runs past the message
  kDnsNameTooLong,      // a name's wire form is over 255 octets (RFC 1035 §3.1)
  kDnsLabelType,        // a label of the reserved types 0x40 / 0x80 (RFC 6891 §5)
  kDnsBadPointer,       // a compression pointer not back to an earlier name (RFC 1035 §4.1.4)
  kDnsCountOverflow,    // the header counts more questions or records than the message holds
  kDnsRecordOverflow,   // a resource record's fixed fields or RDATA run past the message
  kDnsOptionLength,     // an EDNS option runs past its OPT record's RDATA (RFC 6891 §6.1.2)
  kTlsRecordLength,     // a handshake record over 2^14 bytes (RFC 8446 §5.1)
  kTlsHandshakeLength,  // a ClientHello too short for its fixed fields, or longer than they are
  kTlsSessionIdLength,  // a session id over 32 bytes or past the ClientHello
  kTlsCipherSuitesLength,  // no cipher suite, an odd length, or past the ClientHello
  kTlsCompressionLength,   // no compression method, or past the ClientHello
  kTlsExtensionsLength,    // the extensions block runs past the ClientHello
  kTlsExtensionLength,     // an extension runs past the extensions block
  kTlsServerNameLength,    // server_name's list or a name runs past or short of its container, or is empty
  // Tunnel headers (tunnel_*.hpp); the packet inside one is checked by the reasons above.
  kMplsStackCut,        // the frame ends before the label with the bottom-of-stack bit
  kMplsStackTooDeep,    // no bottom of stack within kMplsMaxLabels labels
  kGreHeaderCut,        // the datagram ends inside the GRE header or its checksum, key or sequence fields
  kGreBadVersion,       // a GRE version other than 0 (RFC 2784) and 1 (PPTP, RFC 2637)
  kGreBadFlags,         // routing present, strict source route or recursion set (RFC 2784 §2.3)
  kVxlanHeaderCut,      // the UDP payload is shorter than the 8-byte VXLAN header
  kVxlanBadFlags,       // the I flag (a valid VNI) is clear (RFC 7348 §5)
  kGeneveHeaderCut,     // the UDP payload is shorter than the GENEVE header and its options
  kGeneveBadVersion,    // a GENEVE version other than 0 (RFC 8926 §3.4)
  kGtpuHeaderCut,       // the UDP payload is shorter than the GTP-U header or its optional fields
  kGtpuBadVersion,      // not GTPv1 (version 1, protocol type 1; 3GPP TS 29.281 §5.1)
  kGtpuBadLength,       // the length field claims more than the UDP payload holds, or less than the optional fields
  kGtpuExtLength,       // an extension header of length 0 or past the message, or too many of them
  kReasonCount,
};

/// @brief The names of Reason, as the report, the summary and /metrics show them.
inline constexpr const char* kReasonNames[] = {
    "none",           "frame_short",         "vlan_cut",           "arp_cut",
    "ipv4_header_cut", "ipv4_bad_version",   "ipv4_bad_ihl",       "ipv4_bad_total_length",
    "ipv6_header_cut", "ipv6_bad_version",   "ipv6_ext_cut",       "ipv6_ext_overflow",
    "tcp_header_cut",  "tcp_bad_offset",     "tcp_header_overflow", "tcp_option_length",
    "udp_header_cut",  "udp_length_over_payload", "udp_length_under_header", "icmp_header_cut",
    "icmp_short",      "datagram_cut",       "dns_header_cut",     "dns_name_overflow",
    "dns_name_too_long", "dns_label_type",   "dns_bad_pointer",    "dns_count_overflow",
    "dns_record_overflow", "dns_option_length", "tls_record_length", "tls_handshake_length",
    "tls_session_id_length", "tls_cipher_suites_length", "tls_compression_length", "tls_extensions_length",
    "tls_extension_length", "tls_server_name_length", "mpls_stack_cut", "mpls_stack_too_deep",
    "gre_header_cut",  "gre_bad_version",    "gre_bad_flags",      "vxlan_header_cut",
    "vxlan_bad_flags", "geneve_header_cut",  "geneve_bad_version", "gtpu_header_cut",
    "gtpu_bad_version", "gtpu_bad_length",   "gtpu_ext_length"};
static_assert(sizeof(kReasonNames) / sizeof(kReasonNames[0]) == kReasonCount, "a name for every Reason");

}  // namespace gnio::dev::app
