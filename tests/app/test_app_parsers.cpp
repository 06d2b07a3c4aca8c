// SPDX-License-Identifier: Apache-2.0
// The DNS, HTTP and TLS parsers of the packet-processing application
// (apps/packet_processing/dns.hpp, http.hpp, tls.hpp) through analyze() and fill_record(),
// as the kernel runs them on each frame: valid frames parse clean with
// their names; every length field of each record, cut and lengthened by
// one, gives the reason its container's bound calls for or, where the
// result is still legal, the record then read; the limits of a DNS name
// (255 octets, RFC 1035 §3.1) and of a TLS record (2^14 bytes, RFC 8446
// §5.1); HTTP read up to the segment's end and only in its header block.
//
// A count, length or label shifted by one makes what follows it read at
// the wrong offset: the reason is then the first length that the bytes met
// there contradict, which the comment of each such row names. A length of
// 0 cut by one is 0xffff.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "app_frames.hpp"

namespace {

using namespace gnio::test;
using namespace gnio::dev::app;

/// What a frame with one length changed gives: a reason or, with kReasonNone, the record's name.
struct Outcome {
  uint32_t reason;
  const char* name = "";
};

/// The outcomes of a length field cut by one and lengthened by one.
struct LengthRow {
  const char* field;
  Outcome shorter, longer;
};

std::string reason_name(uint32_t reason) { return reason < kReasonCount ? kReasonNames[reason] : "?"; }

// Cuts and lengthens every length field of the frame by one and checks each against its row of the
// table: every field has a row and every row a field.
void expect_rows(const Frame& frame, const std::vector<LengthRow>& table) {
  ASSERT_EQ(analyze_frame(frame.bytes).reason, kReasonNone);
  ASSERT_EQ(frame.lengths.size(), table.size()) << "one row for each length field";
  for (const LengthField& f : frame.lengths) {
    const auto row = std::find_if(table.begin(), table.end(), [&](const LengthRow& r) { return f.name == r.field; });
    ASSERT_NE(row, table.end()) << "no row for " << f.name;
    for (const int delta : {-1, 1}) {
      const Outcome& want = delta < 0 ? row->shorter : row->longer;
      const Verdict got = analyze_frame(with_length(frame, f, delta));
      const std::string what = f.name + (delta < 0 ? " - 1" : " + 1");
      EXPECT_EQ(reason_name(got.reason), reason_name(want.reason)) << what;
      if (want.reason == kReasonNone) {
        EXPECT_NE(got.record, kRecordNone) << what;
        EXPECT_EQ(got.name, want.name) << what;
      } else {
        EXPECT_EQ(got.record, kRecordNone) << what << ": a malformed record is not handed to the host";
      }
    }
  }
}

constexpr const char* kName = "www.example.com";

TEST(AppParsers, ValidFramesParseCleanWithTheirNames) {
  const Verdict response = analyze_frame(dns_response_frame(1000).bytes);
  EXPECT_EQ(reason_name(response.reason), "none");
  EXPECT_EQ(response.record, kRecordDns);
  EXPECT_EQ(response.name, kName);
  EXPECT_EQ(response.qtype, 1);
  EXPECT_TRUE(response.response);
  const Verdict query = analyze_frame(dns_query_frame(1001).bytes);
  EXPECT_EQ(reason_name(query.reason), "none");
  EXPECT_EQ(query.record, kRecordDns);
  EXPECT_EQ(query.name, kName);
  EXPECT_FALSE(query.response);
  const Verdict http = analyze_frame(http_frame(1002).bytes);
  EXPECT_EQ(reason_name(http.reason), "none");
  EXPECT_EQ(http.record, kRecordHttp);
  EXPECT_EQ(http.method, "GET");
  EXPECT_EQ(http.path, "/index.html");
  EXPECT_EQ(http.name, kName);
  for (const bool others : {true, false}) {
    const Verdict tls = analyze_frame(tls_frame(1003, others).bytes);
    EXPECT_EQ(reason_name(tls.reason), "none");
    EXPECT_EQ(tls.record, kRecordTls);
    EXPECT_EQ(tls.name, "tls.example.com");
  }
}

// Message offsets: header 0-11, question 12-32 (labels 12, 16, 24), answer
// 33-48 (TTL 0x00000e10 at 39, RDLENGTH at 43, address 45-48), OPT record
// 49-71 (class 0x04d0 at 52, RDLENGTH at 58, option 60-71); 72 bytes.
TEST(AppParsers, DnsResponseLengthsCutAndLengthened) {
  expect_rows(
      dns_response_frame(1010),
      {
          // The UDP length then exceeds the datagram / the datagram the frame.
          {"ip total length", {kUdpLengthOverPayload}, {kDatagramCut}},
          // The message ends a byte early, inside the OPT record's option.
          {"udp length", {kDnsRecordOverflow}, {kUdpLengthOverPayload}},
          // No question: the question and the answer read as two records,
          // of type 1 (RDLENGTH 1: the answer's class) and 0x0e10 (RDLENGTH
          // 0), whose RDATA is not looked into, the OPT record left over:
          // legal, without a name. Two: the answer reads as the second
          // question (its pointer is valid), the record read at 39 has
          // RDLENGTH 0x2200.
          {"qdcount", {kReasonNone, ""}, {kDnsRecordOverflow}},
          // One record fewer: the OPT record is left over after the last,
          // which RFC 1035 does not forbid. One more: none is there.
          {"ancount", {kReasonNone, kName}, {kDnsCountOverflow}},
          {"nscount", {kDnsCountOverflow}, {kDnsCountOverflow}},
          {"arcount", {kReasonNone, kName}, {kDnsCountOverflow}},
          // The next length octet read is a letter (0x61-0x7a): the
          // reserved label type 0x40.
          {"label www", {kDnsLabelType}, {kDnsLabelType}},
          {"label example", {kDnsLabelType}, {kDnsLabelType}},
          // "com" + 1 takes the root octet: the name ends at the type's
          // 0x00, the answer then reads from 34, and 0xd8 0x22 of the
          // address is a pointer forward.
          {"label com", {kDnsLabelType}, {kDnsBadPointer}},
          // An address of 3 bytes: its last, 0x22, reads as a label of 34
          // octets. Of 5: the OPT record reads from 50, its RDLENGTH 0x0c00.
          {"answer rdlength", {kDnsNameOverflow}, {kDnsRecordOverflow}},
          // The option no longer fits the RDATA / the RDATA the message.
          {"opt rdlength", {kDnsOptionLength}, {kDnsRecordOverflow}},
          // The option leaves a byte of the RDATA, too short for an option
          // header, or ends past it.
          {"option length", {kDnsOptionLength}, {kDnsOptionLength}},
      });
}

// Message offsets (after the 2-byte length): header 0-11, question 12-32,
// OPT record 33-55 (class 0x04d0 at 36, RDLENGTH at 42, option 44-55).
TEST(AppParsers, DnsQueryOverTcpLengthsCutAndLengthened) {
  expect_rows(
      dns_query_frame(1020),
      {
          // One byte less in the segment: the message goes on in the next
          // one, its first question whole. One more: past the frame.
          {"ip total length", {kReasonNone, kName}, {kDatagramCut}},
          // A message one byte shorter ends inside the OPT record; one byte
          // longer goes on in the next segment.
          {"dns tcp length", {kDnsRecordOverflow}, {kReasonNone, kName}},
          // No question: the question reads as a record whose RDLENGTH is
          // 0xd000 (the OPT's class and TTL). Two: the OPT record reads as
          // the second question, then a record at 38 with RDLENGTH 0x0801.
          {"qdcount", {kDnsRecordOverflow}, {kDnsRecordOverflow}},
          {"ancount", {kDnsCountOverflow}, {kDnsCountOverflow}},
          {"nscount", {kDnsCountOverflow}, {kDnsCountOverflow}},
          {"arcount", {kReasonNone, kName}, {kDnsCountOverflow}},
          {"label www", {kDnsLabelType}, {kDnsLabelType}},
          {"label example", {kDnsLabelType}, {kDnsLabelType}},
          // "com" + 1: the name ends at the type's 0x00, the question at
          // 34, and the record read from there has RDLENGTH 0x0c00.
          {"label com", {kDnsLabelType}, {kDnsRecordOverflow}},
          {"opt rdlength", {kDnsOptionLength}, {kDnsRecordOverflow}},
          {"option length", {kDnsOptionLength}, {kDnsOptionLength}},
      });
}

// Payload offsets: record header 0-4, handshake header 5-8, version and
// random 9-42, session id 43-75, cipher suites 76-81, compression 82-83,
// extensions 84-121: session_ticket 86-93, server_name 94-117 (list 98-117,
// host name 103-117), extended_master_secret 118-121.
TEST(AppParsers, TlsClientHelloLengthsCutAndLengthened) {
  const char* sni = "tls.example.com";
  expect_rows(
      tls_frame(1030),
      {
          // One byte less in the segment: the record goes on in the next
          // one, the server name is whole.
          {"ip total length", {kReasonNone, sni}, {kDatagramCut}},
          // The handshake message goes on in the next record (RFC 8446
          // §5.1 lets it), or the record in the next segment.
          {"tls record length", {kReasonNone, sni}, {kReasonNone, sni}},
          // The extensions block then ends past the message, or before it
          // (the extensions are its last field).
          {"tls handshake length", {kTlsExtensionsLength}, {kTlsHandshakeLength}},
          // 31: the cipher suites' length reads as 0x2200. 33: over 32.
          {"tls session id length", {kTlsCipherSuitesLength}, {kTlsSessionIdLength}},
          // An odd length either way.
          {"tls cipher suites length", {kTlsCipherSuitesLength}, {kTlsCipherSuitesLength}},
          // None; or two, and the extensions' length reads as 0x2400.
          {"tls compression length", {kTlsCompressionLength}, {kTlsExtensionsLength}},
          // The last extension then crosses the block, or the block the message.
          {"tls extensions length", {kTlsExtensionLength}, {kTlsExtensionsLength}},
          // The next extension's header read a byte early: an empty one of
          // type 0xdd00, then one of length 0x1200; or a byte late: the
          // server_name type, length 0x1400.
          {"session_ticket length", {kTlsExtensionLength}, {kTlsExtensionLength}},
          // The server name list no longer fills the extension.
          {"server_name length", {kTlsServerNameLength}, {kTlsServerNameLength}},
          {"server_name list length", {kTlsServerNameLength}, {kTlsServerNameLength}},
          // A 2-byte entry header left / the name past the list.
          {"host_name length", {kTlsServerNameLength}, {kTlsServerNameLength}},
          // Empty: 0xffff crosses the block, as does 1.
          {"extended_master_secret length", {kTlsExtensionLength}, {kTlsExtensionLength}},
      });
}

// HTTP has no length before its body: the request is read up to its
// segment's end (the IP total length), lines up to their line feed.
TEST(AppParsers, HttpRequestIsReadOnlyUpToItsSegmentsEnd) {
  const Frame frame = http_frame(1040);
  const LengthField total = length_field(frame, "ip total length");
  const std::string request = kHttpRequestText;
  const std::string line = "GET /index.html HTTP/1.";          // what a request line needs
  const size_t host = request.find("www.example.com");         // where the Host value starts
  for (size_t k = 0; k <= request.size(); ++k) {
    // The frame keeps every byte: past the datagram's end they are padding.
    const Verdict v = analyze_frame(with_length(frame, total, static_cast<int>(k) - static_cast<int>(request.size())));
    const std::string what = "payload of " + std::to_string(k) + " bytes";
    EXPECT_EQ(reason_name(v.reason), "none") << what;
    if (k < line.size()) {
      EXPECT_EQ(v.record, kRecordNone) << what;
      continue;
    }
    ASSERT_EQ(v.record, kRecordHttp) << what;
    EXPECT_EQ(v.method, "GET") << what;
    EXPECT_EQ(v.path, "/index.html") << what;
    EXPECT_EQ(v.name, k <= host ? "" : std::string(kName).substr(0, k - host)) << what;
  }
  EXPECT_EQ(reason_name(analyze_frame(with_length(frame, total, 1)).reason), "datagram_cut");
}

TEST(AppParsers, HttpHostIsReadOnlyFromTheHeaderBlock) {
  // After the empty line comes the body: a Host line there is not a header.
  const Verdict body = analyze_frame(
      http_frame(1050, "POST /form HTTP/1.1\r\nContent-Length: 20\r\n\r\nHost: not.a.header\r\n").bytes);
  ASSERT_EQ(body.record, kRecordHttp);
  EXPECT_EQ(body.method, "POST");
  EXPECT_EQ(body.name, "");
  // Lines that end in a bare line feed, a header name of any case, its
  // value's whitespace trimmed.
  const Verdict lf = analyze_frame(http_frame(1051, "GET / HTTP/1.0\nAccept: */*\nhOST:\t lf.example \n\n").bytes);
  ASSERT_EQ(lf.record, kRecordHttp);
  EXPECT_EQ(lf.path, "/");
  EXPECT_EQ(lf.name, "lf.example");
  // A request line without its version is not a request.
  EXPECT_EQ(analyze_frame(http_frame(1052, "GET /index.html\r\nHost: x\r\n\r\n").bytes).record, kRecordNone);
}

std::string joined(const std::vector<std::string>& labels) {
  std::string name;
  for (const std::string& l : labels) name += (name.empty() ? "" : ".") + l;
  return name;
}

TEST(AppParsers, DnsNameOf255OctetsIsAcceptedAnd256Refused) {
  const std::vector<std::string> longest = labels_of_wire_length(255);
  ASSERT_EQ(longest.size(), 4u);
  const Verdict ok = analyze_frame(ip_frame(17, dns_named_response(1060, longest), 1060, 53).bytes);
  EXPECT_EQ(reason_name(ok.reason), "none");
  ASSERT_EQ(ok.record, kRecordDns);
  EXPECT_EQ(ok.name.size(), 253u) << "255 octets of wire form are 253 characters of text";
  EXPECT_EQ(ok.name, joined(longest));
  const Verdict over = analyze_frame(ip_frame(17, dns_named_response(1061, labels_of_wire_length(256)), 1061, 53).bytes);
  EXPECT_EQ(reason_name(over.reason), "dns_name_too_long");
  EXPECT_EQ(over.record, kRecordNone);
}

// An answer named "x" and a pointer to the question's name adds 2 octets
// to it: the limit holds the name the pointer completes.
TEST(AppParsers, DnsNameLimitCountsTheLabelsAPointerLeadsTo) {
  const Verdict ok =
      analyze_frame(ip_frame(17, dns_named_response(1070, labels_of_wire_length(253), "x"), 1070, 53).bytes);
  EXPECT_EQ(reason_name(ok.reason), "none");
  EXPECT_EQ(ok.name, joined(labels_of_wire_length(253)));
  const Verdict over =
      analyze_frame(ip_frame(17, dns_named_response(1071, labels_of_wire_length(254), "x"), 1071, 53).bytes);
  EXPECT_EQ(reason_name(over.reason), "dns_name_too_long");
}

// A name refused after some of its labels were read leaves an empty string,
// not the labels' text unterminated.
TEST(AppParsers, DnsNameRefusedLeavesItsTextEmpty) {
  MessageWriter m;
  for (int i = 0; i < 12; ++i) m.u8(0);
  m.dns_name({"www", "example"});
  Bytes message = m.bytes();
  message.back() = 0x40;  // the root's octet made a label of the reserved type 0x40
  char text[kNameMax];
  std::fill(std::begin(text), std::end(text), '?');
  const DnsName name = dns_name(message.data(), static_cast<uint32_t>(message.size()), kDnsHeaderBytes, text, kNameMax);
  EXPECT_EQ(reason_name(name.reason), "dns_label_type");
  EXPECT_EQ(name.text_len, 0u);
  EXPECT_EQ(text[0], 0);
}

// The server_name extension, last in the block, one byte longer than the
// block leaves it: its name's bytes are all in the frame, yet it crosses
// its container.
TEST(AppParsers, TlsExtensionCrossingTheExtensionsBlockIsRefused) {
  const Frame frame = tls_frame(1080, false);
  const Verdict v = analyze_frame(with_length(frame, length_field(frame, "server_name length"), 1));
  EXPECT_EQ(reason_name(v.reason), "tls_extension_length");
  EXPECT_EQ(v.record, kRecordNone);
  EXPECT_EQ(v.name, "");
}

TEST(AppParsers, TlsRecordOver16KiBIsRefused) {
  const Frame frame = tls_frame(1090);
  const LengthField record = length_field(frame, "tls record length");
  const int held = static_cast<int>(frame.bytes.size() - record.at - 2);
  // 2^14 bytes: the record goes on in later segments; the ClientHello in it is whole.
  const Verdict largest = analyze_frame(with_length(frame, record, (1 << 14) - held));
  EXPECT_EQ(reason_name(largest.reason), "none");
  EXPECT_EQ(largest.name, "tls.example.com");
  EXPECT_EQ(reason_name(analyze_frame(with_length(frame, record, (1 << 14) + 1 - held)).reason), "tls_record_length");
}

}  // namespace
