// SPDX-License-Identifier: Apache-2.0
// Frames for the application parsers' tests: DNS, HTTP and TLS messages
// in Ethernet, IPv4 and UDP or TCP, built byte by byte with every length
// field they hold named and located, so that a test can cut or lengthen
// each one; the analyzer's verdict on a frame; a pcap writer for tshark.
#pragma once

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "packet_processing/analyze.hpp"

namespace gnio::test {

using Bytes = std::vector<uint8_t>;

/// @brief A length field of a frame: its name in the tests, where it is and how many bytes wide.
struct LengthField {
  std::string name;
  uint32_t at = 0;
  uint32_t width = 0;
};

/// @brief A frame and the length fields it holds, from the IP header up.
struct Frame {
  Bytes bytes;
  std::vector<LengthField> lengths;
};

/// @brief Appends big-endian fields to a message and records its length fields, of which a length that
/// covers what follows it is written once that is appended (open() then close()).
class MessageWriter {
 public:
  void u8(uint32_t v) { bytes_.push_back(static_cast<uint8_t>(v)); }
  void u16(uint32_t v) {
    u8(v >> 8);
    u8(v);
  }
  void raw(const std::string& s) { bytes_.insert(bytes_.end(), s.begin(), s.end()); }
  /// @brief A length field of `width` bytes holding v.
  void length(const std::string& name, uint32_t width, uint32_t v) {
    lengths_.push_back({name, static_cast<uint32_t>(bytes_.size()), width});
    for (uint32_t i = width; i-- > 0;) u8(v >> (8 * i));
  }
  /// @brief A length field of `width` bytes for what is appended until close() with the index returned.
  size_t open(const std::string& name, uint32_t width) {
    length(name, width, 0);
    return lengths_.size() - 1;
  }
  void close(size_t field) {
    const LengthField& f = lengths_[field];
    const uint32_t v = static_cast<uint32_t>(bytes_.size()) - f.at - f.width;
    for (uint32_t i = 0; i < f.width; ++i) bytes_[f.at + i] = static_cast<uint8_t>(v >> (8 * (f.width - 1 - i)));
  }
  /// @brief A DNS name of the given labels, each label's length a field named "label <text>".
  void dns_name(const std::vector<std::string>& labels) {
    for (const std::string& l : labels) {
      length("label " + l.substr(0, 8), 1, static_cast<uint32_t>(l.size()));
      raw(l);
    }
    u8(0);
  }
  const Bytes& bytes() const { return bytes_; }
  const std::vector<LengthField>& lengths() const { return lengths_; }

 private:
  Bytes bytes_;
  std::vector<LengthField> lengths_;
};

namespace detail {

inline void put16(Bytes& b, size_t at, uint32_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}

// The Internet checksum (RFC 1071) of b[from..to) on top of `sum`.
inline uint16_t internet_checksum(const Bytes& b, size_t from, size_t to, uint32_t sum = 0) {
  for (size_t i = from; i < to; i += 2) sum += static_cast<uint32_t>(b[i] << 8) | (i + 1 < to ? b[i + 1] : 0u);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

constexpr size_t kIpAt = 14, kL4At = kIpAt + 20;

}  // namespace detail

/// @brief 10.0.0.1:sport -> 10.0.0.2:dport over UDP (proto 17) or TCP (6, one segment with PSH|ACK and
/// sequence number seq) around the message m, checksums complete; its lengths those of m and the IP
/// total length (and the UDP length).
inline Frame ip_frame(uint8_t proto, const MessageWriter& m, uint16_t sport, uint16_t dport, uint32_t seq = 1) {
  using detail::put16;
  const size_t l4_header = proto == 17 ? 8 : 20;
  const size_t payload = detail::kL4At + l4_header;
  Frame f;
  Bytes& b = f.bytes;
  b = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00};
  b.resize(payload);
  b.insert(b.end(), m.bytes().begin(), m.bytes().end());
  const uint32_t l4_len = static_cast<uint32_t>(b.size() - detail::kL4At);
  uint8_t* ip = &b[detail::kIpAt];
  ip[0] = 0x45;
  put16(b, detail::kIpAt + 2, 20 + l4_len);
  ip[8] = 64;
  ip[9] = proto;
  const uint8_t addrs[8] = {10, 0, 0, 1, 10, 0, 0, 2};
  for (int i = 0; i < 8; ++i) ip[12 + i] = addrs[i];
  put16(b, detail::kIpAt + 10, detail::internet_checksum(b, detail::kIpAt, detail::kL4At));
  put16(b, detail::kL4At, sport);
  put16(b, detail::kL4At + 2, dport);
  if (proto == 17) {
    put16(b, detail::kL4At + 4, l4_len);
  } else {
    for (int i = 0; i < 4; ++i) b[detail::kL4At + 4 + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
    b[detail::kL4At + 12] = 0x50;
    b[detail::kL4At + 13] = 0x18;
    put16(b, detail::kL4At + 14, 65535);
  }
  const uint32_t pseudo = (10u << 8) + 1 + (10u << 8) + 2 + proto + l4_len;
  const uint16_t sum = detail::internet_checksum(b, detail::kL4At, b.size(), pseudo);
  put16(b, detail::kL4At + (proto == 17 ? 6 : 16), proto == 17 && sum == 0 ? 0xFFFF : sum);
  f.lengths.push_back({"ip total length", static_cast<uint32_t>(detail::kIpAt + 2), 2});
  if (proto == 17) f.lengths.push_back({"udp length", static_cast<uint32_t>(detail::kL4At + 4), 2});
  for (const LengthField& l : m.lengths())
    f.lengths.push_back({l.name, static_cast<uint32_t>(payload + l.at), l.width});
  return f;
}

/// @brief The DNS message of id `id` asking for www.example.com (type A), with an EDNS OPT record (RFC
/// 6891) that holds a client COOKIE option (RFC 7873); as a response, with an A record for the name,
/// a compression pointer to the question's. Over TCP it starts with its two-byte length.
inline MessageWriter dns_message(uint16_t id, bool response, bool tcp) {
  MessageWriter m;
  const size_t prefix = tcp ? m.open("dns tcp length", 2) : 0;
  m.u16(id);
  m.u16(response ? 0x8180 : 0x0100);
  m.length("qdcount", 2, 1);
  m.length("ancount", 2, response ? 1 : 0);
  m.length("nscount", 2, 0);
  m.length("arcount", 2, 1);
  const uint32_t question = static_cast<uint32_t>(m.bytes().size()) - (tcp ? 2 : 0);
  m.dns_name({"www", "example", "com"});
  m.u16(1);  // A
  m.u16(1);  // IN
  if (response) {
    m.u16(0xC000 | question);
    m.u16(1);
    m.u16(1);
    m.u16(0);
    m.u16(3600);  // TTL
    m.length("answer rdlength", 2, 4);
    m.raw("\x5d\xb8\xd8\x22");  // 93.184.216.34
  }
  m.u8(0);        // the root
  m.u16(41);      // OPT
  m.u16(1232);    // the requester's UDP payload size
  m.u16(0);       // extended rcode, version, DO bit, Z
  m.u16(0);
  const size_t rdata = m.open("opt rdlength", 2);
  m.u16(10);  // COOKIE
  const size_t option = m.open("option length", 2);
  m.raw("\x01\x23\x45\x67\x89\xab\xcd\xef");  // the client cookie
  m.close(option);
  m.close(rdata);
  if (tcp) m.close(prefix);
  return m;
}

/// @brief The labels of a name of `octets` octets in wire form (at least 3), the root's included:
/// labels of 63 letters, the last ones shorter.
inline std::vector<std::string> labels_of_wire_length(uint32_t octets) {
  std::vector<std::string> labels;
  for (uint32_t left = octets - 1; left > 0;) {
    // A label of n letters takes n + 1 octets; none may be left a single octet (an empty label).
    const uint32_t letters = left > 65 ? 63 : left == 65 ? 62 : left - 1;
    labels.push_back(std::string(letters, static_cast<char>('a' + labels.size())));
    left -= letters + 1;
  }
  return labels;
}

/// @brief A DNS response of id `id` whose question asks for the name of the given labels (type A);
/// with answer_label, it has an A record named answer_label followed by a pointer to the question's
/// name.
inline MessageWriter dns_named_response(uint16_t id, const std::vector<std::string>& labels,
                                        const std::string& answer_label = "") {
  MessageWriter m;
  m.u16(id);
  m.u16(0x8180);
  m.length("qdcount", 2, 1);
  m.length("ancount", 2, answer_label.empty() ? 0 : 1);
  m.length("nscount", 2, 0);
  m.length("arcount", 2, 0);
  m.dns_name(labels);
  m.u16(1);
  m.u16(1);
  if (!answer_label.empty()) {
    m.length("answer label", 1, static_cast<uint32_t>(answer_label.size()));
    m.raw(answer_label);
    m.u16(0xC000 | 12);
    m.u16(1);
    m.u16(1);
    m.u16(0);
    m.u16(60);
    m.length("answer rdlength", 2, 4);
    m.raw(std::string("\x0a\x00\x00\x07", 4));
  }
  return m;
}

/// @brief A TLS 1.3 ClientHello (RFC 8446 §4.1.2) in one record with a server_name extension naming
/// sni; with others, between a session_ticket extension with four opaque bytes and an empty
/// extended_master_secret, else as its only extension.
inline MessageWriter tls_client_hello(const std::string& sni, bool others = true) {
  MessageWriter m;
  m.u8(22);  // handshake
  m.u16(0x0301);
  const size_t record = m.open("tls record length", 2);
  m.u8(1);  // client_hello
  const size_t handshake = m.open("tls handshake length", 3);
  m.u16(0x0303);
  m.raw(std::string(32, '\x11'));  // random
  m.length("tls session id length", 1, 32);
  m.raw(std::string(32, '\x22'));
  m.length("tls cipher suites length", 2, 4);
  m.u16(0x1301);  // TLS_AES_128_GCM_SHA256
  m.u16(0xC02F);  // TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
  m.length("tls compression length", 1, 1);
  m.u8(0);
  const size_t extensions = m.open("tls extensions length", 2);
  if (others) {
    m.u16(35);  // session_ticket
    m.length("session_ticket length", 2, 4);
    m.raw("\xaa\xbb\xcc\xdd");
  }
  m.u16(0);  // server_name
  const size_t server_name = m.open("server_name length", 2);
  const size_t list = m.open("server_name list length", 2);
  m.u8(0);  // host_name
  m.length("host_name length", 2, static_cast<uint32_t>(sni.size()));
  m.raw(sni);
  m.close(list);
  m.close(server_name);
  if (others) {
    m.u16(23);  // extended_master_secret
    m.length("extended_master_secret length", 2, 0);
  }
  m.close(extensions);
  m.close(handshake);
  m.close(record);
  return m;
}

/// @brief The HTTP/1.1 request of the tests: its Host header between the request line and another.
inline constexpr const char* kHttpRequestText =
    "GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: gnio-test\r\n\r\n";

/// @brief The frames the length tests start from, each from its own source port (and DNS id): a DNS
/// response over UDP, a DNS query over TCP, a ClientHello naming tls.example.com, an HTTP request.
inline Frame dns_response_frame(uint16_t sport) { return ip_frame(17, dns_message(sport, true, false), sport, 53); }
inline Frame dns_query_frame(uint16_t sport) { return ip_frame(6, dns_message(sport, false, true), sport, 53); }
inline Frame tls_frame(uint16_t sport, bool others = true) {
  return ip_frame(6, tls_client_hello("tls.example.com", others), sport, 443);
}
inline Frame http_frame(uint16_t sport, const std::string& request = kHttpRequestText) {
  MessageWriter m;
  m.raw(request);
  return ip_frame(6, m, sport, 80);
}

/// @brief The length field of the frame with the given name (the frame must have one).
inline const LengthField& length_field(const Frame& frame, const std::string& name) {
  for (const LengthField& f : frame.lengths)
    if (f.name == name) return f;
  throw std::out_of_range("no length field " + name);
}

/// @brief The frame with the length field f changed by delta (modulo its width), checksums unchanged.
inline Bytes with_length(const Frame& frame, const LengthField& f, int delta) {
  Bytes b = frame.bytes;
  uint32_t v = 0;
  for (uint32_t i = 0; i < f.width; ++i) v = v << 8 | b[f.at + i];
  v += static_cast<uint32_t>(delta);
  for (uint32_t i = 0; i < f.width; ++i) b[f.at + i] = static_cast<uint8_t>(v >> (8 * (f.width - 1 - i)));
  return b;
}

/// @brief What the packet-processing application makes of a frame: why it is malformed or cut, and
/// the name of the record it hands to the host (DNS qname, HTTP Host, TLS SNI).
struct Verdict {
  uint32_t reason = dev::app::kReasonNone;
  uint32_t record = dev::app::kRecordNone;
  std::string name;
  uint16_t qtype = 0;
  bool response = false;
  std::string method, path;
};

inline Verdict analyze_frame(const Bytes& frame) {
  using namespace gnio::dev::app;
  const Analysis a = analyze(frame.data(), static_cast<uint32_t>(frame.size()));
  Verdict v;
  v.reason = a.reason;
  v.record = a.record;
  if (a.record == kRecordNone) return v;
  Record r{};
  fill_record(frame.data(), a, r);
  v.name.assign(r.name, r.name_len);
  v.qtype = r.qtype;
  v.response = r.response != 0;
  v.method = r.method;
  v.path.assign(r.path, r.path_len);
  return v;
}

/// @brief Writes the frames as a pcap file (Ethernet, microsecond time stamps, frame i at i seconds).
inline void write_pcap(const std::string& path, const std::vector<Bytes>& frames) {
  std::ofstream out(path, std::ios::binary);
  auto u32 = [&out](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&out](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
  u32(0xa1b2c3d4);
  u16(2);
  u16(4);
  u32(0);
  u32(0);
  u32(65535);
  u32(1);
  for (size_t i = 0; i < frames.size(); ++i) {
    u32(static_cast<uint32_t>(i));
    u32(0);
    u32(static_cast<uint32_t>(frames[i].size()));
    u32(static_cast<uint32_t>(frames[i].size()));
    out.write(reinterpret_cast<const char*>(frames[i].data()), static_cast<std::streamsize>(frames[i].size()));
  }
}

}  // namespace gnio::test
